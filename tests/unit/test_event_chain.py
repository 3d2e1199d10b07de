"""The hash chain of the event log: any edit, deletion or reordering of stored rows is found."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentctl.domain.canonical import canonical_json
from agentctl.domain.enums import EventType
from agentctl.domain.events import (
    GENESIS_HASH,
    NewEvent,
    event_hash,
    find_chain_breaks,
    hash_new_event,
)

Row = tuple  # (seq, type, task, run, attempt, step, payload, created, prev_hash, hash)
T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
SEQ, TYPE, TASK, RUN, ATTEMPT, STEP, PAYLOAD, CREATED, PREV, HASH = range(10)


def chain(count: int = 6) -> tuple[list[Row], tuple[int, str]]:
    """Rows exactly as the store writes them, and the head it records."""
    rows: list[Row] = []
    prev = GENESIS_HASH
    kinds = [EventType.TASK_SUBMITTED, EventType.TASK_ACCEPTED, EventType.RUN_CREATED]
    for seq in range(1, count + 1):
        event = NewEvent(type=kinds[seq % 3], created_at=T0 + timedelta(seconds=seq),
                         task_id=f"task_{seq}", run_id=f"run_{seq}" if seq % 2 else None,
                         payload={"n": seq, "reason": "ok", "nested": {"b": 1, "a": [1, 2]}})
        payload, created, digest = hash_new_event(event, seq=seq, prev_hash=prev)
        rows.append((seq, event.type.value, event.task_id, event.run_id, None, None, payload,
                     created, prev, digest))
        prev = digest
    return rows, (count, prev)


def rehash(row: Row) -> Row:
    """What a careful forger does after editing a row: recompute its own hash."""
    digest = event_hash(seq=row[SEQ], type=row[TYPE], task_id=row[TASK], run_id=row[RUN],
                        attempt_id=row[ATTEMPT], step_id=row[STEP], payload_json=row[PAYLOAD],
                        created_at=row[CREATED], prev_hash=row[PREV])
    return (*row[:HASH], digest)


def edit(row: Row, column: int, value: object) -> Row:
    return tuple(value if index == column else item for index, item in enumerate(row))


def test_an_intact_chain_has_no_breaks() -> None:
    rows, head = chain()
    assert find_chain_breaks(rows, head) == []


def test_an_empty_log_has_no_breaks() -> None:
    assert find_chain_breaks([], None) == []


def test_the_first_event_follows_the_genesis_hash() -> None:
    rows, _ = chain(1)
    assert rows[0][PREV] == GENESIS_HASH == "0" * 64


@pytest.mark.parametrize(("column", "value"), [
    (TYPE, EventType.TASK_CANCELLED.value),
    (TASK, "task_other"),
    (RUN, "run_other"),
    (ATTEMPT, "attempt_x"),
    (STEP, "step_x"),
    (PAYLOAD, '{"n":3,"reason":"forged"}'),
    (CREATED, "2030-01-01T00:00:00.000000Z"),
], ids=["type", "task", "run", "attempt", "step", "payload", "createdAt"])
def test_editing_any_field_of_a_middle_event_breaks_the_chain_there(column: int,
                                                                     value: object) -> None:
    rows, head = chain()
    rows[2] = edit(rows[2], column, value)
    breaks = find_chain_breaks(rows, head)
    assert [(b.seq, b.problem) for b in breaks] == [(3, "content does not match its hash (edited)")]


def test_an_edited_event_with_a_recomputed_hash_breaks_the_link_to_the_next() -> None:
    rows, head = chain()
    rows[2] = rehash(edit(rows[2], PAYLOAD, '{"forged":true}'))
    breaks = find_chain_breaks(rows, head)
    assert [(b.seq, b.problem) for b in breaks] == [
        (4, "prev_hash does not match the previous event")]


def test_editing_the_last_event_is_found() -> None:
    rows, head = chain()
    rows[-1] = edit(rows[-1], PAYLOAD, "{}")
    assert [b.seq for b in find_chain_breaks(rows, head)] == [6]


def test_editing_the_last_event_and_its_hash_is_found_by_the_head() -> None:
    rows, head = chain()
    rows[-1] = rehash(edit(rows[-1], PAYLOAD, "{}"))
    breaks = find_chain_breaks(rows, head)
    assert [b.seq for b in breaks] == [6]
    assert "head" in breaks[0].problem


def test_editing_the_first_events_prev_hash_is_found() -> None:
    rows, head = chain()
    rows[0] = rehash(edit(rows[0], PREV, "f" * 64))
    breaks = find_chain_breaks(rows, head)
    assert breaks[0].seq == 1 and "prev_hash" in breaks[0].problem


def test_deleting_a_middle_event_is_found_at_the_next_one() -> None:
    rows, head = chain()
    del rows[2]
    breaks = find_chain_breaks(rows, head)
    assert [(b.seq, b.problem) for b in breaks] == [
        (4, "events 3..3 are missing"), (4, "prev_hash does not match the previous event")]


def test_deleting_several_middle_events_names_the_gap() -> None:
    rows, head = chain()
    del rows[1:4]
    assert find_chain_breaks(rows, head)[0].problem == "events 2..4 are missing"


def test_deleting_the_first_event_is_found() -> None:
    rows, head = chain()
    del rows[0]
    assert find_chain_breaks(rows, head)[0].seq == 2


@pytest.mark.parametrize("deleted", [1, 2, 6])
def test_deleting_the_last_events_is_found_by_the_head(deleted: int) -> None:
    rows, head = chain()
    del rows[-deleted:]
    breaks = find_chain_breaks(rows, head)
    assert len(breaks) == 1
    assert breaks[0].seq == 6
    assert "deleted at the end" in breaks[0].problem
    assert f"ends at event {6 - deleted}" in breaks[0].problem


def test_swapping_two_events_is_found() -> None:
    rows, head = chain()
    rows[2], rows[3] = rows[3], rows[2]
    breaks = find_chain_breaks(rows, head)
    assert breaks and breaks[0].seq == 4


def test_renumbering_events_is_found() -> None:
    rows, head = chain()
    rows = [edit(row, SEQ, row[SEQ] + 1) for row in rows]
    assert find_chain_breaks(rows, (7, head[1]))[0].seq == 2  # events 1..1 missing


def test_a_row_inserted_in_the_middle_is_found() -> None:
    rows, head = chain()
    forged = rehash((3, "TaskCancelled", "task_x", None, None, None, "{}", rows[2][CREATED],
                     rows[1][HASH], ""))
    rows.insert(2, forged)
    assert find_chain_breaks(rows, head)


def test_hash_covers_every_field() -> None:
    base = dict(seq=1, type="TaskSubmitted", task_id="t", run_id="r", attempt_id="a",
                step_id="s", payload_json="{}", created_at="2025-01-01T00:00:00.000000Z",
                prev_hash=GENESIS_HASH)
    digest = event_hash(**base)  # type: ignore[arg-type]
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert event_hash(**base) == digest  # type: ignore[arg-type]
    for key, other in [("seq", 2), ("type", "TaskAccepted"), ("task_id", "u"), ("run_id", None),
                       ("attempt_id", "b"), ("step_id", "t"), ("payload_json", '{"a":1}'),
                       ("created_at", "2025-01-01T00:00:00.000001Z"), ("prev_hash", "1" * 64)]:
        assert event_hash(**{**base, key: other}) != digest, key  # type: ignore[arg-type]


def test_fields_cannot_be_shifted_between_columns_without_changing_the_hash() -> None:
    base = dict(seq=1, type="T", attempt_id=None, step_id=None, payload_json="{}",
                created_at="x", prev_hash=GENESIS_HASH)
    assert event_hash(task_id="ab", run_id=None, **base) != event_hash(  # type: ignore[arg-type]
        task_id=None, run_id="ab", **base)


def test_an_event_payload_is_stored_as_its_canonical_json() -> None:
    event = NewEvent(type=EventType.RUN_CANCELLED, created_at=T0, payload={"by": "José", "n": 1})
    payload, _, _ = hash_new_event(event, seq=1, prev_hash=GENESIS_HASH)
    assert payload == canonical_json(event.payload) == '{"by":"José","n":1}'


def test_hash_new_event_stores_iso_time_with_z() -> None:
    event = NewEvent(type=EventType.TASK_SUBMITTED, created_at=T0, task_id="task_1")
    payload, created, digest = hash_new_event(event, seq=1, prev_hash=GENESIS_HASH)
    assert (payload, created) == ("{}", "2025-01-02T03:04:05.000000Z")
    assert digest == event_hash(seq=1, type="TaskSubmitted", task_id="task_1", run_id=None,
                                attempt_id=None, step_id=None, payload_json="{}",
                                created_at=created, prev_hash=GENESIS_HASH)
