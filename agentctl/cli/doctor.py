"""`agentctl doctor`: whether this machine can run agents here, one line per part."""


import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import typer

from agentctl._speedups import dataclass_code
from agentctl.cli.context import State, state
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, out

AGENT_CLIS = {"claude": "Claude Code (--agent claude[:MODEL])",
              "codex": "the Codex CLI (--agent codex[:MODEL])",
              "opencode": "opencode (--agent opencode[:PROVIDER/MODEL])"}
FORGE_TOKENS = ("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN")
PART_WIDTH = 10
MIN_DETAIL_WIDTH = 20  # a terminal narrower than this wraps the detail itself


@dataclass(frozen=True)
class Finding:
    part: str
    ok: bool
    detail: str
    required: bool = True  # False: a missing optional part (an agent CLI, a token) warns only


def doctor(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Check the sandbox, the agent CLIs, the store and a forge token. Exit 1 when a required
    part does not work (an agent CLI or a token that is missing only warns)."""
    current = state(ctx)
    findings = [_sandbox(), _views(current), *_agents(), _store(current), _forge(),
                _start_up()]
    if as_json:
        emit_json([{"part": f.part, "ok": f.ok, "required": f.required, "detail": f.detail}
                   for f in findings])
    else:
        _print(findings)
    raise typer.Exit(0 if all(f.ok or not f.required for f in findings) else 1)


def _print(findings: list[Finding]) -> None:
    """One row per part; a detail longer than the terminal wraps under its own text (a
    hanging indent), so the marks and part names stay a column a reader can run an eye down."""
    from rich.text import Text

    console = out()
    for f in findings:
        mark = "[green]✓[/]" if f.ok else "[red]✗[/]" if f.required else "[yellow]![/]"
        lead = Text.from_markup(f"{mark} {f.part:<{PART_WIDTH}} ")
        detail = Text(f.detail)  # plain text: a path's brackets are never markup
        width = max(console.width - lead.cell_len, MIN_DETAIL_WIDTH)
        for n, line in enumerate(detail.wrap(console, width, overflow="fold")):
            line.rstrip()
            console.print(Text.assemble(lead if n == 0 else " " * lead.cell_len, line),
                          highlight=False, soft_wrap=True)


def _sandbox() -> Finding:
    from agentctl.execution.sandboxing import bubblewrap

    status = bubblewrap.check()
    if status.works:
        where = f" ({status.bubblewrap.path})" if status.bubblewrap else ""
        return Finding("sandbox", True, f"bubblewrap works{where}; limits: {status.cgroups}")
    return Finding("sandbox", False, f"{status.message}; {bubblewrap.HINT}")


def _views(current: State) -> Finding:
    """Whether each attempt's trees are copy-on-write views of the shared base-tree cache, or
    full checkouts (what a run then costs, and how to get the views)."""
    import tempfile

    from agentctl.execution.workspaces import overlay

    if overlay.supported(Path(tempfile.gettempdir())):
        return Finding("views", True, "workspaces, verified and baseline trees are "
                       f"copy-on-write views of the base-tree cache in {current.home.root}",
                       required=False)
    why = ("a normal user cannot mount overlays (it needs CAP_SYS_ADMIN)" if os.geteuid()
           else "this kernel refused an overlay mount")
    return Finding("views", False, f"off: {why}; every workspace, verified and baseline tree "
                   "is a full checkout, which costs the repository's size per tree (run as "
                   "root, or in a container with CAP_SYS_ADMIN, to get views)", required=False)


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


def _start_up() -> Finding:
    """Whether the speed-ups hold (`agentctl/_speedups`): the one a user's environment can turn
    off without saying so is the dataclass code table, where Python writes no bytecode."""
    why = dataclass_code.off_because()
    if why is None:
        return Finding("start-up", True, "speed-ups on (compiled dataclass methods kept in "
                       f"{dataclass_code.WHERE_BYTECODE_GOES}); AGENTCTL_PLAIN=1 turns them off",
                       required=False)
    if why.startswith("AGENTCTL_PLAIN"):
        return Finding("start-up", False, "speed-ups off (AGENTCTL_PLAIN is set): each command "
                       "starts the plain way, some 40 ms slower", required=False)
    return Finding("start-up", False, f"the compiled dataclass methods are never kept ({why}): "
                   "each command compiles them again (~40 ms); unset it for agentctl to keep "
                   "them", required=False)
