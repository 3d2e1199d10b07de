"""Run the Typer app and turn every failure into one line and an exit code (`main` imports
this module after the dataclass code is installed, and never for the per-call hook)."""

from __future__ import annotations

import errno
import os
import sys
from typing import NoReturn

import typer

from agentctl.cli.app import app
from agentctl.cli.render.style import printable
from agentctl.domain.errors import AgentctlError

INTERNAL_ERROR = 70


def dispatch(args: list[str]) -> NoReturn:
    """Run the command `args` names; exit with its code, or with one line for its failure."""
    if (bad := _bad_argument(args)) is not None:
        _fail(bad, 2)
    try:
        command = typer.main.get_command(app)
        result = command.main(args=args, prog_name="agentctl", standalone_mode=False)
    except AgentctlError as error:
        _fail(str(error), error.exit_code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _fail("interrupted", 130)
    except typer.TyperException as error:  # click's usage errors: one line, not a usage screen
        _usage_error(error)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            _fail(f"a path is too long for the file system ({len(str(error.filename or ''))} "
                  "characters)", 2)
        if error.errno not in _ENVIRONMENT_ERRORS:
            _bug(error)
        where = f" {error.filename}" if error.filename else ""
        _fail(f"cannot write{where}: {error.strerror}", 2)
    except Exception as error:  # noqa: BLE001 - anything else is a bug, or the database's fault
        database = _database_error(error)
        if database is None:
            _bug(error)
        words, environment = database
        hint = (" (is the disk holding it full or read-only?)" if environment
                else " (a corrupt or foreign file? --home points at another home)")
        _fail(f"the state database cannot be used: {words}{hint}", 2)
    sys.exit(result if isinstance(result, int) else 0)


MAX_ARGUMENT_CHARS = 100_000
"""Longer text belongs in a file (`task submit --file`); no argument is stored unbounded."""


def _bad_argument(args: list[str]) -> str | None:
    """What is wrong with an argument as a shell passed it, before anything reads it: bytes
    that are not UTF-8 (Python hands them over as lone surrogates) or an unbounded length."""
    for position, argument in enumerate(args):
        previous = args[position - 1] if position else ""
        name = previous if previous.startswith("-") else f"argument {position + 1}"
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            return f"{name}: not valid UTF-8 text; pass text in UTF-8"
        if len(argument) > MAX_ARGUMENT_CHARS:
            return (f"{name}: {len(argument):,} characters is too long; at most "
                    f"{MAX_ARGUMENT_CHARS:,} (put long text in a file: task submit --file)")
    return None


# What the machine refused, not what agentctl got wrong: a read-only home, a full disk.
_ENVIRONMENT_ERRORS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                                 errno.EDQUOT})


def _database_error(error: Exception) -> tuple[str, bool] | None:
    """The driver's own words when the database, not agentctl, is the problem, and whether
    the machine refused (a full disk, a read-only file) rather than the file being wrong. Only a
    loaded sqlite3 raises its errors: the module is looked up, not imported (a command that
    failed before it opened a database, or `--help`, loads no driver)."""
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is None:
        return None
    driver = error if isinstance(error, sqlite3.DatabaseError) else getattr(error, "orig", None)
    if not isinstance(driver, sqlite3.DatabaseError):  # SQLAlchemy wraps the driver's error
        return None
    code = getattr(driver, "sqlite_errorcode", 0) & 0xFF
    return str(driver), code in _SQLITE_ENVIRONMENT


# SQLite's primary result codes for a machine that refuses: PERM, READONLY, IOERR, FULL,
# CANTOPEN (their file is fine; the disk or its permissions are not).
_SQLITE_ENVIRONMENT = frozenset({3, 8, 10, 13, 14})


def _bug(error: Exception) -> NoReturn:
    """The last line of defence: no traceback reaches a user unless they ask for it."""
    if os.environ.get("AGENTCTL_DEBUG"):
        raise error
    _fail(f"internal error: {type(error).__name__}: {error} "
          "(this is a bug; rerun with AGENTCTL_DEBUG=1 for the traceback)", INTERNAL_ERROR)


def _usage_error(error: Exception) -> None:
    if type(error).__name__ == "NoArgsIsHelpError":  # a group called bare: show its help
        ctx = getattr(error, "ctx", None)
        if ctx is not None and ctx.parent is None:  # bare `agentctl`: help as asked for, 0
            sys.stdout.write(ctx.get_help() + "\n")
            sys.exit(0)
        error.show()  # type: ignore[attr-defined]
        sys.exit(2)
    message = error.format_message()  # type: ignore[attr-defined]
    ctx = getattr(error, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    _fail(f"{message}{hint}", getattr(error, "exit_code", 2))


def _fail(message: str, code: int) -> NoReturn:
    """One line on stderr: newlines folded, control characters shown rather than obeyed."""
    line = " ".join(printable(message).splitlines())
    sys.stderr.write(f"agentctl: error: {line}\n")
    sys.exit(code)
