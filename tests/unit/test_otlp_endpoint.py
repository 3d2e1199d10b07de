"""An OTLP/HTTP endpoint is an http(s) URL with a host; anything else is named for what it lacks."""

from __future__ import annotations

import pytest

from agentctl.domain.otlp_endpoint import endpoint_problem


@pytest.mark.parametrize("text", [
    "http://localhost:4318", "https://collector.example/v1/traces", "http://[::1]:4318",
    "HTTP://127.0.0.1:4318/"])
def test_an_http_url_with_a_host_is_an_endpoint(text: str) -> None:
    assert endpoint_problem(text) is None


@pytest.mark.parametrize(("text", "problem"), [
    ("", "empty"), ("not a url", "no spaces"), ("http://a\nb", "control characters"),
    ("localhost:4318", "http:// or https://"), ("ftp://host", "http:// or https://"),
    ("http://", "no host"), ("http://:4318", "no host"), ("http://host:99999", "not a URL"),
    ("http://host:x", "not a URL"), ("http://host:0", "port 0")])
def test_what_is_not_an_endpoint_is_named(text: str, problem: str) -> None:
    found = endpoint_problem(text)
    assert found is not None and problem in found
