"""pr-body.md and the commit message, built only from SAFE_FOR_PR artifacts and the records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentctl.domain.artifact import Artifact
from agentctl.domain.redaction import Redactor
from agentctl.domain.run import Run
from agentctl.domain.task import Task
from agentctl.domain.verdict import Approval, Verdict
from agentctl.execution.environment import secret_values

Document = Mapping[str, Any]


def pr_body(*, task: Task, run: Run, verdict: Verdict, approvals: Sequence[Approval],
            touched: Document | None, verification: Document | None, judge: Document | None,
            evidence: Sequence[Artifact]) -> str:
    lines = [f"## {task.title}", "", "### Intent", "",
             f"{task.task_type.value}: {task.instruction}", "", "### What changed", ""]
    if touched:
        stats = touched["stats"]
        lines.append(f"{stats['filesChanged']} file(s), +{stats['additions']} / "
                     f"-{stats['deletions']}")
        lines += [f"- `{f['path']}` ({f['changeType'].lower()}, +{f['additions']} / "
                  f"-{f['deletions']})" for f in touched["files"]]
    lines += ["", "### Verification", ""]
    checks = (verification or {}).get("checks") or []
    lines += [f"- `{c['command']}`: {c['status']}"
              + (f" — {c['summarizedFailure']}" if c.get("summarizedFailure") else "")
              for c in checks] or ["No verification command ran."]
    lines += ["", "### Judge", ""]
    if judge:
        lines.append(f"{judge['status']} (confidence {judge['confidence']:.2f})")
        lines += [f"- {f['severity']}: {f['message']}" for f in judge.get("findings", [])]
    else:
        lines.append("The judge did not run.")
    lines += ["", "### Verdict", "", f"**{verdict.status.value}**, "
              f"{verdict.pr_eligibility.value}", ""]
    lines += [f"- {reason}" for reason in verdict.reasons]
    lines += [f"- {a.decision.value} by {a.by}: {a.reason}" for a in approvals]
    lines += ["", "### Evidence", "", f"Run `{run.run_id}` (#{run.number}) on `{run.base_commit}`, "
              f"spec `{run.spec_digest}`.", ""]
    lines += [f"- `{a.name}` {a.type.value} sha256 `{a.sha256}`" for a in evidence]
    return "\n".join(lines) + "\n"


def commit_message(*, task: Task, run: Run, verdict: Verdict) -> str:
    """Redacted again: the task was stored before this machine's secrets were known."""
    text = (f"{task.title}\n\n{task.task_type.value}: {task.instruction}\n\n"
            f"Verdict: {verdict.status.value} ({verdict.pr_eligibility.value})\n"
            f"agentctl-run: {run.run_id}\nagentctl-spec: {run.spec_digest}\n")
    return Redactor().knowing(secret_values()).clean(text)
