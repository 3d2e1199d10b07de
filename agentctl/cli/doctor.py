"""`agentctl doctor`: whether this machine can run agents here, one line per part."""


import os
import shutil
from dataclasses import dataclass

import typer

from agentctl.cli.context import State, state
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, out

AGENT_CLIS = {"claude": "Claude Code (--agent claude[:MODEL])",
              "codex": "the Codex CLI (--agent codex[:MODEL])"}
FORGE_TOKENS = ("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN")


@dataclass(frozen=True)
class Finding:
    part: str
    ok: bool
    detail: str
    required: bool = True  # False: a missing optional part (an agent CLI, a token) warns only


def doctor(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Check the sandbox, the agent CLIs, the store and a forge token. Exit 1 when a required
    part does not work (an agent CLI or a token that is missing only warns)."""
    from agentctl.cli.render.style import escape

    current = state(ctx)
    findings = [_sandbox(), *_agents(), _store(current), _forge()]
    if as_json:
        emit_json([{"part": f.part, "ok": f.ok, "required": f.required, "detail": f.detail}
                   for f in findings])
    else:
        for f in findings:
            mark = "[green]✓[/]" if f.ok else "[red]✗[/]" if f.required else "[yellow]![/]"
            out().print(f"{mark} {f.part:<10} {escape(f.detail)}", highlight=False)
    raise typer.Exit(0 if all(f.ok or not f.required for f in findings) else 1)


def _sandbox() -> Finding:
    from agentctl.execution import bubblewrap

    status = bubblewrap.check()
    if status.works:
        where = f" ({status.bubblewrap.path})" if status.bubblewrap else ""
        return Finding("sandbox", True, f"bubblewrap works{where}; limits: {status.cgroups}")
    return Finding("sandbox", False, f"{status.message}; {bubblewrap.HINT}")


def _agents() -> list[Finding]:
    found = []
    for name, what in AGENT_CLIS.items():
        path = shutil.which(name)
        found.append(Finding(name, path is not None, f"{what}: {path}" if path else
                             f"{what}: not on PATH", required=False))
    return found


def _store(current: State) -> Finding:
    from agentctl.store import database

    try:
        found = database.current(current.store)
    except Exception as error:  # noqa: BLE001 - whatever stops the store is the finding
        return Finding("store", False, f"{current.home.root}: {error}")
    if found.revision is not None and not found.up_to_date:
        return Finding("store", False, f"{current.home.root}: schema {found.revision} is "
                       f"behind {found.head}; run 'agentctl db upgrade'")
    return Finding("store", True, f"{current.home.root} (schema "
                   f"{found.revision or 'created on first use'})")


def _forge() -> Finding:
    named = [name for name in FORGE_TOKENS if os.environ.get(name)]
    if named:
        return Finding("forge", True, f"token in {', '.join(named)} (pr create can push)",
                       required=False)
    return Finding("forge", False, f"no {', '.join(FORGE_TOKENS)}: pr create makes local "
                   "branches only", required=False)
