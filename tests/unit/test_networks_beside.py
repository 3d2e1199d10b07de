"""How many networks an attempt asks for ahead when the base runs beside the candidate."""

from __future__ import annotations

from dataclasses import replace

from agentctl.domain.enums import TaskType
from agentctl.services.attempts.baseline import networks_beside
from tests.unit.conftest import sample_spec


def test_a_fix_has_a_network_ahead_for_each_of_its_base_reruns_at_once() -> None:
    """A fix's tests fail on the base: its reruns there run at once beside the candidate's
    check, each in a network of its own, all made ahead."""
    spec = replace(sample_spec(), task_type=TaskType.BUG_FIX)
    assert networks_beside(spec) == 3
    plan = spec.verification_plan
    assert networks_beside(replace(spec, verification_plan=replace(plan, reruns=4))) == 5
    assert networks_beside(replace(spec, verification_plan=replace(plan, reruns=0))) == 2


def test_tests_that_must_pass_count_as_failing_on_the_base_too() -> None:
    spec = sample_spec()
    plan = replace(spec.verification_plan, must_pass=("tests/test_a.py::test_a",))
    assert networks_beside(replace(spec, verification_plan=plan)) == 3


def test_a_base_not_expected_to_fail_gets_the_candidates_network_and_its_own() -> None:
    assert sample_spec().task_type is TaskType.DEPENDENCY_UPGRADE
    assert networks_beside(sample_spec()) == 2
