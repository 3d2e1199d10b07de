"""What the run page shows, gathered once from the read views and the artifact store.

The page, CTRF and ATIF all read this one value, built from the same documents `run show --tree`
and `verdict explain --json` print, so the page never disagrees with the command line. With
`public`, only SAFE_FOR_PUBLIC_LOG content stays: artifacts of any other visibility are left out
(their contents and their listing), and tool arguments and outputs, which are not artifacts and
carry no visibility, are dropped too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentctl.cli.documents import Document, run_document, verdict_document
from agentctl.domain.enums import ArtifactVisibility, RedactionStatus
from agentctl.domain.redaction import Redactor
from agentctl.domain.serialize import to_json
from agentctl.domain.verification import TestReport
from agentctl.services.queries.per_test import per_test_reports
from agentctl.store.blobs import BlobStore
from agentctl.store.views import Views

PUBLIC = ArtifactVisibility.SAFE_FOR_PUBLIC_LOG.value
LOG_TAIL_BYTES = 16 << 10  # the end of a check's log is where its failure is
DIFF_BYTES = 512 << 10


@dataclass(frozen=True, slots=True)
class EmbeddedText:
    """An artifact's content shown on the page: its tail when long, secrets redacted."""

    artifact: Document
    text: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class RunPage:
    run: Document  # run_document(tree=True)
    verdict: Document | None  # verdict_document(explain=True)
    task: Document
    diff: EmbeddedText | None
    spend: Spend
    logs: dict[str, EmbeddedText] = field(default_factory=dict)  # by artifact id
    public: bool = False
    tests: dict[str, TestReport] = field(default_factory=dict)  # each check's, by its name


@dataclass(frozen=True, slots=True)
class Spend:
    """What the run used, against its budget."""

    attempts: int
    steps: int
    tool_calls: int
    denied_calls: int
    output_bytes: int
    cost_usd: float | None
    tokens: int | None


def spend_of(run: Document) -> Spend:
    """Counted from the steps; cost and tokens from the model requests, or else from what the
    agent reported at its end (the larger figure: one is a sum of the other)."""
    steps = [s for a in run["attempts"] for s in a["steps"]]
    calls = [s["toolCall"] for s in steps if s.get("toolCall")]
    cost, tokens, seen = 0.0, 0, False
    for step in steps:
        attributes = step["attributes"]
        value = attributes.get("costUsd")
        if isinstance(value, (int, float)):
            seen = True
            cost = cost + value if step["type"] == "MODEL_PLANNING" else max(cost, value)
        count = sum(v for k in ("inputTokens", "outputTokens")
                    if isinstance(v := attributes.get(k), int))
        tokens = tokens + count if step["type"] == "MODEL_PLANNING" else max(tokens, count)
    return Spend(attempts=len(run["attempts"]), steps=len(steps), tool_calls=len(calls),
                 denied_calls=sum(c["decision"] != "ALLOWED" for c in calls),
                 output_bytes=sum(int((c.get("result") or {}).get("outputBytes") or 0)
                                  for c in calls),
                 cost_usd=round(cost, 6) if seen else None, tokens=tokens if seen else None)


def gather(views: Views, blobs: BlobStore, run_text: str | None, *, public: bool) -> RunPage:
    run = views.run(run_text)
    with views.snapshot():
        document = run_document(views, run, tree=True, files=blobs)
        verdict = verdict_document(views, run, explain=True, files=blobs)
        task = verdict["task"] if verdict else _task(views, run.task_id)
        patch = views.patch(run.run_id)
        verification = views.verification(run.run_id)
        tests = per_test_reports(views, blobs, verification)
    artifacts = {a["artifactId"]: a for attempt in document["attempts"]
                 for step in attempt["steps"] for a in step["artifacts"]}
    diff = None
    if patch is not None:
        diff = _diff(blobs, artifacts, patch.unified_diff_artifact, patch.attempt_id, public)
    logs: dict[str, EmbeddedText] = {}
    for check in verification.checks if verification is not None else ():
        artifact = artifacts.get(check.log_artifact or "")
        if artifact is not None and (not public or artifact["visibility"] == PUBLIC):
            shown = _embedded(blobs, artifact, LOG_TAIL_BYTES)
            if shown is not None:
                logs[artifact["artifactId"]] = shown
    spend = spend_of(document)
    if public:
        _keep_public(document, verdict)
        public_checks = {c.name for c in verification.checks if artifacts.get(
            c.test_report_artifact or "", {}).get("visibility") == PUBLIC} \
            if verification is not None else set()
        tests = {name: report for name, report in tests.items() if name in public_checks}
    return RunPage(run=document, verdict=verdict, task=task, diff=diff, spend=spend, logs=logs,
                   public=public, tests=tests)


def _task(views: Views, task_id: str) -> Document:
    return to_json(views.task(task_id))  # type: ignore[return-value]


def _diff(blobs: BlobStore, artifacts: dict[str, Document], diff_id: str, attempt_id: str,
          public: bool) -> EmbeddedText | None:
    """The patch as people may see it: the redacted copy when the true one holds a secret."""
    candidates = [artifacts.get(diff_id)] + [
        a for a in artifacts.values()
        if a["attemptId"] == attempt_id and a["name"] == "patch.redacted.diff"]
    for artifact in candidates:
        if artifact is None:
            continue
        allowed = artifact["visibility"] == PUBLIC if public else \
            artifact["visibility"] != ArtifactVisibility.INTERNAL_ONLY.value
        if allowed:
            return _embedded(blobs, artifact, DIFF_BYTES, head=True)
    return None


def _embedded(blobs: BlobStore, artifact: Document, limit: int, *, head: bool = False,
              ) -> EmbeddedText | None:
    """The content, verified against its hash first (a tampered blob is not shown)."""
    if blobs.verify(artifact["uri"], artifact["sha256"]) is not None:
        return None
    path = blobs.path_for(artifact["uri"])
    size = int(artifact["sizeBytes"])
    with path.open("rb") as handle:
        if not head and size > limit:
            handle.seek(size - limit)
        data = handle.read(limit)
    text = data.decode("utf-8", errors="replace")
    if artifact["redactionStatus"] == RedactionStatus.RAW.value:

        text = Redactor().clean(text)
    return EmbeddedText(artifact, text, size > limit)


def _keep_public(run: Document, verdict: Document | None) -> None:
    """Drop what is not SAFE_FOR_PUBLIC_LOG from the documents, in place (they are ours)."""
    for attempt in run["attempts"]:
        for step in attempt["steps"]:
            step["artifacts"] = [a for a in step["artifacts"] if a["visibility"] == PUBLIC]
            step["attributes"] = {}
            step.pop("outputTail", None)  # from logs and outputs that are not public
            call: Any = step.get("toolCall")
            if call is not None:
                call["argumentsJson"] = "{}"
                if call.get("result"):
                    call["result"] = {k: v for k, v in call["result"].items()
                                      if k in ("outcome", "exitCode", "durationMs")}
    if verdict is not None:
        verdict["evidence"] = [a for a in verdict["evidence"] if a["visibility"] == PUBLIC]
        for link in verdict.get("chain") or []:
            link["evidence"] = [a for a in link["evidence"] if a["visibility"] == PUBLIC]
        for failed in verdict.get("failedSteps") or []:
            failed["outputTail"] = []
