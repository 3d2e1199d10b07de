"""A run starts without what only other commands, other agents or other settings need: the other
`run` commands, the built-in tools, the trace exporter, a TOML parser with no TOML to read; and
the code a run's start-up imports does not itself import the standard library's asyncio,
socket, logging or thread pools (the egress proxy's asyncio half comes with the first
connection a sandboxed process makes, never for a run whose processes connect nowhere; a cold
cache fill's pool on its own thread)."""

from __future__ import annotations

import subprocess
import sys
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


def test_a_run_imports_no_other_run_command_built_in_tool_trace_exporter_or_toml_parser(
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
        "agentctl.cli.run.replay", "agentctl.cli.run.replay_view", "agentctl.cli.run.report",
        "agentctl.cli.run.attest", "agentctl.cli.run.page", "agentctl.cli.run.trace_export",
        # nor the `task` group's read commands
        "agentctl.cli.task.show", "agentctl.cli.task.cancel",
        # the built-in tools (fs.*, patch.apply with unidiff, shell.run) serve a script: or
        # native agent's calls; a noop, patch: or command: agent makes none
        "agentctl.execution.agents.tools", "agentctl.execution.agents.shell_tool", "unidiff",
        # with no OTLP endpoint the run's trace is neither planned nor sent
        "agentctl.domain.tracing", "agentctl.execution.otlp",
        "agentctl.services.queries.trace_export",
        # a request that names its checks: no build files read for test commands to offer
        "agentctl.services.actions.test_commands",
        "agentctl.execution.verification.test_detection",
        # a worker sweeps ended attempts' directories, a run does not
        "agentctl.services.lifecycle.sweep",
        # `sandbox check`'s probes (bubblewrap, cgroups, overlays) and the agent CLIs' hook:
        # a run needs only the warning a run without the sandbox prints
        "agentctl.cli.sandbox", "agentctl.services.admin.machine",
        "agentctl.execution.agents.hook_binary", "agentctl.hooks.hook",
        # no process connects anywhere: the egress proxy's event loop is never needed
        "agentctl.execution.sandboxing.egress_server", "asyncio", "ssl",
    }
    if config_path(None, tmp_path / "cwd") is None:
        unneeded.add("tomllib")  # no config file, no request file, no script plan: no TOML
    assert not unneeded & imported.keys(), unneeded & imported.keys()


# What `task submit --run` imports on its main thread before the run executes, less the store
# (SQLAlchemy, which imports asyncio and logging for itself, is the store's to take out).
START_UP = ("agentctl.cli.main", "agentctl.cli.task.submit", "agentctl.cli.run.start",
            "agentctl.services.actions.tasks", "agentctl.services.lifecycle.start",
            "agentctl.cli.documents")


def test_a_runs_start_up_code_imports_no_asyncio_socket_logging_or_thread_pool_itself(
        tmp_path: Path) -> None:
    # one process, one thread: the nesting PYTHONPROFILEIMPORTTIME prints is who imported what
    done = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           f"import {', '.join(START_UP)}"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = importers(done.stderr)
    assert set(START_UP) <= imported.keys(), done.stderr[-2000:]  # it measures
    ours = {module: imported[module] for module in
            ("asyncio", "socket", "logging", "concurrent.futures", "ssl") if module in imported}
    assert not {module: by for module, by in ours.items()
                if by is None or by.startswith("agentctl")}, ours
