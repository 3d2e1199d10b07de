"""The quicker `__init__` of the hot records builds the same record as the dataclass's own:
same signature and defaults, fresh default factories, `__post_init__` checks, still frozen."""

from __future__ import annotations

import inspect
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from agentctl._speedups.fast_init import fast_init
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import StepStatus, StepType
from agentctl.domain.errors import InvariantViolation
from agentctl.domain.step import Step


def _record(*, quick: bool) -> Any:
    """One record, with the dataclass's own `__init__` or with the quicker one."""
    @dataclass(frozen=True, slots=True)
    class Record:
        a: int
        b: str = "b"
        c: list[int] = field(default_factory=list)
        d: int = field(default=4, kw_only=True)
        e: int = field(default=5, kw_only=True)

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a must not be negative")

    return fast_init(Record) if quick else Record


Plain, Quick = _record(quick=False), _record(quick=True)


def test_the_quick_init_takes_and_sets_what_the_generated_one_does() -> None:
    assert inspect.signature(Quick).parameters.keys() == \
        inspect.signature(Plain).parameters.keys()
    for args, kwargs in [((1,), {}), ((1, "x", [2]), {"e": 6}), ((), {"a": 2, "d": 0})]:
        quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)
        assert (quick.a, quick.b, quick.c, quick.d, quick.e) == \
            (plain.a, plain.b, plain.c, plain.d, plain.e)
    assert Quick(1).c is not Quick(1).c  # a fresh default each time
    with pytest.raises(TypeError):
        Quick(1, "x", [], 4)  # d is keyword-only
    with pytest.raises(ValueError, match="negative"):
        Quick(-1)
    with pytest.raises(FrozenInstanceError):
        Quick(1).a = 2


def test_a_step_built_quickly_is_still_checked_and_frozen() -> None:
    now = utcnow()
    step = Step(step_id="step_1", run_id="run_1", attempt_id="attempt_1", sequence_number=1,
                type=StepType.TOOL_CALL, status=StepStatus.SUCCEEDED, title="fs.write",
                started_at=now, tool_call_id="toolcall_1")
    assert step.attributes == {} and step.artifacts == () and step.ended_at is None
    with pytest.raises(InvariantViolation, match="must reference its ToolCall"):
        Step(step_id="step_2", run_id="run_1", attempt_id="attempt_1", sequence_number=1,
             type=StepType.TOOL_CALL, status=StepStatus.SUCCEEDED, title="fs.write",
             started_at=now)
    with pytest.raises(FrozenInstanceError):
        step.title = "edited"


def test_only_frozen_slotted_dataclasses_are_accepted() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    with pytest.raises(TypeError, match="not a slot"):
        fast_init(NoSlots)
    with pytest.raises(TypeError, match="not a frozen dataclass"):
        fast_init(dict)
