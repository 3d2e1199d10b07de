"""The test files a verify command's `python -m unittest discover` finds, as path globs.

`discover -s tests -p "check_*.py"` names its own test-file pattern; the default rule knows only
unittest's `test*.py`, so without this a project's `tests/check_calc.py` would be code: the
patch's edit to it would grade itself. Read from the task's configured command only (the frozen
spec's), never from anything the patch holds. The command line is read as unittest's own
argument parser reads it: `-p PAT`, `-pPAT`, `-p=PAT`, `--pattern=PAT`, an abbreviation
(`--pat PAT`), the positional `discover START PATTERN TOP`; the last value given wins. A pattern
that is no glob of one file name falls back to unittest's default, `test*.py`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Iterator, Sequence

from agentctl.domain import globs
from agentctl.domain.errors import BadInput

DEFAULT_PATTERN = "test*.py"
# unittest's options that take a value (`-k` from the main parser, the rest from discover's)
_VALUED_SHORT = {"-s": "start", "-p": "pattern", "-t": "top", "-k": ""}
_FLAGS_SHORT = set("vqfcb")
_LONG = {"--start-directory": "start", "--pattern": "pattern", "--top-level-directory": "top",
         "--durations": "", "--verbose": None, "--quiet": None, "--locals": None,
         "--failfast": None, "--catch": None, "--buffer": None}
_POSITIONAL = ("start", "pattern", "top")
_SHELL_ENDS = {"&&", "||", ";", "|", "&"}


def unittest_test_globs(commands: Iterable[str]) -> tuple[str, ...]:
    """The globs of the test files each `unittest discover` in `commands` loads."""
    out: list[str] = []
    for command in commands:
        for start, pattern in _discoveries(command):
            out += _globs_for(start, pattern)
    return tuple(dict.fromkeys(out))


def _discoveries(command: str) -> Iterator[tuple[str, str]]:
    """(start dir, pattern) of each `-m unittest discover` in the command, also inside a quoted
    script (`bash -c "..."`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return
    for index, word in enumerate(words):
        if any(c.isspace() for c in word):
            yield from _discoveries(word)
        after = _after_unittest(words, index)
        if after is not None and words[after:after + 1] == ["discover"]:
            found = _arguments(words[after + 1:])
            if found is not None:
                yield found


def _after_unittest(words: Sequence[str], index: int) -> int | None:
    """Where the arguments of `-m unittest` (or `-munittest`) at `index` begin."""
    if words[index] == "-m" and words[index + 1:index + 2] == ["unittest"]:
        return index + 2
    return index + 1 if words[index] == "-munittest" else None


def _arguments(words: Sequence[str]) -> tuple[str, str] | None:
    """unittest's discover arguments: its start dir and pattern; None where the line is not
    what its parser would accept (an unknown or ambiguous option, a value missing)."""
    values = {"start": ".", "pattern": DEFAULT_PATTERN}
    positional = iter(_POSITIONAL)
    rest = list(words)
    only_positional = False
    while rest:
        word = rest.pop(0)
        if word in _SHELL_ENDS or word.endswith(";"):
            break
        if only_positional or not word.startswith("-") or word == "-":
            name = next(positional, None)
            if name is None:
                return None
            values[name] = word
            continue
        if word == "--":
            only_positional = True
            continue
        taken = _option(word, rest)
        if taken is None:
            return None
        name, value = taken
        if name:
            values[name] = value
    return values["start"], values["pattern"]


def _option(word: str, rest: list[str]) -> tuple[str, str] | None:
    """The destination and value of one option word (taking its value from `rest` where it
    is the next word); ("", "") for a flag; None where unittest would refuse it."""
    if word.startswith("--"):
        key, equals, value = word.partition("=")
        known = [long for long in _LONG if long.startswith(key)]
        long = key if key in _LONG else (known[0] if len(known) == 1 else None)
        if long is None:
            return None
        name = _LONG[long]
        if name is None:
            return ("", "") if not equals else None
        if not equals:
            if not rest:
                return None
            value = rest.pop(0)
        return name, value
    for position, char in enumerate(word[1:], start=1):
        option = f"-{char}"
        if option in _VALUED_SHORT:
            value = word[position + 1:].removeprefix("=") if position == 1 \
                else word[position + 1:]
            if not value:
                if not rest:
                    return None
                value = rest.pop(0)
            return _VALUED_SHORT[option], value
        if char not in _FLAGS_SHORT:
            return None
    return "", ""


def _globs_for(start: str, pattern: str) -> list[str]:
    """The test files' globs: the pattern under the start dir (unittest matches it against
    file names only). A start that is no plain relative folder (absolute, `..`, a variable)
    leaves the pattern at any depth; a dotted one may be a package's name as well
    (`-s pkg.tests`)."""
    pattern = _file_pattern(pattern) or DEFAULT_PATTERN
    folder = start.strip().removeprefix("./").strip("/")
    if start.startswith(("/", "~", "$")) or any(c in folder for c in "*?[]{}\\$") or \
            ".." in folder.split("/") or folder in ("", "."):
        return [pattern]
    out = [f"{folder}/**/{pattern}"]
    parts = folder.split(".")
    if "/" not in folder and len(parts) > 1 and all(p.isidentifier() for p in parts):
        out.append(f"{'/'.join(parts)}/**/{pattern}")
    return out


def _file_pattern(pattern: str) -> str | None:
    """The pattern as a glob of one file name, or None where it is none (unittest would match
    no file, or every path would be a test)."""
    text = pattern.strip()
    if not text or "/" in text or text in ("*", "**") or text.startswith("!"):
        return None
    try:
        return globs.validate_glob(text)
    except BadInput:
        return None
