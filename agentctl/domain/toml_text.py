"""TOML read in one place, its parser imported by the first document: a run that reads none (no
config file, no TOML task file, no pytest settings in its patch) never loads it."""

from __future__ import annotations

from typing import Any


class NotToml(ValueError):
    """The text is not TOML; the message is the parser's (what, at which line and column)."""


def parsed_toml(text: str) -> dict[str, Any]:
    """The TOML document `text` holds. NotToml when it is not TOML; RecursionError when its
    arrays or tables nest deeper than the parser goes."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise NotToml(str(error)) from None
