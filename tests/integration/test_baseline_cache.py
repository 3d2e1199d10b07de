"""Baselines kept in the state home: read back exactly, missed when the key or the file differs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentctl.domain.baseline import Observed
from agentctl.domain.enums import TestOutcome, VerificationCheckStatus
from agentctl.domain.verification import TestReport, TestResult
from agentctl.services.attempts.baseline_cache import BaselineCache, BaselineEntry, baseline_key
from tests.unit.conftest import T0, sample_spec

C, T = VerificationCheckStatus, TestOutcome


def entry(key: str) -> BaselineEntry:
    observed = Observed(status=C.FAILED, report=TestReport(runner="pytest", results=(
        TestResult(test_id="t.py::a", outcome=T.FAILED, message="assert 1 == 2"),
        TestResult(test_id="t.py::b", outcome=T.PASSED))),
        rerun_statuses=(C.PASSED,), rerun_outcomes={"t.py::a": (T.PASSED,)})
    return BaselineEntry(key=key, repository="/repo", base_commit="c" * 40, command="pytest",
                         observed=observed, run_id="run_1", created_at=T0)


def test_an_entry_is_read_back_as_it_was_written(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path / "baselines")
    cache.put(entry("ab" * 32))
    assert cache.get("ab" * 32) == entry("ab" * 32)
    assert cache.get("cd" * 32) is None


def test_an_unreadable_entry_is_a_miss_not_an_error(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path)
    cache.put(entry("ab" * 32))
    (tmp_path / "ab" / f"{'ab' * 32}.json").write_text("{not json")
    assert cache.get("ab" * 32) is None


def test_the_key_changes_with_the_base_the_command_and_the_environment() -> None:
    spec = sample_spec()
    check = spec.verification_plan.checks[0]
    key = baseline_key(spec, check, {"PATH": "/bin"})
    assert key == baseline_key(spec, check, {"PATH": "/bin"})
    assert key != baseline_key(spec, check, {"PATH": "/usr/bin"})
    assert key != baseline_key(replace(spec, base_commit="d" * 40), check, {"PATH": "/bin"})
    assert key != baseline_key(spec, replace(check, command="pytest -x"), {"PATH": "/bin"})


def test_the_key_changes_with_the_sandbox_profile() -> None:
    """A tightly limited run's "failed on base" must not stand for a run with normal limits."""
    from agentctl.domain.sandbox import SandboxLimits

    spec = sample_spec()
    check = spec.verification_plan.checks[0]
    key = baseline_key(spec, check, {"PATH": "/bin"})
    for profile in (replace(spec.sandbox, network_allow=("pypi.org:443",)),
                    replace(spec.sandbox, writable=("/var/cache/build",)),
                    replace(spec.sandbox, limits=replace(SandboxLimits(), max_memory_mb=64))):
        assert key != baseline_key(replace(spec, sandbox=profile), check, {"PATH": "/bin"})
