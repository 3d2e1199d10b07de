"""After the patch's checks: rerun what failed, run the plan on the base commit where the
verdict needs it, and classify every test (FAIL_TO_PASS ... FLAKY).

The base runs on a clean checkout of the base commit in the same environment as the patch's
checks, and its result is cached in the state home, so a second run on the same base only
reads a file. Each run is one of `comparison_runs`.

Where the base is certain to be wanted (a fix, `must_pass`, `baseline = "always"`) and the
machine has the cores, the base's runs start as soon as the workspace is there, beside the
agent and the candidate's checks (`BaseBeside`): each check's first run, and where it failed
its reruns there at once. pytest reruns the base's failing tests itself, in the same process
(`reran_in_process`): a rerun then costs that test's time, not another start-up, collection
and tree. Only the processes run early: their steps, logs and connections are
recorded where the sequential order has them, so the record is the same either way. The reruns
of a test that flipped with the patch depend on the candidate's results and run after.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from agentctl.debug_log import logger
from agentctl.domain.baseline import (
    FIX_TASKS,
    NO_SIDES,
    Observed,
    SideRuns,
    baseline_wanted,
    classified,
    flips_to_check_on_base,
    reran_in_process,
)
from agentctl.domain.enums import StepType, TestOutcome, VerificationCheckStatus
from agentctl.domain.spec import ExecutionSpec, PlannedCheck
from agentctl.domain.verification import TestReport, VerificationCheck
from agentctl.execution.environment import verification_env
from agentctl.execution.git import kept_from_sweeps
from agentctl.execution.verification.verifier import CheckOutcome
from agentctl.execution.workspaces import kept_checkouts
from agentctl.execution.workspaces.base_checkouts import BaseCheckout
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.baseline_cache import BaselineCache, BaselineEntry, baseline_key
from agentctl.services.attempts.comparison_runs import (
    EarlyRun,
    in_process_reruns,
    one_process,
    rerun_selection,
    reruns_at_once,
    run_for_comparison,
    run_on,
)

C = VerificationCheckStatus
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class CheckRun:
    """One planned check as it ran on the patch."""

    planned: PlannedCheck
    check: VerificationCheck
    report: TestReport | None


class BaseBeside:
    """The base's runs of each check, on a thread of its own while the agent and the candidate's
    checks work: the checkout, then the checks in plan order, each one's first run and, where
    it failed and its runner did not rerun the failing tests itself, its reruns at once
    (`reruns_at_once`). Its processes are kept from the
    attempt's sweeps while they run; nothing is written to the ledger from here."""

    def __init__(self, ctx: AttemptContext) -> None:
        self.ctx = ctx
        self.checkout = base_checkout(ctx)
        cache = BaselineCache(ctx.baseline_cache) if ctx.baseline_cache is not None else None
        env = verification_env(ctx.env)
        self._planned = [p for p in ctx.spec.verification_plan.checks
                         if cache is None or cache.get(baseline_key(ctx.spec, p, env)) is None]
        self._done: dict[str, EarlyRun | None] = {}
        self._reruns: dict[str, dict[int, EarlyRun]] = {}
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._work, name="agentctl-base", daemon=True)

    @classmethod
    def start(cls, ctx: AttemptContext) -> BaseBeside | None:
        """Started where it can only save time: the base is wanted whatever the candidate's
        checks do, the attempt may run two things at once, and some check's baseline is not
        cached (else it would only mount a base tree for nothing); else None."""
        plan = ctx.spec.verification_plan
        if not ctx.concurrent_baseline or not baseline_wanted(
                plan.baseline, ctx.spec.task_type, [], must_pass=bool(plan.must_pass or plan.test_patch)):
            return None
        beside = cls(ctx)
        if not beside._planned:
            return None
        if ctx.sandbox is not None:  # its networks made while it checks the base out
            ctx.sandbox.prepare_networks(networks_beside(ctx.spec))
        beside._thread.start()
        return beside

    def _stopped(self) -> bool:
        return self._closed or self.ctx.stop()

    def _work(self) -> None:
        plan = self.ctx.spec.verification_plan
        try:
            with kept_from_sweeps():  # the attempt's sweeps neither kill nor wait for its git
                workspace = self.checkout.ensure(should_stop=self._stopped)
            for planned in self._planned:
                if self._stopped():
                    break
                early = EarlyRun(workspace, *run_on(
                    self.ctx, planned, workspace, "baseline", kept=True,
                    should_stop=self._stopped, rerun_failures=plan.reruns))
                self._publish(self._done, planned.name, early)
                outcome = early.outcome
                reruns: dict[int, EarlyRun] = {}
                first = _first_run(outcome)
                if first.reruns_left(plan.reruns):
                    if self._stopped():
                        break  # none published: the sequential path makes them, or stops
                    reruns = reruns_at_once(self.ctx, planned, first, workspace,
                                            "baseline rerun", should_stop=self._stopped)
                self._publish(self._reruns, planned.name, reruns)
        except Exception as error:  # noqa: BLE001 - the sequential path runs it again and says why
            if not self._stopped():  # a failure of its own (a bug) would otherwise leave no trace
                log = logger("agentctl.baseline")
                log.warning("agentctl: the base's checks beside the patch's stopped (%s: %s); they "
                            "run after the patch's instead", type(error).__name__, error)
                log.debug("traceback", exc_info=error)
        finally:
            with self._ready:
                self._closed = True
                self._ready.notify_all()

    def _publish(self, into: dict[str, _T], name: str, made: _T) -> None:
        with self._ready:
            into[name] = made
            self._ready.notify_all()

    def _wait_for(self, into: dict[str, _T], name: str) -> _T | None:
        with self._ready:
            while name not in into and not self._closed:
                self._ready.wait()
            return into.pop(name, None)

    def take(self, planned: PlannedCheck) -> EarlyRun | None:
        """Its first run of `planned` once made; None if it was not (failed, stopped, cached)."""
        return self._wait_for(self._done, planned.name)

    def reruns(self, planned: PlannedCheck) -> dict[int, EarlyRun] | None:
        """Its reruns of `planned` (after its first run failed) once made, by rerun number;
        None if it did not get to them (stopped), {} if it made none."""
        return self._wait_for(self._reruns, planned.name)

    def finish(self) -> None:
        """Wait for what it still runs (a later check's runs), without stopping it: nothing
        else may run in its checkout meanwhile."""
        self._thread.join()

    def close(self) -> None:
        """Stop what is still running and wait for it (the attempt ends, or was stopped)."""
        with self._ready:
            self._closed = True
        if self._thread.is_alive():
            self._thread.join()


def networks_beside(spec: ExecutionSpec) -> int:
    """How many of the attempt's checks may each want a network at once while the base runs
    beside them: the candidate's and the base's; where the base is expected to fail (a fix, or
    tests that must pass) its reruns, made at once as soon as its first run has failed, beside
    the candidate's check, which is still running. Those are made ahead with the others: one
    made when the first run fails would hold up a rerun."""
    plan = spec.verification_plan
    if spec.task_type in FIX_TASKS or plan.must_pass:
        return 1 + max(1, plan.reruns)
    return 2


def base_checkout(ctx: AttemptContext) -> BaseCheckout:
    return BaseCheckout(ctx.dirs, ctx.spec.repository, ctx.spec.base_commit,
                        root=ctx.baseline_cache / kept_checkouts.FOLDER if ctx.baseline_cache
                        else None)


def compare_with_base(ctx: AttemptContext, runs: list[CheckRun],
                      beside: BaseBeside | None = None,
                      sides: Mapping[str, SideRuns] | None = None,
                      ) -> tuple[list[VerificationCheck], list[str]] | None:
    """The checks with their classes, and the logs of reruns and of the base as evidence;
    None when the run was stopped on the way. `beside`: the base's first runs, made already;
    `sides`: each check's runs of the patch's sides beside the base's (`sides`)."""
    plan = ctx.spec.verification_plan
    evidence: list[str] = []
    candidates: list[Observed] = []
    for run in runs:
        observed = Observed(status=run.check.status, report=run.report)
        if run.check.status is C.FAILED and plan.reruns:
            observed = _rerun(ctx, run.planned, observed, ctx.dirs.verify, "rerun", evidence)
        candidates.append(observed)
        if ctx.stop():
            return None
    base_commit = ctx.spec.base_commit
    if not baseline_wanted(plan.baseline, ctx.spec.task_type, [r.check for r in runs],
                           must_pass=bool(plan.must_pass or plan.test_patch)):
        return [_clean(ctx, classified(r.check, c, None, None, None))
                for r, c in zip(runs, candidates, strict=True)], evidence
    checks: list[VerificationCheck] = []
    checkout = beside.checkout if beside is not None else base_checkout(ctx)
    try:
        for run, candidate in zip(runs, candidates, strict=True):
            if ctx.stop():
                return None
            base, cached = _baseline(ctx, run.planned, checkout, evidence, beside)
            blame = plan.blame_runs
            if base is not None and beside and flips_to_check_on_base(candidate, base,
                                                                      blame_runs=blame):
                beside.finish()  # no run of a later check beside these, in the same tree
            if base is not None:
                base = _rerun_flips_on_base(ctx, run.planned, candidate, base, checkout,
                                            evidence)
            checks.append(_clean(ctx, classified(
                run.check, candidate, base, base_commit, cached,
                (sides or {}).get(run.planned.name, NO_SIDES), blame_runs=blame)))
    finally:
        if beside is not None:  # nothing of it runs in the checkout any more
            beside.close()
        checkout.release()
    return checks, evidence


def _baseline(ctx: AttemptContext, planned: PlannedCheck, checkout: BaseCheckout,
              evidence: list[str], beside: BaseBeside | None) -> tuple[Observed | None, bool]:
    """The check on the base commit: from the cache, else run (and rerun) there and kept."""
    env = verification_env(ctx.env)
    key = baseline_key(ctx.spec, planned, env)
    cache = BaselineCache(ctx.baseline_cache) if ctx.baseline_cache is not None else None
    entry = cache.get(key) if cache is not None else None
    if entry is not None:
        with ctx.step(StepType.RUN_VERIFIER, f"baseline: {planned.name} (cached)") as step:
            step.note(command=planned.command, baseline=True, cached=True, cacheKey=key,
                      status=entry.observed.status.value, paidByRun=entry.run_id)
        return entry.observed, True
    plan = ctx.spec.verification_plan
    early = beside.take(planned) if beside is not None else None
    outcome = run_for_comparison(ctx, planned, None, "baseline", evidence, checkout=checkout,
                                 early=early, rerun_failures=plan.reruns)
    workspace = checkout.ensure()
    if outcome.status not in (C.PASSED, C.FAILED):
        return None, False  # a base that timed out or broke says nothing about the patch
    observed = _first_run(outcome)
    if observed.reruns_left(plan.reruns):
        made = beside.reruns(planned) if beside is not None and early is not None else None
        observed = _rerun(ctx, planned, observed, workspace, "baseline rerun", evidence,
                          fresh_trees=ctx.concurrent_baseline, made=made)
    if cache is not None and not ctx.stop():
        cache.put(BaselineEntry(key=key, repository=ctx.spec.repository,
                                base_commit=ctx.spec.base_commit, command=planned.command,
                                observed=observed, run_id=ctx.ledger.lease.run_id,
                                created_at=ctx.ledger.now()))
    return observed, False




def _rerun_flips_on_base(ctx: AttemptContext, planned: PlannedCheck, candidate: Observed,
                         base: Observed, checkout: BaseCheckout,
                         evidence: list[str]) -> Observed:
    """Rerun on the base the tests that changed result with the patch but passed there once:
    a test is FLAKY only if it changes result on the base too, else the patch made it flaky
    (PASS_TO_FLAKY). Only those tests run again, in the attempt's base checkout (the one kept
    beside the cached baselines when the baseline itself came from there)."""
    plan = ctx.spec.verification_plan
    flips = list(flips_to_check_on_base(candidate, base, blame_runs=plan.blame_runs))
    if not flips:
        return base
    outcomes = {t: list(base.rerun_outcomes.get(t, ())) for t in flips}
    select = rerun_selection(candidate.report, flips)
    # enough clean runs to blame the patch: as many as it took to flip, and `blame_runs`
    for number in range(1, max(plan.reruns, plan.blame_runs) + 1):
        if ctx.stop():
            break
        outcome = run_for_comparison(ctx, planned, None, "baseline flake rerun", evidence,
                                     select=select, checkout=checkout, number=number)
        for test_id in flips:
            seen = outcome.test_report.outcome_of(test_id) if outcome.test_report else None
            if seen is not None:
                outcomes[test_id].append(seen)
        if all(any(o in (TestOutcome.FAILED, TestOutcome.ERROR) for o in outcomes[t])
               for t in flips):
            break  # each one flipped on the base too: no more runs can change that
    return replace(base, rerun_outcomes={**base.rerun_outcomes,
                                         **{t: tuple(o) for t, o in outcomes.items()}})


def _first_run(outcome: CheckOutcome) -> Observed:
    """A check's first run on the base, with what its runner reran in process."""
    return reran_in_process(Observed(status=outcome.status, report=outcome.test_report),
                            outcome.reran)


def _rerun(ctx: AttemptContext, planned: PlannedCheck, observed: Observed, workspace: Path,
           role: str, evidence: list[str], *, fresh_trees: bool = False,
           made: dict[int, EarlyRun] | None = None) -> Observed:
    """Run the failing tests no rerun has seen yet (or the check, where its runner names no
    test) again until each passed once or ran `reruns` times more. Named tests run in one
    process, which reruns what still fails itself (`in_process_reruns`); another follows only
    for what it did not rerun. A failure to load tests (a module that cannot import) is never
    rerun: it is not flaky.
    `fresh_trees` (the base, with cores for it): whole-command reruns start at once, the later
    ones each in a fresh checkout of the base (`reruns_at_once`), unless `made` already (beside
    the candidate's checks), and are recorded as the sequential order has them; a run made
    past the point where that order stops is dropped unrecorded."""
    reruns = ctx.spec.verification_plan.reruns
    if not observed.reruns_left(reruns):
        return observed
    statuses: list[VerificationCheckStatus] = []
    outcomes = {t: list(seen) for t, seen in observed.rerun_outcomes.items()}
    waiting = list(observed.not_rerun)
    first = rerun_selection(observed.report, waiting)
    early = made if made is not None else reruns_at_once(
        ctx, planned, observed, workspace, role, should_stop=ctx.stop) \
        if fresh_trees and reruns > 1 and not one_process(planned, first) else {}
    for number in range(1, reruns + 1):
        if ctx.stop():
            break
        select = rerun_selection(observed.report, waiting)
        run = early.get(number) if select == first else None  # ran what is asked
        outcome = run_for_comparison(
            ctx, planned, run.workspace if run else workspace, role, evidence, select=select,
            number=number, early=run,
            rerun_failures=in_process_reruns(reruns, number) if select.only else 0)
        statuses.append(outcome.status)
        if not waiting:
            if outcome.status is C.PASSED:
                break
            continue
        for test_id in waiting:
            seen = outcome.test_report.outcome_of(test_id) if outcome.test_report else None
            if seen is not None:
                outcomes.setdefault(test_id, []).append(seen)
                outcomes[test_id] += outcome.reran.get(test_id, ())
        waiting = [t for t in waiting if len(outcomes.get(t, ())) < reruns and
                   outcomes.get(t, [None])[-1] not in (TestOutcome.PASSED, TestOutcome.SKIPPED)]
        if not waiting:
            break
    return replace(observed, rerun_statuses=tuple(statuses),
                   rerun_outcomes={t: tuple(o) for t, o in outcomes.items()})


def _clean(ctx: AttemptContext, check: VerificationCheck) -> VerificationCheck:
    """Test ids and messages come from the code under test: redacted like any output."""
    clean = ctx.redactor.clean
    return replace(check, classified_tests=tuple(
        replace(t, test_id=clean(t.test_id), message=clean(t.message) if t.message else None)
        for t in check.classified_tests))
