"""Tests grouped by their class against the base, failures first, as every screen and the PR
body show them: what the patch broke, then what stays broken, then what it fixed; a class added
later after those, PASS_TO_PASS last. A big result stays readable: per class a count and the
first few tests, never every one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
PASSING = "PASS_TO_PASS"
ORDER = ("PASS_TO_FAIL", "PASS_TO_MISSING", "PASS_TO_FLAKY", "FAIL_TO_FAIL", "FLAKY",
         "FAIL_TO_PASS")


def rank(name: str) -> tuple[int, str]:
    """Where a class goes: in ORDER, then any other class by name, then PASS_TO_PASS."""
    if name == PASSING:
        return len(ORDER) + 1, name
    return (ORDER.index(name) if name in ORDER else len(ORDER)), name


def grouped(items: Iterable[Item], class_of: Callable[[Item], str],
            ) -> list[tuple[str, list[Item]]]:
    """The items by class, classes by `rank`, each class's items as recorded."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(class_of(item), []).append(item)
    return [(name, groups[name]) for name in sorted(groups, key=rank)]


def first_few(names: Sequence[str], shown: int) -> tuple[list[str], int]:
    """The first `shown` names and how many more there are ("… and 21 more")."""
    return list(names[:shown]), max(0, len(names) - shown)
