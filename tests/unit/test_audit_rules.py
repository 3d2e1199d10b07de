"""The pure rules `audit verify` applies: the signed checkpoint's states, records against the
claims their events make, and run endings against their RunCompleted events."""

from __future__ import annotations

import pytest

from agentctl.domain.audit import (
    CheckpointState,
    Claim,
    checkpoint_problem,
    checkpoint_state,
    claims_of,
    run_status_problems,
    sign,
    unmatched,
)

KEY = b"k" * 32
S = CheckpointState


@pytest.mark.parametrize(("key", "signed", "stored", "head", "state"), [
    (KEY, None, None, 0, S.EMPTY),
    (KEY, None, None, 5, S.UNSIGNED),
    (None, None, None, 5, S.UNSIGNED),
    (None, sign(KEY, 5, "h5"), "h5", 5, S.KEY_GONE),
    (b"x" * 32, sign(KEY, 5, "h5"), "h5", 5, S.FORGED),
    (KEY, sign(KEY, 5, "h5"), None, 3, S.TRUNCATED),
    (KEY, sign(KEY, 5, "h5"), "other", 7, S.REWRITTEN),
    (KEY, sign(KEY, 5, "h5"), "h5", 5, S.VERIFIED),
    (KEY, sign(KEY, 5, "h5"), "h5", 9, S.VERIFIED),  # later events are not yet checkpointed
], ids=["empty", "unsigned", "no-key-no-checkpoint", "key-gone", "forged", "truncated",
        "rewritten", "verified", "verified-behind"])
def test_checkpoint_states(key, signed, stored, head, state) -> None:  # type: ignore[no-untyped-def]
    assert checkpoint_state(key, signed, stored, head) is state
    problem = checkpoint_problem(state, signed, head)
    assert (problem is None) is state.sound


def test_a_checkpoint_with_an_edited_seq_does_not_verify() -> None:
    signed = sign(KEY, 5, "h5")
    moved = type(signed)(seq=4, hash=signed.hash, mac=signed.mac)
    assert checkpoint_state(KEY, moved, "h5", 5) is S.FORGED


def test_records_against_claims() -> None:
    records = {("verdict", "v1"): "d1", ("verdict", "v2"): "edited", ("patch", "p1"): "d3"}
    claims = [Claim("verdict", "v1", "d1"), Claim("verdict", "v2", "d2"),
              Claim("artifact", "a1", "d4"), Claim("patch", "p1", None)]
    problems = {p.what: p.detail for p in unmatched(records, claims, {("artifact", "a1"): "x.log"})}
    assert problems == {"verdict v2": "its content does not match the event that created it "
                                      "(edited)",
                        "artifact a1 (x.log)": "an event records it, but it is gone"}


def test_a_record_no_event_created_is_a_problem() -> None:
    (problem,) = unmatched({("approval", "ap1"): "d"}, [])
    assert problem.detail == "no event records its creation"


def test_the_last_claim_on_a_record_wins() -> None:
    claims = list(claims_of("ToolCallRequested", {"toolCallId": "t1"}))
    claims += claims_of("ToolCallCompleted", {"toolCallId": "t1", "toolCallDigest": "d"})
    assert unmatched({("tool call", "t1"): "other"}, claims) != []
    assert unmatched({("tool call", "t1"): "d"}, claims) == []


def test_artifact_digests_are_claims() -> None:
    claims = list(claims_of("StepCompleted", {"artifactDigests": {"a1": "d1", "a2": "d2"}}))
    assert claims == [Claim("artifact", "a1", "d1"), Claim("artifact", "a2", "d2")]


def test_run_endings_against_their_events() -> None:
    terminal = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
    problems = run_status_problems(
        {"r1": "COMPLETED", "r2": "FAILED", "r3": "COMPLETED", "r4": "RUNNING_AGENT"},
        {"r1": "COMPLETED", "r2": "COMPLETED"}, terminal)
    assert [p.what for p in problems] == ["run r2", "run r3"]
    assert "says COMPLETED" in problems[0].detail
    assert "no RunCompleted event" in problems[1].detail
