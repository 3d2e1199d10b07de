"""The compiled methods of dataclasses, kept between processes like Python's own bytecode.

`dataclasses` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` and frozen
`__setattr__` as source text and compiles it when the class is made: some 950 compiles, about
55 ms of a run's start-up, every time. `install` points the `exec` that `dataclasses` calls by
name at a table of the code compiled from each text, read from a file kept where the package's
bytecode is at the first class made and written back at exit when something was missing. The
text is the key, so a class that changed only misses (it is compiled as before); a file that
cannot be read or written is no file at all.

Where Python writes no bytecode (`PYTHONDONTWRITEBYTECODE`, `-B`) the table is not written
either, so it never helps there: `agentctl doctor` says so (`off_because`). Under
`AGENTCTL_PLAIN=1` nothing is installed and `dataclasses` compiles as it always does.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
import threading
from importlib.util import MAGIC_NUMBER, cache_from_source
from types import CodeType
from typing import Any

from agentctl._speedups import PLAIN, SWITCH

# where Python would keep the bytecode of a module of this name beside the package, so that
# -O and PYTHONPYCACHEPREFIX place it as they place bytecode
WHERE_BYTECODE_GOES = cache_from_source(
    os.path.join(os.path.dirname(__file__), "dataclass-code.py")).removesuffix(".pyc") + ".marshal"
_MOST = 4096  # entries kept; past it, only what the last process that missed used

_file = WHERE_BYTECODE_GOES
_table: dict[str, CodeType] | None = None
_used: set[str] = set()
_missed = False
_reading = threading.Lock()


def install(file: str = WHERE_BYTECODE_GOES) -> None:
    """From here on, each class `dataclasses` makes takes its methods' code from the table
    kept in `file` (nothing under `AGENTCTL_PLAIN=1`)."""
    global _file
    if PLAIN:
        return
    _file = file
    setattr(dataclasses, "exec", _exec)  # noqa: B010 - shadows the builtin in that module only


def off_because() -> str | None:
    """Why the table does not speed up this process's start (None when it does)."""
    if PLAIN:
        return f"{SWITCH} is set"
    if sys.dont_write_bytecode:
        return "PYTHONDONTWRITEBYTECODE (or -B) is set"
    return None


def _exec(source: str | CodeType, globals: dict[str, Any] | None = None,
          locals: dict[str, Any] | None = None) -> None:
    if isinstance(source, str):
        source = _compiled(source)
    builtins.exec(source, globals, locals)


def _compiled(text: str) -> CodeType:
    global _missed
    table = _table if _table is not None else _first_read()
    _used.add(text)
    code = table.get(text)
    if code is None:
        code = table[text] = compile(text, "<string>", "exec", dont_inherit=True)
        _missed = True
    return code


def _first_read() -> dict[str, CodeType]:
    """The table, read once per process (classes may be made on two threads at once)."""
    global _table
    with _reading:
        if _table is None:
            _table = _read()
            atexit.register(_write)
        return _table


def _read() -> dict[str, CodeType]:
    """The table in the file, if this Python's bytecode wrote it (as a .pyc says whose it is)."""
    try:
        with open(_file, "rb") as file:
            magic, table = marshal.loads(file.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return table if magic == MAGIC_NUMBER and isinstance(table, dict) else {}


def _write() -> None:
    """At exit, when a class missed: the table, whole (or, grown past `_MOST`, only what this
    process used), replacing the file at once; where Python writes no bytecode, nothing."""
    if not _missed or _table is None or sys.dont_write_bytecode:
        return
    kept = _table if len(_table) <= _MOST else {t: _table[t] for t in _used}
    partial = f"{_file}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(_file), exist_ok=True)
        with open(partial, "wb") as file:
            marshal.dump((MAGIC_NUMBER, kept), file)
        os.replace(partial, _file)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
