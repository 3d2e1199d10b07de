"""The entry point: the per-call hook answered before Typer; every other command run by
`dispatch`, which turns every failure into one line and an exit code.

0 done; 1 a run ended with a verdict other than SUCCESS/SUCCESS_NEEDS_REVIEW; 2 bad input,
unknown id or refused by policy; 3 an integrity check failed; 70 a bug (set AGENTCTL_DEBUG=1
for the traceback).
"""

from __future__ import annotations

import sys
from typing import NoReturn

from agentctl._speedups import dataclass_code, dataclass_doc, process


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from agentctl.hooks.hook import main as hook  # once per tool call: no Typer

        sys.exit(hook(args[1:]))
    dataclass_code.install()  # before any command module makes its classes
    dataclass_doc.install()
    from agentctl.cli.dispatch import dispatch  # Typer, the app: after the dataclass code

    dispatch(args)


def command() -> NoReturn:
    """The `agentctl` command: `main` in a process whose garbage collector and exit the
    speed-ups tune (`_speedups.process`; `AGENTCTL_PLAIN=1` leaves both as Python has them).
    In-process callers (tests) call `main` and keep their interpreter as it was."""
    process.collect_less()
    try:
        main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    process.leave(code)
