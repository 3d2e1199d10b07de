"""Verdicts for people: the decision and, in `explain`, the chain with its evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import RenderableType

from agentctl.cli.render.classes import STYLE, by_class
from agentctl.cli.render.fit import hanging
from agentctl.cli.render.runs import forbidden_mark, line_counts, pr_line, sandbox_line
from agentctl.cli.render.style import badge, escape

Document = dict[str, Any]


def verdict_panel(verdict: Document, *, home: str, full: bool = False) -> RenderableType:
    lines = [
        f"[bold]{verdict['runId']}[/]  {badge(verdict['status'])}  {badge(verdict['prEligibility'])}",
        f"[dim]decided {verdict['decidedAt'][:19].replace('T', ' ')} by "
        f"{escape(verdict['decidedBy'])}, spec {verdict['specDigest'][:19]}[/]",
        "",
        "[bold]reasons[/]",
        *(f"  - {escape(reason)}" for reason in verdict["reasons"]),
        "",
        "[bold]evidence[/]",
        *(_artifact_line(a, home, full) for a in verdict["evidence"]),
    ]
    lines += _approvals(verdict)
    return hanging(lines)


def explanation(verdict: Document, *, home: str, full: bool = False,
                every: bool = False) -> RenderableType:
    """The chain, the tests by class (the first few of each, failures first) and the reasons;
    `every` lists every test and reason."""
    task = verdict["task"]
    lines = [
        f"[bold]intent[/]  {escape(task['taskType'])} ({escape(task['autonomyLevel'])}): "
        f"{escape(task['instruction'])}",
        f"[bold]verdict[/] {badge(verdict['status'])}  {badge(verdict['prEligibility'])}  "
        f"[dim]by {escape(verdict['decidedBy'])}[/]",
        f"[bold]sandbox[/] {sandbox_line(verdict.get('sandbox') or {})}",
        "",
    ]
    shown: set[str] = set()  # each content once, under the first link that cites it
    failures = list(verdict.get("failedSteps") or [])
    for number, link in enumerate(verdict["chain"], start=1):
        mark = "[green]✓[/]" if link["passed"] else "[red]✗[/]"
        lines.append(f"{number}. {mark} [bold]{link['check']}[/]  {escape(link['detail'])}")
        if not link["passed"]:  # where and why: the failed steps' output, under the first ✗
            lines += [line for failed in failures for line in _failed_step(failed)]
            failures = []
        for artifact in link["evidence"]:
            if artifact["sha256"] not in shown:  # two reruns that logged the same are one
                shown.add(artifact["sha256"])
                lines.append(f"   {_artifact_line(artifact, home, full)}")
    lines += _classification(verdict.get("classification") or [], every=every)
    lines += ["", "[bold]reasons[/]", *_reasons(verdict["reasons"], every=every)]
    if verdict.get("editedBy"):
        lines += ["", "[bold]edits[/] (which step changed which file)"]
        for path, edits in verdict["editedBy"].items():
            lines += [f"  {escape(path)} ← step {edit['sequenceNumber']} "
                      f"[bold]{escape(str(edit['toolName']))}[/] "
                      f"({line_counts(edit)}){forbidden_mark(edit)}" for edit in edits]
    for pr in verdict.get("pullRequests") or []:
        lines += ["", f"[bold]pull request[/] {pr_line(pr)}"]
    return hanging(lines)


SHOWN_TESTS = 5  # per class, without --all
SHOWN_REASONS = 8


def _classification(checks: list[Document], *, every: bool = False) -> list[str]:
    """The tests against the base commit, grouped by class with counts, failures first: the
    first few tests of each class (`every`: all of them), PASS_TO_PASS only counted."""
    if not any(c["classification"] or c["classifiedTests"] for c in checks):
        return []
    lines = ["", "[bold]classification[/]"]
    for check in checks:
        base = check["baselineCommit"]
        where = (f"base {base[:12]}" + (" (cached)" if check["baselineCached"] else "")
                 if base else "no baseline")
        kind = check["classification"] or "-"
        lines.append(f"  [bold]{escape(check['check'])}[/]  "
                     f"[{STYLE.get(kind, 'white')}]{kind}[/]  [dim]{where}[/]")
        for name, tests in by_class(check["classifiedTests"]):
            style = STYLE.get(name, "white")
            lines.append(f"    [{style}]{len(tests)} {name}[/]")
            if name == "PASS_TO_PASS":
                continue
            shown = tests if every else tests[:SHOWN_TESTS]
            lines += [f"      {escape(t['testId'])}  [dim]base {_base_result(t)}, "
                      f"patch {t['candidate']}[/]" for t in shown]
            if len(tests) > len(shown):
                lines.append(f"      [dim]… {len(tests) - len(shown)} more (--all shows "
                             "every one)[/]")
    return lines


def _reasons(reasons: list[str], *, every: bool) -> list[str]:
    shown = reasons if every else reasons[:SHOWN_REASONS]
    lines = [f"  - {escape(r)}" for r in shown]
    if len(reasons) > len(shown):
        lines.append(f"  [dim]… {len(reasons) - len(shown)} more reasons (--all shows every "
                     "one)[/]")
    return lines


def _failed_step(failed: Document) -> list[str]:
    """A failed step by its number in the tree, with the end of its output."""
    if not failed["outputTail"]:
        return []
    first, *rest = failed["outputTail"]
    return [f"   [dim]step {failed['sequenceNumber']} {escape(failed['title'])}:[/] "
            f"[red]{escape(first)}[/]", *(f"     [dim]{escape(line)}[/]" for line in rest)]


def _base_result(test: Document) -> str:
    if test["base"]:
        return str(test["base"])
    return "absent" if test.get("baseKnown", True) else "not known"


def _artifact_line(artifact: Document, home: str, full: bool = True) -> str:
    """An evidence artifact: its name and short hash (`artifact show RUN NAME` shows it), or
    with `full` the whole hash and where it is stored."""
    if not full:
        return (f"  [cyan]{escape(artifact['name'])}[/] [dim]{artifact['type'].lower()} "
                f"{artifact['sha256'][:12]}[/]")
    path = Path(home) / artifact["uri"]
    return (f"  [cyan]{escape(artifact['name'])}[/] {artifact['type']} sha256 "
            f"{artifact['sha256']}  [dim]{escape(path)}[/]")


def _approvals(verdict: Document) -> list[str]:
    if not verdict["approvals"]:
        return []
    return ["", "[bold]approvals[/]", *(
        f"  {badge(a['decision'])} by {escape(a['by'])}: {escape(a['reason'])}  "
        f"[dim]{a['createdAt'][:19].replace('T', ' ')}[/]" for a in verdict["approvals"])]
