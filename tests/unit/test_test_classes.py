"""The order tests are shown in by class, shared by the terminal, the page and the PR body."""

from __future__ import annotations

from agentctl.domain.enums import TestClassification
from agentctl.domain.test_classes import first_few, grouped


def test_failures_come_first_a_new_class_after_them_and_passing_tests_last() -> None:
    recorded = [("a", "PASS_TO_PASS"), ("b", "FAIL_TO_PASS"), ("c", "PASS_TO_NOWHERE"),
                ("d", "PASS_TO_FAIL"), ("e", "FAIL_TO_FAIL"), ("f", "PASS_TO_FAIL")]
    assert grouped(recorded, lambda test: test[1]) == [
        ("PASS_TO_FAIL", [("d", "PASS_TO_FAIL"), ("f", "PASS_TO_FAIL")]),
        ("FAIL_TO_FAIL", [("e", "FAIL_TO_FAIL")]), ("FAIL_TO_PASS", [("b", "FAIL_TO_PASS")]),
        ("PASS_TO_NOWHERE", [("c", "PASS_TO_NOWHERE")]), ("PASS_TO_PASS", [("a", "PASS_TO_PASS")])]


def test_every_class_has_its_place() -> None:
    order = [name for name, _ in grouped(list(TestClassification), lambda c: c.value)]
    assert order[:3] == ["PASS_TO_FAIL", "PASS_TO_MISSING", "PASS_TO_FLAKY"]
    assert order[-2:] == ["FAIL_TO_PASS", "PASS_TO_PASS"] and len(order) == len(TestClassification)


def test_the_first_few_and_how_many_more() -> None:
    names = [f"t{n}" for n in range(24)]
    assert first_few(names, 3) == (["t0", "t1", "t2"], 21)
    assert first_few(names[:2], 3) == (["t0", "t1"], 0)
