"""The command line in-process, for tests that check help, bad input, config, or the records and
listings commands write and read.

A subprocess of the installed `agentctl` costs an interpreter start and the CLI's imports (a
few hundred milliseconds each on the shared machine); a test that asserts one line on stderr
and exit 2 does not need one. These run `agentctl.cli.main.main` (the same entry point the
installed command calls, with its one-line errors and exit codes) inside Typer's `CliRunner`
isolation, as sqlite-utils runs its CLI tests: stdin, stdout, stderr and the environment
swapped for the call, the working directory changed, the store connections closed (as a process's
exit closes them), and everything put back afterwards.

Keep the installed command (the `agentctl` and `run_agentctl` fixtures) for what a subprocess
proves: signals, workers, the sandbox, several hosts, bytes a shell passes, and a handful of
smoke tests that the installed command works.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner

from agentctl._speedups.typer_click import formatting
from agentctl.cli import output
from agentctl.cli.main import main
from agentctl.store.transactions import close_all
from tests.conftest import GIT_IDENTITY, Result


def invoke(*args: str, home: Path, cwd: Path, env: Mapping[str, str] | None = None,
           input: str | None = None) -> Result:
    """`agentctl ARGS` with AGENTCTL_HOME=home in `cwd`, run in this process: the exit code,
    stdout and stderr, as `run_agentctl` gives them for the installed command."""
    saved = dict(os.environ)  # the CLI may set variables (NO_COLOR): none may leak
    on_term = signal.getsignal(signal.SIGTERM)  # `run start` turns SIGTERM into Ctrl-C
    verbosity = output.verbosity  # -q and -v set it for the process
    overrides: dict[str, str | None] = {"AGENTCTL_HOME": str(home), "AGENTCTL_CONFIG": None,
                                        **GIT_IDENTITY, **(env or {})}
    runner = CliRunner()
    try:
        with contextlib.chdir(cwd), runner.isolation(input=input, env=overrides) as streams:
            stdout, stderr, _ = streams
            formatting.FORCED_WIDTH = None  # help as wide as the installed command's (put back)
            try:
                main(list(args))
                code = 0
            except SystemExit as done:
                code = _exit_code(done.code)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            return Result(code, stdout.getvalue().decode("utf-8", "replace"),
                          stderr.getvalue().decode("utf-8", "replace"))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        signal.signal(signal.SIGTERM, on_term)
        output.verbosity = verbosity
        close_all()  # as the installed command does before it exits: no session outlives it


def _exit_code(code: object) -> int:
    """What the process would exit with, as `sys.exit` turns its argument into a status."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1
