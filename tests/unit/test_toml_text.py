"""TOML through one door: the parser's document, or NotToml with the parser's own words."""

from __future__ import annotations

import pytest

from agentctl.domain.toml_text import NotToml, parsed_toml


def test_a_document_is_parsed() -> None:
    assert parsed_toml('[agents.fix]\nkind = "script"\n') == {"agents": {"fix": {"kind": "script"}}}


def test_text_that_is_not_toml_is_not_toml_saying_where() -> None:
    with pytest.raises(NotToml, match=r"line 2"):
        parsed_toml("a = 1\nb = \n")
    assert issubclass(NotToml, ValueError)
