"""When the patch changed the test harness: its checks again, under the base's harness files.

A `pytest.ini` that deselects the broken test, or a `conftest.py` that reports every test
passed, turns a failing patch green. Put back as they are on the base (a file the patch added
is removed), the same checks run again in the patch's verification checkout; a test that
fails there and did not fail with the patch's harness fails verification, naming the file.
"""

from __future__ import annotations

from agentctl.domain.enums import VerificationCheckStatus
from agentctl.domain.harness import HarnessChange, harness_changes
from agentctl.domain.patch import Patch
from agentctl.domain.verification import VerificationCheck
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.baseline import CheckRun
from agentctl.services.attempts.comparison_runs import run_for_comparison

C = VerificationCheckStatus
MAX_NAMED = 3


def under_base_harness(ctx: AttemptContext, patch: Patch, runs: list[CheckRun],
                       evidence: list[str]) -> list[VerificationCheck]:
    """One required check per required planned check, when the patch changed a harness file
    that can be put back: PASSED unless a test failed only with the base's harness."""
    restorable = [h for h in harness_changes(patch.file_changes, ()) if h.restorable]
    runnable = [r for r in runs if r.planned.required and r.check.status in (C.PASSED, C.FAILED)]
    if not restorable or not runnable:
        return []
    _restore(ctx, restorable)
    files = ", ".join(h.path for h in restorable)
    out: list[VerificationCheck] = []
    for run in runnable:
        if ctx.stop():
            break
        outcome = run_for_comparison(ctx, run.planned, ctx.dirs.verify, "base harness", evidence)
        before = set(run.check.failing_test_ids)
        report = outcome.test_report
        new = [r.test_id for r in report.failing if r.test_id not in before] if report else []
        hidden = bool(new) or (outcome.status is C.FAILED and run.check.status is C.PASSED
                               and (report is None or not report.failing))
        named = ", ".join(new[:MAX_NAMED]) + (f" (+{len(new) - MAX_NAMED} more)"
                                              if len(new) > MAX_NAMED else "")
        summary = (f"under the base's {files}, `{run.planned.command}` fails"
                   + (f": {named}" if named else "")
                   + f"; the patch's change to {files} hid it") if hidden else None
        out.append(VerificationCheck(
            name=f"{run.planned.name} (base harness)", command=run.planned.command,
            status=C.FAILED if hidden else C.PASSED, exit_code=outcome.exit_code,
            duration_seconds=round(outcome.duration_seconds, 3),
            log_artifact=evidence[-1] if evidence else None,
            summarized_failure=ctx.redactor.clean(summary) if summary else None, required=True,
            tests=report.counts if report else None, runner=report.runner if report else None,
            failing_test_ids=tuple(ctx.redactor.clean(t) for t in new)))
    return out


def _restore(ctx: AttemptContext, changes: list[HarnessChange]) -> None:
    """The base's copy of each harness file in the verification checkout (none where the base
    has none), read from agentctl's own git."""
    base = ctx.spec.base_commit
    root = ctx.dirs.verify.resolve()
    for change in changes:
        target = ctx.dirs.verify / change.path
        if not target.parent.resolve().is_relative_to(root):
            continue  # a link in the patched tree leads out: nothing is written through it
        if change.added:
            target.unlink(missing_ok=True)
            continue
        text = ctx.dirs.git.run("cat-file", "blob", f"{base}:{change.path}",
                                what=f"cannot read {change.path} at {base[:12]}").stdout
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
