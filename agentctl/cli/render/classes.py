"""Tests grouped by their class against the base, failures first, as every screen shows them
(`verdict explain`, `run show --tree`, the run page); the order is the domain's, shared with
the PR body."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentctl.domain.test_classes import grouped

Document = dict[str, Any]
STYLE = {"FAIL_TO_PASS": "green", "PASS_TO_PASS": "dim", "PASS_TO_FAIL": "red",
         "FAIL_TO_FAIL": "yellow", "FLAKY": "magenta", "PASS_TO_MISSING": "red",
         "PASS_TO_FLAKY": "red"}  # Rich styles, by class


def by_class(tests: Iterable[Document]) -> list[tuple[str, list[Document]]]:
    """The classified tests' documents by class, failures first, each class's tests as
    recorded."""
    return grouped(tests, lambda test: str(test["classification"]))
