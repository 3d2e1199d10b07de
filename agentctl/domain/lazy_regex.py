"""Regexes compiled on their first use instead of at import, for the patterns a run seldom needs
(another test runner's output, a harness file the diff does not touch): compiling them all at
start-up costs every run a few milliseconds."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache


def lazy_regex(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A function that compiles `pattern` when first called and returns the same Pattern after."""
    return cache(lambda: re.compile(pattern, flags))
