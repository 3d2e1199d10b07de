"""final-summary.md: what a reviewer reads first. Built only from records, never from raw logs.

Recorded strings an agent chose or shaped (paths, test ids, judge messages, check failures, the
agent's error, boundary reasons) go in through `md_text`/`md_code`, so none can add a section.
"""

from __future__ import annotations

from agentctl.domain.agent_text import md_code, md_text
from agentctl.domain.ansi import strip_ansi
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.spec import ExecutionSpec
from agentctl.domain.verdict import Decision
from agentctl.domain.verification import VerificationCheck, VerificationReport


def final_summary(*, run_id: str, run_number: int, spec: ExecutionSpec, spec_digest: str,
                  patch: Patch | None,
                  verification: VerificationReport | None, judge: JudgeReport | None,
                  decision: Decision, agent_error: str | None) -> str:
    lines = [
        f"# Run {run_number}: {decision.status.value}",
        "",
        f"- run: `{run_id}`",
        f"- base: `{spec.base_ref}` at `{spec.base_commit[:12]}`",
        f"- agent: `{spec.agent}`",
        f"- spec: `{spec_digest}`",  # as stamped on the run, not recomputed
        "",
        "## Intent",
        "",
        f"{spec.task_type.value} ({spec.autonomy_level.value}): {spec.instruction}",
        "",
        "## Changes",
        "",
    ]
    if patch is None:
        why = md_text(agent_error) if agent_error else "The agent changed nothing."
        lines.append(f"No patch. {why}")
    else:
        stats = patch.stats
        lines.append(f"{stats.files_changed} file(s), +{stats.additions} / -{stats.deletions}")
        lines.append("")
        for change in patch.file_changes:
            renamed = f" (from {md_code(change.old_path)})" if change.old_path else ""
            lines.append(f"- {md_code(change.path)}{renamed}: {change.change_type.value.lower()}, "
                         f"+{change.additions} / -{change.deletions}")
        boundary = patch.boundary_check
        lines += ["", "Boundary: " + ("passed" if boundary.passed else
                                      "FAILED — " + "; ".join(map(md_text, boundary.reasons())))]
        if agent_error:
            lines += ["", f"Agent: {md_text(agent_error)}"]
    lines += ["", "## Verification", ""]
    if verification is None or not verification.checks:
        lines.append("No verification command ran.")
    else:
        for check in verification.checks:
            detail = f" — {md_text(strip_ansi(check.summarized_failure))}" \
                if check.summarized_failure else ""
            optional = "" if check.required else " (optional)"
            lines.append(f"- {md_code(check.command)}{optional}: {check.status.value.lower()}"
                         f"{detail}")
            lines += _test_lines(check)
    lines += ["", "## Judge", ""]
    if judge is None:
        lines.append("The judge did not run.")
    else:
        lines.append(f"{judge.status.value.lower()} (confidence {judge.confidence:.2f}, "
                     f"judge: {judge.judge})")
        for finding in judge.findings:
            where = f" {md_code(finding.file_path)}" if finding.file_path else ""
            lines.append(f"- {finding.severity.value}{where}: {md_text(finding.message)}")
    lines += ["", "## Verdict", "", f"**{decision.status.value}** — PR eligibility: "
              f"**{decision.pr_eligibility.value}**", ""]
    lines += [f"- {md_text(reason)}" for reason in decision.reasons]
    return "\n".join(lines) + "\n"


def _test_lines(check: VerificationCheck) -> list[str]:
    """The check's test counts and, against the base, every test that is not PASS_TO_PASS."""
    lines: list[str] = []
    if check.tests is not None:
        t = check.tests
        lines.append(f"  - tests: {t.passed} passed, {t.failed} failed, {t.skipped} skipped, "
                     f"{t.errors} errors")
    if check.baseline_commit:
        cached = " (cached)" if check.baseline_cached else ""
        kind = check.classification.value if check.classification else "unclassified"
        lines.append(f"  - against base `{check.baseline_commit[:12]}`{cached}: {kind}")
    lines += [f"  - {t.classification.value}: {md_code(t.test_id)}" for t in check.classified_tests
              if t.classification.value != "PASS_TO_PASS"]
    return lines
