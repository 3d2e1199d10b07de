"""pr-body.md and the commit message, built only from SAFE_FOR_PR artifacts and the records.

The body is what a reviewer reads first: the verdict and its reasons, the tests against the base
by class, which step and tool changed each file, what was denied and by which rule, the sandbox,
the spend, the approvals, and an AI disclosure that says "unavailable" rather than guessing. It
fits GitHub's 65,536-character limit: a long section is cut with a pointer to the full record.

Its structure is agentctl's alone: every string a run recorded (paths, test ids, tool names,
rules, reasons and judge messages quoting them, approvals, the agent's own version claim) goes
in through `md_text` or `md_code`, one line with nothing in it read as Markdown or HTML, so no
content can add a section, a table row or an unclosed `<!--`. The task's title and instruction
are the submitter's own Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentctl import __version__
from agentctl.domain.agent_text import md_code, md_text, visible
from agentctl.domain.artifact import Artifact
from agentctl.domain.redaction import Redactor
from agentctl.domain.run import Run
from agentctl.domain.task import Task
from agentctl.domain.test_classes import PASSING, first_few, grouped
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import ClassifiedTest, VerificationReport
from agentctl.execution.environment import secret_values

Document = Mapping[str, Any]
MAX_BODY_CHARS = 65_536  # GitHub's limit on a PR body (GitLab's is larger)
MAX_SECTION_LINES = 200
UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True)
class FileEdit:
    path: str
    step: int
    tool: str
    binary_size: int | None = None  # a binary file's bytes after the step: it has no lines


@dataclass(frozen=True, slots=True)
class DeniedCall:
    tool: str
    rule: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Disclosure:
    """Who wrote the patch, exactly as recorded; "unavailable" where the run did not record it."""

    agent: str
    model: str = UNAVAILABLE
    cli_version: str = UNAVAILABLE


@dataclass(frozen=True, slots=True, kw_only=True)
class PrFacts:
    """Everything a body may say, gathered from records and SAFE_FOR_PR artifacts only."""

    task: Task
    run: Run
    verdict: Verdict
    approvals: Sequence[Approval]
    touched: Document | None
    verification: Document | None
    report: VerificationReport | None
    judge: Document | None
    evidence: Sequence[Artifact]
    edits: Sequence[FileEdit] = ()
    denied: Sequence[DeniedCall] = ()
    cost_usd: float | None = None
    tokens: int | None = None
    disclosure: Disclosure = field(default_factory=lambda: Disclosure(agent=UNAVAILABLE))


def pr_title(task: Task) -> str:
    return task.title


def pr_body(facts: PrFacts, *, attestation: str | None = None) -> str:
    """The body, redacted and cut to MAX_BODY_CHARS; `attestation` (a details block of signed,
    already safe statements, not redacted lest a signature break) goes last if it fits."""
    run, verdict = facts.run, facts.verdict
    sections = [
        [f"## {facts.task.title}", "", f"{facts.task.task_type.value}: {facts.task.instruction}"],
        ["### Verdict", "", f"**{verdict.status.value}**, {verdict.pr_eligibility.value}", "",
         *[f"- {md_text(reason)}" for reason in verdict.reasons]],
        _tests(facts), _changes(facts), _checks(facts), _judge(facts.judge), _denied(facts),
        _sandbox(run), _spend(facts),
        ["### Approvals", "", *([f"- {a.decision.value} by {md_text(a.by)}: {md_text(a.reason)}"
                                 for a in facts.approvals] or ["None recorded."])],
        _disclosure(facts.disclosure),
        ["### Evidence", "", f"Run `{run.run_id}` (`#{run.number}`) on `{run.base_commit}`, spec "
         f"`{run.spec_digest}`.", "", *[f"- {md_code(a.name)} {a.type.value} sha256 `{a.sha256}`"
                                        for a in facts.evidence]],
    ]
    redactor = Redactor().knowing(secret_values())
    body = redactor.clean("\n\n".join("\n".join(_cut(lines, run.run_id))
                                      for lines in sections) + "\n")
    trailers = redactor.clean("\n" + "\n".join(trailers_of(facts)) + "\n")
    tail = f"\n{attestation}\n" if attestation else ""
    room = MAX_BODY_CHARS - len(trailers)
    if len(body) + len(tail) > room:
        tail = ""  # `pr create --attest` then posts the bundle as a comment instead
    if len(body) > room:
        pointer = (f"\n\n… cut at {MAX_BODY_CHARS} characters: the full record is "
                   f"`agentctl verdict explain {run.run_id}`\n")
        body = body[:room - len(pointer)] + pointer
    return body + tail + trailers


def trailers_of(facts: PrFacts) -> list[str]:
    """The `Generated-by:` / `agentctl-run:` trailers a commit and a body both carry."""
    d = facts.disclosure  # one line each: a newline in a recorded name would add a trailer
    return [f"Generated-by: {visible(d.agent)} (model {visible(d.model)}, CLI "
            f"{visible(d.cli_version)}) via agentctl "
            f"{__version__}", f"agentctl-run: {facts.run.run_id}",
            f"agentctl-spec: {facts.run.spec_digest}"]


def _cut(lines: list[str], run_id: str) -> list[str]:
    if len(lines) <= MAX_SECTION_LINES:
        return lines
    return [*lines[:MAX_SECTION_LINES],
            f"- … {len(lines) - MAX_SECTION_LINES} more: `agentctl verdict explain {run_id}`"]


SHOWN_TESTS = 5  # per class and check, as `verdict explain` shows them without --all


def _tests(facts: PrFacts) -> list[str]:
    """Each check's tests against the base by class, failures first: a count per class and the
    first few tests ("24 PASS_TO_FAIL: `a`, `b`, … and 19 more"), PASS_TO_PASS only counted, so
    a big result stays a few lines. Classes come from the records, so a new one shows up
    without an edit here."""
    report = facts.report
    checks = [(check.name, check.classified_tests) for check in (report.checks if report else ())
              if check.classified_tests]
    lines = ["### Tests against the base", ""]
    if not checks:
        lines.append("No per-test comparison with the base commit was made.")
        return lines
    if len(checks) > 1:  # the whole run's counts first
        every = [t for _, tests in checks for t in tests]
        lines += [", ".join(f"{len(tests)} {name}" for name, tests in
                            grouped(every, _class_of)), ""]
    for name, tests in checks:
        lines.append(f"{md_code(name)}:")
        lines += [_class_line(kind, found) for kind, found in grouped(tests, _class_of)]
    return lines


def _class_of(test: ClassifiedTest) -> str:
    return test.classification.value


def _class_line(kind: str, tests: Sequence[ClassifiedTest]) -> str:
    if kind == PASSING:
        return f"- {len(tests)} {kind}"
    shown, more = first_few([t.test_id for t in tests], SHOWN_TESTS)
    return (f"- **{len(tests)} {kind}**: " + ", ".join(md_code(t) for t in shown)
            + (f" and {more} more" if more else ""))


def _changes(facts: PrFacts) -> list[str]:
    lines = ["### What changed", ""]
    touched = facts.touched
    if not touched:
        return [*lines, "No file list was recorded."]
    stats = touched["stats"]
    lines.append(f"{stats['filesChanged']} file(s), +{stats['additions']} / -{stats['deletions']}")
    by_path: dict[str, list[FileEdit]] = {}
    for edit in facts.edits:
        by_path.setdefault(edit.path, []).append(edit)
    for f in touched["files"]:
        found = by_path.get(f["path"], [])
        made = "; ".join(f"step {e.step} {md_code(e.tool)}" for e in found)
        lines.append(f"- {md_code(f['path'])} ({f['changeType'].lower()}, {_lines(f, found)})"
                     + (f", by {made}" if made else ""))
    return lines


def _lines(change: Document, edits: Sequence[FileEdit]) -> str:
    """`+3 / -1`, or for a binary file (which has no lines) `binary, 2,048 bytes`: its size
    as the last step that changed it recorded it."""
    if not change.get("binary"):
        return f"+{change['additions']} / -{change['deletions']}"
    sizes = [e.binary_size for e in edits if e.binary_size is not None]
    return f"binary, {sizes[-1]:,} bytes" if sizes else "binary"


def _checks(facts: PrFacts) -> list[str]:
    checks = (facts.verification or {}).get("checks") or []
    return ["### Verification", "", *([f"- {md_code(c['command'])}: {md_text(c['status'])}"
                                       + _counts(c)
                                       + (f" — {md_text(c['summarizedFailure'])}"
                                          if c.get("summarizedFailure") else "")
                                       for c in checks] or ["No verification command ran."])]


def _counts(check: Document) -> str:
    """How many tests the check ran, whether or not the base was compared: ", 54 passed, 0
    failed, 1 skipped"."""
    tests = check.get("tests")
    if isinstance(tests, Mapping):
        errors = f", {tests['errors']} errors" if tests.get("errors") else ""
        return (f", {tests.get('passed', 0)} passed, {tests.get('failed', 0)} failed, "
                f"{tests.get('skipped', 0)} skipped{errors}")
    ran = check.get("testsRan")
    return f", {ran} tests ran" if isinstance(ran, int) else ""  # not a test runner's


def _judge(judge: Document | None) -> list[str]:
    if not judge:
        return ["### Judge", "", "The judge did not run."]
    return ["### Judge", "", f"{md_text(judge['status'])} (confidence {judge['confidence']:.2f})",
            *[f"- {md_text(f['severity'])}: {md_text(f['message'])}"
              for f in judge.get("findings", [])]]


def _denied(facts: PrFacts) -> list[str]:
    return ["### Denied tool calls", "", *([f"- {md_code(d.tool)}: {md_text(d.reason)}"
                                           + (f" (rule {md_code(d.rule)})" if d.rule else "")
                                           for d in facts.denied] or ["None."])]


def _sandbox(run: Run) -> list[str]:
    profile = run.execution_spec.sandbox
    limits = profile.limits
    network = ", ".join(profile.network_allow) or "none"
    return ["### Sandbox", "", f"mode {profile.mode.value}; network allowed: {network}; "
            f"limits: {limits.max_processes} processes, {limits.max_memory_mb} MB memory, "
            f"{limits.max_file_size_mb} MB per file"]


def _spend(facts: PrFacts) -> list[str]:
    cost = UNAVAILABLE if facts.cost_usd is None else f"${facts.cost_usd:.4f}"
    tokens = UNAVAILABLE if facts.tokens is None else str(facts.tokens)
    return ["### Spend", "", f"cost {cost}, tokens {tokens}"]


def _disclosure(d: Disclosure) -> list[str]:
    return ["### AI disclosure", "", "This change was written by an AI coding agent, run and "
            "checked by agentctl.", "", f"- agent: {md_text(d.agent)}",
            f"- model: {md_text(d.model)}", f"- agent CLI version: {md_text(d.cli_version)}",
            f"- agentctl: {__version__}"]


def commit_message(facts: PrFacts) -> str:
    """Redacted again: the task was stored before this machine's secrets were known."""
    task, verdict = facts.task, facts.verdict
    text = (f"{task.title}\n\n{task.task_type.value}: {task.instruction}\n\n"
            f"Verdict: {verdict.status.value} ({verdict.pr_eligibility.value})\n\n"
            + "\n".join(trailers_of(facts)) + "\n")
    return Redactor().knowing(secret_values()).clean(text)
