"""Verdicts for people: the decision and, in `explain`, the chain with its evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from agentctl.cli.render.style import badge, escape

Document = dict[str, Any]


def verdict_panel(verdict: Document, *, home: str) -> RenderableType:
    lines = [
        f"[bold]{verdict['runId']}[/]  {badge(verdict['status'])}  {badge(verdict['prEligibility'])}",
        f"[dim]decided {verdict['decidedAt'][:19].replace('T', ' ')} by "
        f"{escape(verdict['decidedBy'])}, spec {verdict['specDigest'][:19]}[/]",
        "",
        "[bold]reasons[/]",
        *(f"  - {escape(reason)}" for reason in verdict["reasons"]),
        "",
        "[bold]evidence[/]",
        *(_artifact_line(a, home) for a in verdict["evidence"]),
    ]
    lines += _approvals(verdict)
    return Group(*(Text.from_markup(line, emoji=False) for line in lines))


def explanation(verdict: Document, *, home: str) -> RenderableType:
    task = verdict["task"]
    lines = [
        f"[bold]intent[/]  {escape(task['taskType'])} ({escape(task['autonomyLevel'])}): "
        f"{escape(task['instruction'])}",
        f"[bold]verdict[/] {badge(verdict['status'])}  {badge(verdict['prEligibility'])}  "
        f"[dim]by {escape(verdict['decidedBy'])}[/]",
        "",
    ]
    for number, link in enumerate(verdict["chain"], start=1):
        mark = "[green]✓[/]" if link["passed"] else "[red]✗[/]"
        lines.append(f"{number}. {mark} [bold]{link['check']}[/]  {escape(link['detail'])}")
        lines += [f"   {_artifact_line(a, home)}" for a in link["evidence"]]
    lines += ["", "[bold]reasons[/]", *(f"  - {escape(r)}" for r in verdict["reasons"])]
    if verdict.get("editedBy"):
        lines += ["", "[bold]edits[/] (which step changed which file)"]
        for path, edits in verdict["editedBy"].items():
            lines += [f"  {escape(path)} ← step {edit['sequenceNumber']} "
                      f"[bold]{escape(str(edit['toolName']))}[/] "
                      f"(+{edit['additions']} −{edit['deletions']})" for edit in edits]
    return Group(*(Text.from_markup(line, emoji=False) for line in lines))


def _artifact_line(artifact: Document, home: str) -> str:
    path = Path(home) / artifact["uri"]
    return (f"  [cyan]{escape(artifact['name'])}[/] {artifact['type']} sha256 "
            f"{artifact['sha256']}  [dim]{escape(path)}[/]")


def _approvals(verdict: Document) -> list[str]:
    if not verdict["approvals"]:
        return []
    return ["", "[bold]approvals[/]", *(
        f"  {badge(a['decision'])} by {escape(a['by'])}: {escape(a['reason'])}  "
        f"[dim]{a['createdAt'][:19].replace('T', ' ')}[/]" for a in verdict["approvals"])]
