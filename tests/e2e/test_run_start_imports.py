"""A run starts without what only other commands, other agents or other settings need: the other
`run` commands, the built-in tools, the trace exporter, a TOML parser with no TOML to read, and
the standard library's asyncio, socket, logging and thread pools, which no agentctl module
imports at start-up (the egress proxy's asyncio half comes with the first gate it opens)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentctl.config_file import config_path
from tests.conftest import Result


def importers(profile: str) -> dict[str, str | None]:
    """Each module `PYTHONPROFILEIMPORTTIME` saw imported, and the module whose import
    imported it (None at the top): a line is printed when its import ends, after those it
    nests, one level indented further."""
    rows = []
    for line in profile.splitlines():
        if line.startswith("import time:") and not line.endswith("| imported package"):
            name = line.split("|")[-1]
            rows.append((len(name) - len(name.lstrip()), name.strip()))
    found: dict[str, str | None] = {}
    for index, (depth, name) in enumerate(rows):
        parent = next((outer for level, outer in rows[index + 1:] if level < depth), None)
        found.setdefault(name, parent)
    return found


def test_a_run_imports_no_other_command_tool_exporter_or_stdlib_server_of_its_own(
        agentctl: Callable[..., Result], repo: Path, tmp_path: Path) -> None:
    done = agentctl("task", "submit", "--repo", str(repo / "src"), "--type", "refactor",
                    "--instruction", "nothing", "--verify", "true", "--run", "--agent", "noop",
                    "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode in (0, 1), done.stderr[-2000:]
    imported = importers(done.stderr)
    assert "agentctl.services.lifecycle.start" in imported, done.stderr[-3000:]  # it measures
    unneeded = {
        # `task submit --run` runs `run start`'s code: the `run` group and its other commands
        # (list, show, cancel, replay, report, ...) are for other invocations
        "agentctl.cli.run.commands", "agentctl.cli.run.show", "agentctl.cli.run.cancel",
        "agentctl.cli.run.replay", "agentctl.cli.run.exports",
        # the built-in tools (fs.*, patch.apply with unidiff, shell.run) serve a script: or
        # native agent's calls; a noop, patch: or command: agent makes none
        "agentctl.execution.tools", "agentctl.execution.shell_tool", "unidiff",
        # with no OTLP endpoint the run's trace is neither planned nor sent
        "agentctl.domain.tracing", "agentctl.execution.otlp",
    }
    if config_path(None, tmp_path / "cwd") is None:
        unneeded.add("tomllib")  # no config file, no request file, no script plan: no TOML
    assert not unneeded & imported.keys(), unneeded & imported.keys()
    # The egress proxy's server is imported when its first gate opens, on the thread that
    # prepares the attempt's networks; the worker id's host name is os.uname()'s; a cold cache
    # fill's thread pool, a failed trace's warning import theirs when they happen.
    late = {"agentctl.execution.egress_server"}
    ours = {module: imported[module] for module in
            ("asyncio", "socket", "logging", "concurrent.futures") if module in imported}
    assert not {module: by for module, by in ours.items()
                if by is not None and by.startswith("agentctl.") and by not in late}, ours
