"""Tests grouped by their class against the base, failures first, as every screen shows them
(`verdict explain`, `run show --tree`, the run page): what the patch broke, then what stays
broken, then what it fixed; a class added later after those, PASS_TO_PASS last."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Document = dict[str, Any]
STYLE = {"FAIL_TO_PASS": "green", "PASS_TO_PASS": "dim", "PASS_TO_FAIL": "red",
         "FAIL_TO_FAIL": "yellow", "FLAKY": "magenta", "PASS_TO_MISSING": "red",
         "PASS_TO_FLAKY": "red"}  # Rich styles, by class
ORDER = ("PASS_TO_FAIL", "PASS_TO_MISSING", "PASS_TO_FLAKY", "FAIL_TO_FAIL", "FLAKY",
         "FAIL_TO_PASS")


def by_class(tests: Iterable[Document]) -> list[tuple[str, list[Document]]]:
    """The classified tests' documents by class, in ORDER, each class's tests as recorded."""
    groups: dict[str, list[Document]] = {}
    for test in tests:
        groups.setdefault(test["classification"], []).append(test)
    return [(name, groups[name]) for name in sorted(groups, key=_rank)]


def _rank(name: str) -> tuple[int, str]:
    if name == "PASS_TO_PASS":
        return len(ORDER) + 1, name
    return (ORDER.index(name) if name in ORDER else len(ORDER)), name
