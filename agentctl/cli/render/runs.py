"""Runs for people: the outcome line after `run start`, listings, details and the tree."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from agentctl.cli.render.classes import STYLE, by_class
from agentctl.cli.render.fit import Column, fitted
from agentctl.cli.render.style import badge, colour, duration, escape, repository_name
from agentctl.domain.run import BEFORE_PR, cancelled_before_pr

Document = dict[str, Any]
# Steps shown in full per attempt; longer runs of ordinary successful tool calls are folded.
SHOWN_STEPS = 40
FOLD_AFTER = 6


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def run_outcome(run: Document) -> RenderableType:
    verdict = run["verdict"] or {}
    lines = [
        f"{run['runId']}  run #{run['number']}  {badge(verdict.get('status', run['status']))}  "
        f"{badge(verdict.get('prEligibility', '-'))}",
    ]
    reasons = verdict.get("reasons") or []
    if reasons:
        lines.append(f"  reason: {escape(reasons[0])}")
    lines.append(f"  next: agentctl run show --tree {run['runId']}")
    lines.append(f"        agentctl verdict explain {run['runId']}")
    return Group(*(Text.from_markup(line, emoji=False) for line in lines))


def run_table(runs: Sequence[Document], *, short: Mapping[str, str],
              repositories: Mapping[str, str | None], width: int) -> RenderableType:
    """One row per run; what does not fit `width` goes on an indented line below it."""
    columns = [Column("RUN", 3), Column("#", 2), Column("STATUS", 1), Column("VERDICT", 3),
               Column("ELIGIBILITY", 3), Column("REPO"), Column("CREATED"), Column("TASK"),
               Column("BASE")]
    rows = []
    for run in runs:
        verdict = run["verdict"] or {}
        rows.append([short.get(run["runId"], run["runId"]), str(run["number"]),
                     badge(run["status"]), badge(verdict["status"]) if verdict else "-",
                     badge(verdict["prEligibility"]) if verdict else "-",
                     escape(repository_name(repositories.get(run["taskId"]))),
                     run["createdAt"][:16].replace("T", " "),
                     short.get(run["taskId"], run["taskId"]), run["baseCommit"][:12]])
    return fitted(columns, rows, width)


def run_detail(run: Document) -> RenderableType:
    spec = run["executionSpec"]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    verdict = run["verdict"] or {}
    rows = [
        ("run", f"{run['runId']}  #{run['number']} of {run['taskId']}"),
        ("status", badge(run["status"])),
        ("verdict", f"{badge(verdict['status'])}  {badge(verdict['prEligibility'])}"
         if verdict else "-"),
        ("base", f"{escape(spec['baseRef'])} at {run['baseCommit']}"),
        ("agent", escape(spec["agent"])),
        ("spec", run["specDigest"]),
        ("sandbox", sandbox_line(spec.get("sandbox") or {})),
        ("started", run["startedAt"] or "-"),
        ("completed", run["completedAt"] or "-"),
    ]
    if run.get("failureSummary"):
        rows.append(("failure", escape(run["failureSummary"])))
    if cancelled_before_pr(run["status"], verdict.get("status")):
        rows.append(("cancelled", escape(f"by {run.get('cancelRequestedBy') or '?'} "
                                         f"({run.get('cancelReason') or 'no reason'}) "
                                         f"{BEFORE_PR}")))
    for reason in (verdict.get("reasons") or [])[:5]:
        rows.append(("reason", escape(reason)))
    for pr in run.get("pullRequests") or []:
        rows.append(("pr", pr_line(pr)))
    for key, value in rows:
        grid.add_row(key, value)
    return grid


def pr_line(pr: Document) -> str:
    """A PR record in one line: its forge, number, state and URL, or the pushed branch."""
    where = (f"{escape(pr['forge'])} #{pr['number']} {escape(pr['state'])}"
             + (f" {escape(pr['url'])}" if pr.get("url") else "")) if pr.get("number") \
        else "no forge"
    return (f"{where}; branch {escape(pr['branch'])} commit {pr['commitSha'][:12]}"
            + (f" pushed to {escape(pr['remote'])}" if pr.get("remote") else ""))


def sandbox_line(profile: Document) -> str:
    """The sandbox a run's processes ran in, in one line (OFF stands out)."""
    if profile.get("mode") == "off":
        return "[bold red]OFF[/] (unsandboxed: the verdict needs a human approval)"
    limits = profile.get("limits") or {}
    allowed = ", ".join(profile.get("networkAllow") or []) or "none"
    extra = ", ".join(profile.get("readOnly") or [])
    return escape(f"on: network {allowed}; read-only {extra + ' + ' if extra else ''}"
                  f"PATH toolchains; limits {limits.get('maxProcesses')} processes, "
                  f"{limits.get('maxMemoryMb')} MB memory, {limits.get('maxFileSizeMb')} MB "
                  "files")


def run_tree(run: Document) -> RenderableType:
    verdict = run["verdict"] or {}
    title = (f"[bold]{run['runId']}[/]  run #{run['number']}  {badge(run['status'])}"
             + (f"  verdict {badge(verdict['status'])} {badge(verdict['prEligibility'])}"
                if verdict else ""))
    root = Tree(title)
    root.add(f"[dim]task {run['taskId']}  base {run['baseCommit'][:12]}  spec "
             f"{run['specDigest'][:19]}[/]")
    for attempt in run.get("attempts", []):
        node = root.add(_attempt_label(attempt))
        _add_steps(node, attempt["steps"])
    for check in run.get("classification") or []:
        _add_classes(root, check)
    if verdict:
        for reason in verdict["reasons"][:3]:
            root.add(f"[{colour(verdict['status'])}]reason:[/] {escape(reason)}")
        if len(verdict["reasons"]) > 3:
            root.add(f"[dim]… {len(verdict['reasons']) - 3} more reasons: agentctl verdict "
                     f"explain {run['runId']}[/]")
    return root


SHOWN_IDS = 3


def _add_classes(root: Tree, check: Document) -> None:
    """A check's tests by class with counts, failures first, each with its first few ids."""
    if not check["classifiedTests"]:
        return
    node = root.add(f"[bold]tests[/] {escape(check['check'])}  [dim]against base "
                    f"{str(check['baselineCommit'] or '-')[:12]}[/]")
    for name, tests in by_class(check["classifiedTests"]):
        line = f"{len(tests)} {name}"
        if name != "PASS_TO_PASS":
            ids = ", ".join(t["testId"] for t in tests[:SHOWN_IDS])
            more = f" … {len(tests) - SHOWN_IDS} more (verdict explain --all)" \
                if len(tests) > SHOWN_IDS else ""
            line = f"[{STYLE.get(name, 'white')}]{line}[/]  {escape(ids)}[dim]{more}[/]"
        else:
            line = f"[dim]{line}[/]"
        node.add(line)


def _attempt_label(attempt: Document) -> str:
    took = duration(_time(attempt["startedAt"]), _time(attempt["endedAt"]))
    end = f"  [dim]{escape(attempt['endReason'])}[/]" if attempt.get("endReason") else ""
    failure = f"  failure {attempt['failureCode']}" if attempt.get("failureCode") else ""
    return (f"attempt {attempt['attemptNumber']}  {badge(attempt['status'])}  {took}  "
            f"[dim]worker {escape(attempt['workerId'])}  lease {attempt['leaseId']}  "
            f"heartbeat {attempt['lastHeartbeatAt'][11:19]}[/]{failure}{end}")


def _add_steps(node: Tree, steps: Sequence[Document]) -> None:
    """Every step that is not an ordinary success is shown; long runs of those are folded."""
    folded: list[Document] = []
    shown = 0

    def flush() -> None:
        if not folded:
            return
        if len(folded) <= FOLD_AFTER:
            for step in folded:
                _add_step(node, step)
        else:
            tools = Counter(s["toolCall"]["toolName"] if s["toolCall"] else s["type"]
                            for s in folded)
            detail = ", ".join(f"{name} ×{count}" for name, count in tools.most_common(4))
            node.add(f"[dim]… {len(folded)} steps folded, all SUCCEEDED ({detail}); "
                     "--json has every one[/]")
        folded.clear()

    for step in steps:
        ordinary = step["status"] == "SUCCEEDED" and step["type"] == "TOOL_CALL" \
            and not step.get("changedFiles")
        if ordinary and shown >= SHOWN_STEPS // 2:
            folded.append(step)
            continue
        flush()
        _add_step(node, step)
        shown += 1
    flush()


def _add_step(node: Tree, step: Document) -> None:
    took = duration(_time(step["startedAt"]), _time(step["endedAt"]))
    call = step["toolCall"]
    label = f"{step['sequenceNumber']:>3}. {step['type']}  {badge(step['status'])}  [dim]{took}[/]"
    if call is None:
        label += f"  {escape(step['title'])}"
    else:
        label += f"  [bold]{call['toolName']}[/] {escape(_arguments(call['argumentsJson']))}"
    branch = node.add(label)
    if call is not None:
        rule = f"rule {escape(call['matchedRule'])}" if call["matchedRule"] else "no rule"
        line = f"[{colour(call['decision'])}]{call['decision']}[/]  [dim]{rule}[/]"
        if call["denialReason"]:
            line += f"  {escape(call['denialReason'])}"
        result = call["result"]
        if result and not result["ok"]:
            line += f"  [red]{escape(result.get('error') or 'exit ' + str(result.get('exitCode')))}[/]"
        if call.get("approvedBy"):
            line += f"  approved by {escape(call['approvedBy'])}"
        branch.add(line)
    attributes = step["attributes"]
    failed = step["status"] not in ("SUCCEEDED", "STARTED")
    if failed and attributes.get("failure"):
        branch.add(f"[red]{escape(attributes['failure'])}[/]")
    if step.get("outputTail"):  # why it failed, from its output
        branch.add(output_tail(step["outputTail"]))
    if not (failed and attributes.get("failure")) and attributes.get("summary") \
            and attributes["summary"] != step["title"]:
        branch.add(escape(attributes["summary"]))
    for change in step.get("changedFiles") or ():
        branch.add(f"[yellow]edited:[/] {escape(str(change['path']))} ({line_counts(change)})"
                   + ("" if change.get("changeType") == "MODIFIED"
                      else f" [dim]{change.get('changeType')}[/]") + forbidden_mark(change))
    for artifact in step["artifacts"]:
        branch.add(f"[cyan]{escape(artifact['name'])}[/]  {artifact['type']}  "
                   f"{artifact['sizeBytes']} B  sha256 {artifact['sha256'][:12]}  "
                   f"[dim]{artifact['visibility']}[/]")


def output_tail(lines: Sequence[str]) -> str:
    """The end of a failed step's output: its exception line (first, in red) and last lines."""
    first, *rest = lines
    return "\n".join([f"[red]{escape(first)}[/]", *(f"[dim]{escape(line)}[/]" for line in rest)])


def _arguments(arguments_json: str) -> str:
    arguments = json.loads(arguments_json)
    paths = arguments.get("paths")
    if isinstance(paths, list) and paths:  # a native call's paths, workspace-relative
        main = ", ".join(map(str, paths))
    else:
        main = arguments.get("command") or arguments.get("path") \
            or arguments.get("file_path") or arguments.get("url") or ""
    extra = f" → {arguments['to']}" if "to" in arguments else ""
    text = f"{main}{extra}"
    return text if len(text) <= 80 else text[:77] + "..."


def forbidden_mark(change: Document) -> str:
    """`  ✗ forbidden: .github/**` after a change the patch boundary forbade, else nothing."""
    rule = change.get("forbidden")
    return f"  [bold red]✗ {escape(str(rule))}[/]" if rule else ""


def line_counts(change: Document) -> str:
    """`+3 −1`, or for a binary file (which has no lines) `binary, 2,048 bytes`."""
    if change.get("binary"):
        size = change.get("sizeBytes")
        return f"binary, {size:,} bytes" if isinstance(size, int) else "binary"
    return f"[green]+{change['additions']}[/] [red]−{change['deletions']}[/]"
