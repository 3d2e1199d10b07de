"""When the patch has a test side: each of its sides runs beside the other's base.

The patch is hostile input, its tests and configuration included: a `conftest.py` can report
every test passed, a new `pytest.toml` can deselect the broken one, an edited expectation can
match the bug. So the verdict never rests on a run whose tests are the patch's alone. Two more
trees, each a fresh checkout of the base commit with one side of the patch applied by git:

- *fix evidence*, the base's code under the patch's tests: a test counts as FAIL_TO_PASS only
  if it fails here (the same test file) and passes with the whole patch;
- *regression evidence*, the patch's code under the base's tests: a test that passed on the
  base and fails here is PASS_TO_FAIL, however the patch renamed, skipped, edited or
  deselected its own copy.

A patch without a test side adds no run: the base's run is its fix evidence, and its tests are
the base's. A task that supplies a test patch (SWE-bench's `test_patch`) always gets both trees,
with its test patch in place of the patch's test side in the first and over the patch's code in
the second: the tests it touches are judged there, never in the agent's version of them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.baseline import Observed, SideRuns, baseline_wanted
from agentctl.domain.enums import ChangeType, StepType, VerificationCheckStatus
from agentctl.domain.findings import DiffLine
from agentctl.domain.patch import Patch
from agentctl.domain.test_side import (
    PYTEST_CONFIGS,
    TEST_TABLES,
    FileTexts,
    SideRule,
    pytest_discovery,
    side_rule,
    split_patch,
)
from agentctl.domain.unittest_discovery import discover_in
from agentctl.execution.verification.test_patch import patch_paths
from agentctl.execution.workspaces.workspace import (
    base_texts,
    checkout_with,
    side_diff,
    texts_of,
)
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.baseline import CheckRun
from agentctl.services.attempts.comparison_runs import EarlyRun, run_for_comparison, run_on

C = VerificationCheckStatus
FIX = "fix evidence"
REGRESSION = "regression evidence"
_NOTED = 20  # test-side paths named on the step; the rest counted
_MAKE_ROUNDS = 4  # reads of the base's Makefiles at most (each `include` or `make -C` level)


@dataclass(frozen=True, slots=True)
class EvidenceTrees:
    """The two trees, and the base's test files the patch changed (paths and, for unittest
    ids, dotted module names)."""

    fix: Path
    regression: Path
    changed: frozenset[str]
    supplied: frozenset[str] = frozenset()  # the task's test patch's files (and modules)


def run_side_rule(ctx: AttemptContext) -> SideRule:
    """The run's test-side rule, read once from the base (never the patch: a patch that edits
    `python_files` moves no file across), the spec's frozen rule and its verify commands. The
    verified tree's checkout must be there (its git reads the base)."""
    plan, base = ctx.spec.verification_plan, ctx.spec.base_commit
    discovery = pytest_discovery(base_texts(ctx.dirs, base, tuple(PYTEST_CONFIGS)))
    markers = discovery.package_markers()
    packages = {marker.rsplit("/", 1)[0]
                for marker in (base_texts(ctx.dirs, base, markers) if markers else ())}
    commands = tuple(c.command for c in plan.checks)
    return side_rule(plan.test_paths, discovery, packages, commands,
                     _base_makefiles(ctx, commands))


def _base_makefiles(ctx: AttemptContext, commands: Sequence[str]) -> dict[str, str | None]:
    """The base's Makefiles the verify commands' `make` calls read (None: the base has no
    such file), a round of reads for each level of `include` or `make -C` they reach."""
    found: dict[str, str | None] = {}
    for _ in range(_MAKE_ROUNDS):
        wanted = [p for p in discover_in(commands, found).wanted if p not in found]
        if not wanted:
            break
        texts = base_texts(ctx.dirs, ctx.spec.base_commit, wanted)
        found.update({path: texts.get(path) for path in wanted})
    return found


def evidence_trees(ctx: AttemptContext, patch: Patch, diff_lines: Sequence[DiffLine],
                   rule: SideRule) -> EvidenceTrees | None:
    """Both trees, made from the verified tree's index before any check runs there; None when
    the patch has no test side or no base is ever compared."""
    plan = ctx.spec.verification_plan
    supplied = plan.test_patch
    if not (plan.test_paths or supplied) or not baseline_wanted(
            plan.baseline, ctx.spec.task_type, [], must_pass=True):
        return None
    base = ctx.spec.base_commit
    sides = split_patch(patch.file_changes, diff_lines, rule.paths, _tabled(ctx, patch))
    if not sides.has_test_side and not supplied:
        return None
    with ctx.step(StepType.APPLY_PATCH, "apply each side of the patch to a fresh checkout of "
                  f"{base[:12]}", live=True) as step:
        given: tuple[str, ...] = ()
        if supplied:  # in place of the patch's test side, and over its code
            given = patch_paths(supplied)
            test_diff = ctx.scratch / "test-patch.diff"
            test_diff.write_text(supplied, encoding="utf-8")
            step.note(testPatch=[ctx.redactor.clean(p) for p in given[:_NOTED]])
        else:
            test_diff = side_diff(ctx.dirs, base, sides.test, ctx.scratch / "test-side.diff")
        code = [p for p in sides.code if p not in given]  # its edits to them do not count
        code_diff = side_diff(ctx.dirs, base, code, ctx.scratch / "code-side.diff")
        fix = checkout_with(ctx.dirs, base, (test_diff,), ctx.dirs.root / "fix-evidence",
                            should_stop=ctx.stop)
        regression = checkout_with(ctx.dirs, base, (code_diff, test_diff) if supplied
                                   else (code_diff,), ctx.dirs.root / "regression-evidence",
                                   should_stop=ctx.stop)
        step.note(testSide=[ctx.redactor.clean(p) for p in sides.test[:_NOTED]],
                  testSideFiles=len(sides.test), codeSideFiles=len(code),
                  fixEvidence=str(fix), regressionEvidence=str(regression))
    return EvidenceTrees(fix=fix, regression=regression, changed=_changed(patch, sides.test),
                         supplied=_modules(given))


def _tabled(ctx: AttemptContext, patch: Patch) -> dict[str, FileTexts]:
    """Each changed file with test tables (pyproject.toml), before and after the patch: where
    its changed lines lie decides its side."""
    out: dict[str, FileTexts] = {}
    for change in patch.file_changes:
        for path in change.touched_paths():
            if path.rsplit("/", 1)[-1] in TEST_TABLES and path not in out:
                out[path] = FileTexts(*texts_of(ctx.dirs, ctx.spec.base_commit, path))
    return out


def _modules(paths: Sequence[str]) -> frozenset[str]:
    """Paths, and for Python files their dotted module names (unittest's ids)."""
    return frozenset(paths) | {p[:-3].replace("/", ".") for p in paths if p.endswith(".py")}


def _changed(patch: Patch, test_side: Sequence[str]) -> frozenset[str]:
    """The base's test-side files the patch modified, deleted or moved away."""
    on_side = set(test_side)
    out: set[str] = set()
    for change in patch.file_changes:
        if change.change_type in (ChangeType.ADDED, ChangeType.COPIED):
            continue
        path = change.old_path or change.path
        if path in on_side:
            out.add(path)
            if path.endswith(".py"):
                out.add(path[:-3].replace("/", "."))
    return frozenset(out)


def side_runs(ctx: AttemptContext, runs: Sequence[CheckRun], trees: EvidenceTrees,
              evidence: list[str]) -> dict[str, SideRuns] | None:
    """Each required check that ran to an end, once in each tree, by check name; None if the
    run was stopped on the way. A run that did not end (timed out, broke) is kept with its
    status and no tests: it shows nothing either way."""
    plan = ctx.spec.verification_plan
    if not baseline_wanted(plan.baseline, ctx.spec.task_type, [r.check for r in runs],
                           must_pass=bool(plan.must_pass or plan.test_patch)):
        return {}
    out: dict[str, SideRuns] = {}
    for run in runs:
        if not run.planned.required or run.check.status not in (C.PASSED, C.FAILED):
            continue
        if ctx.stop():
            return None
        early = _both_at_once(ctx, run, trees)
        seen: dict[str, Observed] = {}
        for role, made in early.items():  # recorded in one order, however they finished
            outcome = run_for_comparison(ctx, run.planned, made.workspace, role, evidence,
                                         early=made)
            seen[role] = Observed(status=outcome.status, report=outcome.test_report
                                  if outcome.status in (C.PASSED, C.FAILED) else None)
        if ctx.stop():
            return None
        out[run.planned.name] = SideRuns(fix=seen[FIX], regression=seen[REGRESSION],
                                         changed_files=trees.changed,
                                         supplied_files=trees.supplied)
    return out


def _both_at_once(ctx: AttemptContext, run: CheckRun, trees: EvidenceTrees,
                  ) -> dict[str, EarlyRun]:
    """The check in both trees, each on a thread of its own (they share nothing), not yet
    recorded: the two runs cost one run's time where the machine has the cores."""
    made: dict[str, EarlyRun] = {}
    failed: list[BaseException] = []

    def one(role: str, tree: Path) -> None:
        try:
            made[role] = EarlyRun(tree, *run_on(ctx, run.planned, tree, role, kept=True,
                                                should_stop=ctx.stop))
        except BaseException as error:  # noqa: BLE001 - raised again on the attempt's thread
            failed.append(error)

    jobs = ((FIX, trees.fix), (REGRESSION, trees.regression))
    if not ctx.concurrent_baseline:  # one core: one after the other
        for role, tree in jobs:
            one(role, tree)
    else:
        threads = [threading.Thread(target=one, args=job, daemon=True,
                                    name=f"agentctl-{job[0].replace(' ', '-')}") for job in jobs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failed:
        raise failed[0]
    return {role: made[role] for role, _ in jobs}
