"""Inserts held for a later unit of work (`services.unit_of_work.Pending`), already encoded.

The attempt ledger batches a busy agent's steps, tool calls and their events for up to 2,500
calls. Held as records, they are tens of thousands of live objects the cyclic collector walks
at every collection, and their survival sets off full collections of the whole heap; held as
tuples of text and numbers (the rows as inserted, the events as stored), they are not tracked
by the collector at all, and writing them is one executemany per table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from agentctl.domain.artifact import Artifact
from agentctl.domain.events import NewEvent, StoredEvent, stored_form
from agentctl.domain.step import Step, ToolCall
from agentctl.store.rows import RowMapping, Value
from agentctl.store.rows import runs as run_rows
from agentctl.store.table_shapes import SHAPES

R = TypeVar("R")


def _encoder(mapping: RowMapping[R]) -> Callable[[R], tuple[Value, ...]]:
    """A record's row in the order pending rows hold their values in: the table's own."""
    table = SHAPES[mapping.table]
    return mapping.to_values(table.columns, table.defaults)


class PendingRows:
    """Steps, tool calls and artifacts as row tuples in table column order, and events in
    their stored form; the first event stays a record, as the unit of work that writes them
    may seal its rows into it."""

    __slots__ = ("steps", "tool_calls", "artifacts", "first_event", "events")

    def __init__(self) -> None:
        self.steps: list[tuple[Value, ...]] = []
        self.tool_calls: list[tuple[Value, ...]] = []
        self.artifacts: list[tuple[Value, ...]] = []
        self.first_event: NewEvent | None = None
        self.events: list[StoredEvent] = []

    def add_steps(self, steps: Sequence[Step]) -> None:
        self.steps += map(_STEP, steps)

    def add_tool_calls(self, calls: Sequence[ToolCall]) -> None:
        self.tool_calls += map(_TOOL_CALL, calls)

    def add_call(self, step: Step, call: ToolCall, events: Sequence[NewEvent]) -> None:
        """`add_steps`, `add_tool_calls` and `append_events` of one call, without the
        sequences: a busy agent makes thousands."""
        self.steps.append(_STEP(step))
        self.tool_calls.append(_TOOL_CALL(call))
        self.append_events(events)

    def add_artifacts(self, artifacts: Sequence[Artifact]) -> None:
        self.artifacts += map(_ARTIFACT, artifacts)

    def append_events(self, events: Sequence[NewEvent]) -> None:
        if not events:
            return
        if self.first_event is None:
            self.first_event, events = events[0], events[1:]
        self.events += map(stored_form, events)


_STEP = _encoder(run_rows.STEPS)
_TOOL_CALL = _encoder(run_rows.TOOL_CALLS)
_ARTIFACT = _encoder(run_rows.ARTIFACTS)
