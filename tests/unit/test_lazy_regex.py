"""`lazy_regex`: a pattern compiled at its first use, then the same Pattern every time."""

from __future__ import annotations

import re

import pytest

from agentctl.domain.lazy_regex import lazy_regex


def test_a_lazy_regex_is_compiled_at_its_first_call_not_when_it_is_declared() -> None:
    broken = lazy_regex("(unclosed")  # compiling now would raise
    with pytest.raises(re.error):
        broken()


def test_a_lazy_regex_compiles_once_with_its_flags_and_returns_the_same_pattern() -> None:
    errorish = lazy_regex(r"error|failed", re.IGNORECASE)
    assert errorish() is errorish()
    assert errorish().search("Build FAILED") is not None
