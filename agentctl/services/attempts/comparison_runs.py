"""One run of a check for the comparison with the base: on the base, or a rerun of what failed,
as a RUN_VERIFIER step with its log; and the reruns of the base made at once, not yet recorded
(`EarlyRun`). Reruns pick out the failing tests where the runner names them (pytest node ids,
unittest ids), through a file agentctl's plugin and hook read, with the user's command
unchanged; they rerun what still fails in the same process. Other runners repeat the whole
command, each run in a tree of its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.baseline import Observed
from agentctl.domain.enums import ArtifactType, StepType
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.spec import PlannedCheck
from agentctl.domain.verification import TestReport
from agentctl.execution.environment import verification_env
from agentctl.execution.git import kept_from_sweeps
from agentctl.execution.sandboxing.sandbox import Jail
from agentctl.execution.verification.test_reports import (
    EVERY_TEST,
    ReportDir,
    Selection,
    selection,
    sets_pythonpath,
)
from agentctl.execution.verification.verifier import CheckOutcome, run_check
from agentctl.execution.workspaces.base_checkouts import BaseCheckout
from agentctl.execution.workspaces.workspace import checkout_base
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.confinement import named_paths, record_connections
from agentctl.services.attempts.evidence import log_artifact

StopCheck = Callable[[], bool]
# A rerun's step names this many of its selected tests, and how many there are: a list of
# thousands is no record.
NOTED_TESTS = 5


@dataclass(frozen=True, slots=True)
class EarlyRun:
    """A run on the base made ahead (beside the candidate's checks, or a rerun made at once),
    not yet recorded."""

    workspace: Path
    outcome: CheckOutcome
    jail: Jail | None


def reruns_at_once(ctx: AttemptContext, planned: PlannedCheck, observed: Observed,
                   workspace: Path, role: str, *, should_stop: StopCheck,
                   ) -> dict[int, EarlyRun]:
    """The reruns of the base's failing tests (those its runner did not rerun in process) made
    at once, by rerun number. Named tests where agentctl's plugins load (`one_process`): one run
    of them, which reruns what still fails in its own process (`in_process_reruns`). Else every
    rerun (of the named tests, or of the whole command), each on a thread of its own and the
    later ones each in a fresh checkout of the base (no run sees another's files: at least as
    clean as one tree used in turn); {} when a checkout cannot be made (the sequential path
    runs them and says why). Where the sequential order has narrowed the selection (a test
    passed), `baseline._rerun` runs that rerun again."""
    reruns = ctx.spec.verification_plan.reruns
    select = rerun_selection(observed.report, list(observed.not_rerun))
    if one_process(planned, select):
        return {1: EarlyRun(workspace, *run_on(
            ctx, planned, workspace, role, select=select, number=1, kept=True,
            should_stop=should_stop, rerun_failures=in_process_reruns(reruns, 1)))}
    trees = {1: workspace}
    try:
        with kept_from_sweeps():  # the attempt's sweeps neither kill nor wait for its git
            for number in range(2, reruns + 1):
                trees[number] = checkout_base(ctx.dirs, ctx.spec.base_commit,
                                              should_stop=should_stop,
                                              dest=ctx.dirs.root / f"base-rerun-{number}")
    except (InfrastructureFailure, OSError):
        return {}
    made: dict[int, EarlyRun] = {}

    def run(number: int) -> None:
        made[number] = EarlyRun(trees[number], *run_on(
            ctx, planned, trees[number], role, select=select, number=number,
            kept=True, should_stop=should_stop))

    threads = [threading.Thread(target=run, args=(n,), name=f"agentctl-rerun-{n}", daemon=True)
               for n in trees]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return made


def rerun_selection(report: TestReport | None, failing: list[str]) -> Selection:
    """How to rerun only `failing`: by id where agentctl's pytest plugin or unittest hook
    reads a selection (node ids, unittest ids); else every test (the whole command again)."""
    if report is None or not failing:
        return EVERY_TEST
    if "pytest" in report.runner:
        return selection((t.test_id for t in report.results), failing)
    if report.runner == "unittest":
        return Selection(tuple(failing))
    return EVERY_TEST


def one_process(planned: PlannedCheck, select: Selection) -> bool:
    """Whether one rerun process can make every rerun of `select`: it names tests, and the
    command lets agentctl's plugins load (one that sets PYTHONPATH itself gets pytest's own
    report, and no rerun in process)."""
    return bool(select.only) and not sets_pythonpath(planned.command)


def in_process_reruns(reruns: int, number: int) -> int:
    """How often the `number`th rerun process (of `reruns`) may rerun a test that still fails
    in it: the reruns left after it, so a runner that reruns in process needs one process."""
    return max(reruns - number, 0)


def run_for_comparison(ctx: AttemptContext, planned: PlannedCheck, workspace: Path | None,
                       role: str, evidence: list[str], *, select: Selection = EVERY_TEST,
                       checkout: BaseCheckout | None = None,
                       number: int | None = None, early: EarlyRun | None = None,
                       rerun_failures: int = 0) -> CheckOutcome:
    """One run of a check for the baseline or a rerun: a RUN_VERIFIER step with its log (the
    `number`th rerun's log says which), in `workspace`, or with `checkout` in the clean
    checkout of the base, made (or claimed) first (once per attempt) in that step; or the
    `early` run of it made beside the candidate's checks, recorded here as if made now. The
    failing tests its runner reran in the same process (`rerun_failures`) are noted on the
    step. The step notes how many tests a rerun selected and the first few."""
    title = f"{role}: {planned.name}"
    ctx.progress(f"{role}: {planned.command}" + (f" ({len(select.only)} selected tests)"
                                                 if select.only else ""))
    with ctx.step(StepType.RUN_VERIFIER, title, live=True) as step:
        step.note(command=planned.command, baseline=role.startswith("baseline"),
                  rerun=role.endswith("rerun"),
                  selected=[ctx.redactor.clean(t) for t in select.only[:NOTED_TESTS]])
        if select.only:
            step.note(selectedCount=len(select.only))
        if checkout is not None:
            workspace = early.workspace if early else checkout.ensure(should_stop=ctx.stop)
            step.note(path=str(workspace), baseCommit=ctx.spec.base_commit,
                      reusedCheckout=checkout.reused)
        assert workspace is not None, "a comparison runs in a workspace or the base checkout"
        outcome, jail = (early.outcome, early.jail) if early else run_on(
            ctx, planned, workspace, role, select=select, number=number,
            should_stop=ctx.stop, rerun_failures=rerun_failures)
        log = _log_path(ctx, planned, role, number)
        record_connections(ctx.ledger, jail, made_by=step.step.step_id,
                           process=planned.command, redactor=ctx.redactor)
        draft = log_artifact(ctx.ledger.blobs, log, name=log.name,
                             type_=ArtifactType.COMMAND_LOG, redactor=ctx.redactor,
                             redact_up_to=ctx.redact_logs_up_to,
                             metadata={"command": ctx.redactor.clean(planned.command),
                                       "role": role})
        step.add(draft)
        step.note(status=outcome.status.value, exitCode=outcome.exit_code,
                  durationSeconds=round(outcome.duration_seconds, 3))
        if outcome.reran:
            # by test id: xdist workers finish in any order, the record does not; a few of
            # them (the log lists every one)
            reran = sorted(outcome.reran.items())
            step.note(reranInProcess={ctx.redactor.clean(test_id): [o.value for o in outcomes]
                                      for test_id, outcomes in reran[:NOTED_TESTS]})
            if len(reran) > NOTED_TESTS:
                step.note(reranInProcessCount=len(reran))
        ctx.reap()
    evidence.append(draft.artifact_id)
    return outcome


def _log_path(ctx: AttemptContext, planned: PlannedCheck, role: str,
              number: int | None) -> Path:
    suffix = f"-{number}" if number is not None else ""
    return ctx.scratch / f"{planned.name}.{role.replace(' ', '-')}{suffix}.log"


def run_on(ctx: AttemptContext, planned: PlannedCheck, workspace: Path, role: str, *,
           should_stop: StopCheck, select: Selection = EVERY_TEST,
           number: int | None = None, kept: bool = False,
           rerun_failures: int = 0) -> tuple[CheckOutcome, Jail | None]:
    """The check's process alone (no step, nothing recorded): its outcome and its jail, whose
    connections are for the step to record."""
    # the same sandbox as the candidate's checks: a baseline differs in its code alone; each
    # run its own report folder (the reruns on the base run at once)
    suffix = f"-{number}" if number is not None else ""
    reports = ReportDir(ctx.scratch / "reports" / f"{planned.name}.{role}{suffix}")
    reports.path.mkdir(parents=True, exist_ok=True)
    jail = ctx.sandbox.jail(workspace, read_only=named_paths(
        planned.command, ctx.protected), writable=(reports.path,)) \
        if ctx.sandbox else None
    outcome = run_check(planned, workspace=workspace, env=verification_env(ctx.env),
                        log_path=_log_path(ctx, planned, role, number),
                        infra_patterns=ctx.spec.verification_plan.infra_patterns,
                        should_stop=should_stop, reports=reports, select=select,
                        confine=jail, kept=kept,
                        rerun_failures=rerun_failures)
    return outcome, jail
