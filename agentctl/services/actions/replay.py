"""`run replay`: a recorded native-agent run played again, its model answering from the record.

The new run is the same task on the same base commit with the same agent CLI, under the
original's frozen spec (or, for a what-if, a spec built from another config with the same
agent); its gateway answers from the original's `model-exchange.json` artifacts (the cassette).
Afterwards the two runs are compared: the agent's tool calls with their decisions, the model
requests, and the patch's tree id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Protocol

from agentctl.config import Config
from agentctl.domain.agent import NATIVE_KINDS
from agentctl.domain.artifact import Artifact
from agentctl.domain.cassette import Cassette, Names, Recording, attempt_names, written
from agentctl.domain.enums import StepType
from agentctl.domain.errors import BadInput
from agentctl.domain.run import Run
from agentctl.domain.step import Step
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.attempts.spec import build_spec
from agentctl.services.lifecycle.queue import Queue, QueueStore
from agentctl.services.lifecycle.runs import NewRunStore, TaskReads, queue_run
from agentctl.services.lifecycle.worker import InlineReads, InlineWork, run_inline
from agentctl.services.ports import RunRecord

EXCHANGE = "model-exchange.json"
PLAYED = "replay-cassette.json"  # what the replay's attempt made of its cassette


@dataclass(frozen=True, slots=True)
class DecisionChange:
    """A tool call the replay decided otherwise than the original."""

    step: int  # the call's place among the agent's tool calls, from 1
    tool: str
    before: str
    after: str
    rule: str | None  # the rule that decided it in the replay


@dataclass(frozen=True, slots=True)
class ReplayReport:
    run: Run  # the replay
    replay_of: str
    identical: bool
    differences: tuple[str, ...]
    decision_changes: tuple[DecisionChange, ...]
    requests_recorded: int
    requests_replayed: int


@dataclass(frozen=True, slots=True)
class _Call:
    tool: str
    arguments: str
    decision: str
    rule: str | None


class RecordReads(Protocol):
    def record(self, run_id: str) -> RunRecord: ...


class RecordedRuns(Protocol):
    """The part of the storage port a replay's cassette is read through (any `Storage` is
    one): the recorded run, nothing else."""

    def reads(self) -> AbstractContextManager[RecordReads]: ...


class ReplayReads(RecordReads, Protocol):
    def run(self, text: str | None) -> Run: ...


class ReplayedRuns(Protocol):
    """The part of the storage port comparing a replay uses: the replay and its original."""

    def reads(self) -> AbstractContextManager[ReplayReads]: ...


class OriginalReads(ReplayReads, TaskReads, Protocol):
    """The run to replay, its record and its task."""


class ReplayQueueStore(NewRunStore, Protocol):
    """The part of the storage port queueing a replay uses (any `Storage` is one)."""

    def reads(self) -> AbstractContextManager[OriginalReads]: ...


class ReplayStore(QueueStore, ReplayQueueStore, Protocol):
    """The part of the storage port `run replay` uses (any `Storage` is one): queueing the
    replay (`ReplayQueueStore`), running it here (`QueueStore`), its cassette (`RecordedRuns`)
    and the comparison (`ReplayedRuns`), which read no more than these."""

    def unit_of_work(self) -> AbstractContextManager[InlineWork]: ...
    def reads(self) -> AbstractContextManager[InlineReads]: ...


def queue_replay(storage: ReplayQueueStore, run_text: str, *, what_if: Config | None = None) -> Run:
    """A QUEUED replay of the run `run_text` (BadInput when it cannot be replayed: not a
    native agent's run, or no exchange on record); a worker plays it (`cassette_of`)."""
    with storage.reads() as reads:
        original = reads.run(run_text)
        record = reads.record(original.run_id)
        task = reads.task(original.task_id)
    spec = original.execution_spec
    if spec.agent_spec.kind not in NATIVE_KINDS:
        raise BadInput(f"run {original.run_id} ran agent {spec.agent!r}: only a claude, codex "
                       "or gemini run has its model exchanges on record to replay")
    if not _recorded(record)[0]:
        raise BadInput(f"run {original.run_id} has no recorded model exchanges "
                       f"({EXCHANGE}) to replay")
    if what_if is not None:
        spec = replace(build_spec(task, what_if, base_commit=spec.base_commit, agent=spec.agent,
                                  agent_digest=spec.agent_digest),
                       agent_settings=spec.agent_settings)
    decision: dict[str, object] = {"allowed": True,
                                   "config": str(what_if.source or "defaults") if what_if
                                   else original.policy_decision.get("config", "defaults")}
    if what_if is not None:
        decision["whatIf"] = True
    return queue_run(storage, task, spec, decision, replay_of=original.run_id)


def cassette_of(storage: RecordedRuns, run_id: str,
                read: Callable[[Artifact], bytes]) -> Cassette:
    """The recorded exchanges of run `run_id`, for one attempt of a replay to answer from."""
    with storage.reads() as reads:
        record = reads.record(run_id)
    recordings, names = _recordings(record, read)
    return Cassette(recordings, names)


def replay_run(storage: ReplayStore, config: Config, run_text: str, *,
               read: Callable[[Artifact], bytes], options: RunOptions,
               what_if: Config | None = None) -> ReplayReport:
    """Replay the run `run_text` here, until it ends, and compare the replay with it."""
    run = queue_replay(storage, run_text, what_if=what_if)
    run_inline(Queue(storage), run.run_id, ttl_seconds=config.worker.lease_ttl_seconds,
               options=replace(options, cassettes=lambda original: cassette_of(
                   storage, original, read)))
    return replay_report(storage, run.run_id, read=read)


def replay_report(storage: ReplayedRuns, run_text: str, *,
                  read: Callable[[Artifact], bytes]) -> ReplayReport:
    """How the replay `run_text` compares with the run it replays (BadInput when it is no
    replay). While it has not ended, it is compared as far as it got."""
    with storage.reads() as reads:
        replay = reads.run(run_text)
        if replay.replay_of is None:
            raise BadInput(f"run {replay.run_id} is not a replay")
        before = reads.record(replay.replay_of)
        after = reads.record(replay.run_id)
    return compare(replay.replay_of, before, after, _played(before, after, read))


@dataclass(frozen=True, slots=True)
class Played:
    """What a replay's last attempt made of its cassette (its `replay-cassette.json`)."""

    recorded: int  # model requests on record
    replayed: int  # answered from the record
    problem: str  # why a request went unanswered, if one did


def _played(before: RunRecord, after: RunRecord, read: Callable[[Artifact], bytes]) -> Played:
    kept = _last_attempt_artifacts(after, PLAYED)
    if kept:
        document = json.loads(read(kept[-1]))
        return Played(int(document.get("recorded", 0)), int(document.get("replayed", 0)),
                      str(document.get("problem") or ""))
    return Played(len(_recorded(before)[0]), 0, "")  # it ended before its agent ran


def _last_attempt_artifacts(record: RunRecord, name: str) -> list[Artifact]:
    if not record.attempts:
        return []
    last = max(record.attempts, key=lambda a: a.attempt_number).attempt_id
    return [a for a in record.artifacts if a.attempt_id == last and a.name == name]


def _recordings(record: RunRecord, read: Callable[[Artifact], bytes],
                ) -> tuple[list[Recording], Names]:
    """The exchanges of the run's last attempt that has any, in order, and how that
    attempt's requests name it (its directory and id)."""
    found, names = _recorded(record)
    return [_recording(read(a)) for a in found], names


def _recorded(record: RunRecord) -> tuple[list[Artifact], Names]:
    """The exchange artifacts of the run's last attempt that has any, unread."""
    by_step = {a.produced_by_step: a for a in record.artifacts if a.name == EXCHANGE}
    for attempt in sorted(record.attempts, key=lambda a: -a.attempt_number):
        steps = sorted((s for s in record.steps if s.attempt_id == attempt.attempt_id),
                       key=lambda s: s.sequence_number)
        found = [by_step[s.step_id] for s in steps
                 if s.type is StepType.MODEL_PLANNING and s.step_id in by_step]
        if found:
            return found, _names(steps, attempt.attempt_id)
    return [], {}


def _recording(data: bytes) -> Recording:
    document = json.loads(data)
    return Recording(path=str(document.get("path", "")), status=int(document.get("status", 200)),
                     request=document.get("request"), response=str(document.get("response", "")))


def _names(steps: Sequence[Step], attempt_id: str) -> dict[str, str]:
    """How an attempt's requests and calls name it: its directory (as PREPARE_WORKSPACE
    noted it) and its id."""
    directory = next((str(s.attributes.get("path", "")) for s in steps
                      if s.type is StepType.PREPARE_WORKSPACE), "")
    return attempt_names(directory, attempt_id)


def _calls(record: RunRecord) -> list[_Call]:
    """The agent's own tool calls of the last attempt, in order, the attempt named by its
    placeholders."""
    if not record.attempts:
        return []
    last = max(record.attempts, key=lambda a: a.attempt_number).attempt_id
    ordered = sorted((s for s in record.steps if s.attempt_id == last),
                     key=lambda s: s.sequence_number)
    names = _names(ordered, last)
    steps = {s.step_id: s.sequence_number for s in ordered}
    calls = sorted((c for c in record.tool_calls if c.step_id in steps
                    and c.tool_name != "net.connect"), key=lambda c: steps[c.step_id])
    return [_Call(c.tool_name, written(c.arguments_json, names), c.decision.value,
                  c.matched_rule) for c in calls]


def compare(original_id: str, before: RunRecord, after: RunRecord,
            played: Played) -> ReplayReport:
    """What differs between a run and its replay."""
    old_calls, new_calls = _calls(before), _calls(after)
    differences: list[str] = []
    changes: list[DecisionChange] = []
    if played.problem:
        differences.append(played.problem)
    elif played.replayed < played.recorded:
        differences.append(f"the replay made {played.replayed} of the "
                           f"{played.recorded} recorded model requests")
    for number, (old, new) in enumerate(zip(old_calls, new_calls, strict=False), start=1):
        if (old.tool, old.arguments) != (new.tool, new.arguments):
            differences.append(f"tool call {number}: {old.tool} {old.arguments} became "
                               f"{new.tool} {new.arguments}")
            break
        if (old.decision, old.rule) != (new.decision, new.rule):
            changes.append(DecisionChange(number, new.tool, old.decision, new.decision,
                                          new.rule))
            differences.append(f"tool call {number} ({new.tool}): {old.decision} "
                               f"({old.rule}) became {new.decision} ({new.rule})")
    if len(old_calls) != len(new_calls):
        differences.append(f"{len(old_calls)} tool calls recorded, {len(new_calls)} replayed")
    old_tree, new_tree = _tree(before), _tree(after)
    if old_tree != new_tree:
        differences.append(f"patch tree {old_tree or 'none'} became {new_tree or 'none'}")
    return ReplayReport(run=after.run, replay_of=original_id, identical=not differences,
                        differences=tuple(differences), decision_changes=tuple(changes),
                        requests_recorded=played.recorded,
                        requests_replayed=played.replayed)


def _tree(record: RunRecord) -> str | None:
    return record.patches[-1].tree_id if record.patches else None
