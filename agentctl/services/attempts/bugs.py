"""Which exception in an attempt is a bug of agentctl's, not a failure of the machine it runs on.

A bug ends its run once, with its own words ("agentctl bug: KeyError ..."): retrying it spends
the attempts on the same traceback and tells the user the machine failed. What the machine does
(the disk, a subprocess, git, the store's driver) raises agentctl's own errors or OSError, or
one of the libraries' classes below; anything else is a bug.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from agentctl.domain.errors import AgentctlError

_MACHINE: tuple[type[BaseException], ...] = (
    AgentctlError, OSError, MemoryError, subprocess.SubprocessError, sqlite3.Error)


def _loaded_machine_errors() -> tuple[type[BaseException], ...]:
    """The libraries' failure classes, of those loaded: one not imported cannot have been
    raised, and importing it here would cost every run its start-up."""
    errors: list[type[BaseException]] = []
    if (git := sys.modules.get("git.exc")) is not None:
        errors.append(git.GitError)
    if (sqlalchemy := sys.modules.get("sqlalchemy.exc")) is not None:
        errors.append(sqlalchemy.DBAPIError)
    if (psycopg := sys.modules.get("psycopg")) is not None:
        errors.append(psycopg.Error)
    return tuple(errors)


def is_bug(error: BaseException) -> bool:
    """Whether `error` is a programming error of agentctl's (KeyError, TypeError, ...)."""
    return not isinstance(error, _MACHINE + _loaded_machine_errors())


def bug_text(error: BaseException, where: str) -> str:
    """The failure's own words: what was raised, and where (the traceback is in the report)."""
    said = str(error)
    return f"agentctl bug: {type(error).__name__}{': ' + said if said else ''} in {where} " \
           "(not retried; the traceback is in the failure report)"
