"""`agentctl doctor`: whether this machine can run agents here, one line per part."""


import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.text import Text

from agentctl._speedups import dataclass_code
from agentctl.cli.context import State, state
from agentctl.cli.migrations import migrations
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.domain.agent_clis import AGENT_CLIS, release_tested, version_in
from agentctl.services.admin.machine import (
    HOOK_SWITCH,
    SANDBOX_HINT,
    agent_hook,
    limits_layout,
    overlay_views,
    sandbox_check,
)

VERSION_SECONDS = 15.0  # for `<cli> --version` (a Node CLI's start, on a busy machine)
FORGE_TOKENS = ("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN")
PART_WIDTH = 10
MIN_DETAIL_WIDTH = 20  # a terminal narrower than this wraps the detail itself


@dataclass(frozen=True)
class Finding:
    part: str
    ok: bool
    detail: str
    required: bool = True  # False: a missing optional part (an agent CLI, a token) warns only
    version: str | None = None  # an agent CLI's, as its --version printed it
    tested: bool | None = None  # an agent CLI's: whether agentctl was tested with its version


def doctor(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Check the sandbox, its limits, the views, the agent CLIs, the store and a forge token.
    Exit 1 when a required part does not work (an agent CLI or a token that is missing only
    warns)."""
    current = state(ctx)
    views = _views(current)  # first: a run's sandbox starts in the namespace views need
    findings = [_sandbox(), _limits(), views, *_agents(current), _hook(current), _store(current),
                _forge(), _start_up()]
    if as_json:

        emit_json([{"part": f.part, "ok": f.ok, "required": f.required, "detail": f.detail,
                    **({"version": f.version, "tested": f.tested} if f.part in AGENT_CLIS
                       else {})} for f in findings])
    else:
        _print(findings)
    raise typer.Exit(0 if all(f.ok or not f.required for f in findings) else 1)


def _print(findings: list[Finding]) -> None:
    """One row per part; a detail longer than the terminal wraps under its own text (a
    hanging indent), so the marks and part names stay a column a reader can run an eye down."""

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

    status = sandbox_check()
    if status.works:
        where = f" ({status.bubblewrap.path})" if status.bubblewrap else ""
        return Finding("sandbox", True, f"bubblewrap works{where}")
    return Finding("sandbox", False, f"{status.message}; {SANDBOX_HINT}")


def _limits() -> Finding:
    """What caps each run's processes and memory: a cgroup of its own, or rlimits only (and
    then what is not enforced, and what would give it a cgroup)."""

    found = limits_layout()
    fix = found.fix
    if fix is None:
        return Finding("limits", True, f"{found.describe}: each run's processes and memory are "
                       "capped in a group of its own", required=False)
    return Finding("limits", False, f"{found.describe}; fix: {fix}", required=False)


def _views(current: State) -> Finding:
    """Whether each attempt's trees are copy-on-write views of the shared base-tree cache, or
    full checkouts (what a run then costs, and how to get the views)."""


    why = overlay_views(Path(tempfile.gettempdir()))
    if why is None:
        whose = "" if os.geteuid() == 0 else " (mounted in a user namespace of agentctl's own)"
        return Finding("views", True, "workspaces, verified and baseline trees are "
                       f"copy-on-write views of the base-tree cache in {current.home.root}"
                       f"{whose}", required=False)
    return Finding("views", False, f"off: {why}; every workspace, verified and baseline tree "
                   "is a full checkout, which costs a checkout's time and the repository's size "
                   "per tree", required=False)


def _agents(current: State) -> list[Finding]:
    """Each agent CLI: where its command is, the release its `--version` names, and whether
    agentctl was tested with it (asked all at once: each may take seconds to start)."""


    commands = _agent_commands(current)
    with ThreadPoolExecutor(max_workers=len(AGENT_CLIS)) as pool:
        return list(pool.map(lambda name: _agent(name, commands.get(name) or name),
                             AGENT_CLIS))


def _agent(name: str, command: str) -> Finding:


    what = AGENT_CLIS[name].what
    path = shutil.which(command)
    if path is None:
        return Finding(name, False, f"{what}: {command}: not found" if command != name
                       else f"{what}: not on PATH", required=False)
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True,
                              errors="replace", timeout=VERSION_SECONDS,
                              stdin=subprocess.DEVNULL, check=False)
        said = f"{done.stdout}\n{done.stderr}"
    except subprocess.TimeoutExpired:
        said = ""
        why = f"--version gave no answer within {VERSION_SECONDS:g} s"
    except OSError as error:
        said = ""
        why = f"--version could not run: {error.strerror or error}"
    else:
        why = f"--version named no release (exit {done.returncode})"
    version = version_in(said)
    if version is None:
        return Finding(name, False, f"{what}: {path}: {why}", required=False)
    tested, note = release_tested(name, version)
    return Finding(name, tested, f"{what}: {path} {version}, {note}", required=False,
                   version=version, tested=tested)


def _agent_commands(current: State) -> dict[str, str]:
    """Each agent's `[agents.NAME] command` (its name when the config cannot be read: that
    is the store's and the run's finding, not this one's)."""

    try:
        agents = current.config.agents
    except Exception:  # noqa: BLE001 - any config problem: the default commands
        return {}
    commands = {}
    for name in AGENT_CLIS:
        command = getattr(getattr(agents, name, None), "command", None)
        if isinstance(command, str) and command:
            commands[name] = command
    return commands


def _hook(current: State) -> Finding:
    """Which hook the agent CLIs start per tool call (the compiled one, built here on first
    use, or the Python one), and why."""
    choice = agent_hook(current.home.root)
    if choice.binary is not None:
        return Finding("hook", True, f"{choice.why} ({HOOK_SWITCH}=off: the Python one)",
                       required=False)
    return Finding("hook", False, f"{choice.why} (tens of ms more per tool call)",
                   required=False)


def _store(current: State) -> Finding:
    try:
        found = migrations().current(current.store)
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
