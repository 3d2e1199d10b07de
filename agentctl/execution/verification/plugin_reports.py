"""What agentctl's own plugins wrote inside the runner (the pytest report plugin, the unittest
hook), read through descriptors agentctl opened before the run.

Both plugins append to a file agentctl created and keeps open: a start mark when they begin,
their results and an end mark when they finish. A project that deletes or replaces the path
changes nothing agentctl reads; one that ends its process early leaves a start without an end;
whatever the plugins found changed in the runner's reporting functions is in the report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentctl.domain.enums import TestOutcome
from agentctl.domain.runner_summary import NOT_LOADED, ReportState
from agentctl.domain.verification import TestResult
from agentctl.execution.verification import unittest_report
from agentctl.execution.verification.pytest_plugins import END_MARK, START_MARK
from agentctl.execution.verification.report_formats import MAX_REPORT_BYTES, first_assertion

UNITTEST_LOG = "unittest.tsv"
_OUTCOMES = {outcome.value: outcome for outcome in TestOutcome}


@dataclass(frozen=True, slots=True)
class PytestRun:
    """What the pytest report plugin wrote: its `state` (loaded, finished, runner changed), how
    many pytest `sessions` reported, their results and their in-process reruns by node id."""

    state: ReportState = NOT_LOADED
    sessions: int = 0
    results: tuple[TestResult, ...] = ()
    reran: Mapping[str, tuple[TestOutcome, ...]] = field(default_factory=dict)

    @property
    def trusted(self) -> bool:
        return self.state.ended and not self.state.tampered


@dataclass(frozen=True, slots=True)
class UnittestHookRun:
    """What the unittest hook of every process that recorded a test wrote: its results, and
    its in-process reruns of failing tests by test id."""

    state: ReportState = NOT_LOADED
    results: tuple[TestResult, ...] = ()
    reran: Mapping[str, tuple[TestOutcome, ...]] = field(default_factory=dict)

    @property
    def trusted(self) -> bool:
        return self.state.ended and not self.state.tampered


class HeldFile:
    """agentctl's own descriptor on a report file, opened (and emptied) before the run."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)

    def read(self) -> bytes:
        """What was written; nothing past MAX_REPORT_BYTES (not read)."""
        try:
            size = os.fstat(self._fd).st_size
            return b"" if size > MAX_REPORT_BYTES else os.pread(self._fd, size, 0)
        except OSError:
            return b""

    def close(self) -> None:
        os.close(self._fd)


class HeldReports:
    """Both plugins' reports of one run, held open from before it starts until read."""

    def __init__(self, pytest_json: Path, unittest_log: Path) -> None:
        self._pytest = HeldFile(pytest_json)
        try:
            self._unittest = HeldFile(unittest_log)
        except OSError:
            self._pytest.close()
            raise

    def read(self) -> tuple[PytestRun, UnittestHookRun]:
        return parse_pytest_run(self._pytest.read()), parse_unittest_run(self._unittest.read())

    def close(self) -> None:
        self._pytest.close()
        self._unittest.close()


def both(first: ReportState, second: ReportState) -> ReportState:
    """The plugins' states together: unfinished if either began and did not end."""
    return ReportState(
        started=first.started or second.started,
        ended=(first.ended or not first.started) and (second.ended or not second.started),
        tampered=tuple(dict.fromkeys((*first.tampered, *second.tampered))))


def read_pytest_run(path: Path) -> PytestRun:
    """The pytest plugin's report at `path` (a run agentctl did not hold open: a benchmark)."""
    return parse_pytest_run(_bounded(path))


def read_unittest_run(path: Path) -> UnittestHookRun:
    return parse_unittest_run(_bounded(path))


def _bounded(path: Path) -> bytes:
    try:
        return b"" if path.stat().st_size > MAX_REPORT_BYTES else path.read_bytes()
    except OSError:
        return b""


def parse_pytest_run(data: bytes) -> PytestRun:
    """Each pytest session that loaded the plugin appends a start mark, then (at its end) one
    JSON line of results and an end mark; a session without its end mark ended early."""
    starts = ends = sessions = 0
    results: dict[str, TestResult] = {}
    reran: dict[str, tuple[TestOutcome, ...]] = {}
    tampered: list[str] = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line == START_MARK:
            starts += 1
        elif line == END_MARK:
            ends += 1
        elif line.startswith("{"):
            try:
                payload = json.loads(line)
            except ValueError:
                continue
            if not isinstance(payload, dict):
                continue
            sessions += 1 if payload.get("session", True) else 0
            tampered += [str(name) for name in payload.get("tampered") or ()]
            _add_rows(payload.get("results") or (), results, reran)
    state = ReportState(started=starts > 0, ended=starts > 0 and ends >= starts,
                        tampered=tuple(dict.fromkeys(tampered)))
    return PytestRun(state=state, sessions=sessions, results=tuple(results.values()),
                     reran=reran)


def _add_rows(rows: Iterable[object], results: dict[str, TestResult],
              reran: dict[str, tuple[TestOutcome, ...]]) -> None:
    for row in rows:
        if not isinstance(row, list) or len(row) < 3:
            continue
        nodeid, outcome, message = str(row[0]), row[1], row[2]
        try:
            seconds = row[4] if len(row) > 4 and isinstance(row[4], (int, float)) else None
            results.setdefault(nodeid, TestResult(
                test_id=nodeid, outcome=TestOutcome(outcome),
                message=first_assertion(str(message)) if message else None,
                duration_seconds=float(seconds) if seconds is not None else None))
            if len(row) > 3 and row[3]:
                reran[nodeid] = tuple(TestOutcome(o) for o in row[3])
        except (TypeError, ValueError):
            continue


def parse_unittest_run(data: bytes) -> UnittestHookRun:
    """The hook's lines: a start and an end mark per process (by pid), each test's outcome, id,
    message and seconds (none in a line written before durations were), each rerun test's id and outcomes, and what changed; a line that is none of
    these is skipped."""
    started: set[str] = set()
    ended: set[str] = set()
    tampered: list[str] = []
    results: list[TestResult] = []
    reran: dict[str, tuple[TestOutcome, ...]] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        kind, _, rest = line.partition("\t")
        if kind == unittest_report.START_MARK:
            started.add(rest)
        elif kind == unittest_report.END_MARK:
            ended.add(rest)
        elif kind == unittest_report.TAMPERED_MARK:
            tampered.append(rest)
        elif kind == unittest_report.RERAN_MARK:
            test_id, *outcomes = rest.split("\t")
            if test_id and outcomes and all(o in _OUTCOMES for o in outcomes):
                reran[test_id] = tuple(_OUTCOMES[o] for o in outcomes)
        elif kind in _OUTCOMES:
            test_id, _, rest = rest.partition("\t")
            message, _, seconds = rest.partition("\t")
            if test_id:
                results.append(TestResult(test_id=test_id, outcome=_OUTCOMES[kind],
                                          message=message or None,
                                          duration_seconds=_seconds(seconds)))
    state = ReportState(started=bool(started), ended=bool(started) and started <= ended,
                        tampered=tuple(dict.fromkeys(tampered)))
    return UnittestHookRun(state=state, results=tuple(results), reran=reran)


def _seconds(text: str) -> float | None:
    try:
        seconds = float(text) if text else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < float("inf") else None
