"""What an OTLP/HTTP endpoint must be before a trace is planned for it: an http(s) URL with a
host. Checked up front so a typo is bad input (one line, exit 2), not a send that fails and
leaves an export failure on the run's record."""

from __future__ import annotations

import urllib.parse

SCHEMES = ("http", "https")


def endpoint_problem(text: str) -> str | None:
    """Why `text` is not an OTLP/HTTP endpoint, or None when it is one."""
    if not text.strip():
        return "it is empty"
    if any(c.isspace() or not c.isprintable() for c in text):
        return "a URL has no spaces or control characters"
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as error:
        return f"not a URL ({error})"
    if parts.scheme.lower() not in SCHEMES:
        return "it needs http:// or https:// (OTLP over HTTP), e.g. http://localhost:4318"
    if not parts.hostname:
        return "it names no host, e.g. http://localhost:4318"
    if port == 0:
        return "port 0 is not a port to send to"
    return None
