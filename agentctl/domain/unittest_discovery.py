"""The test files a verify command's `python -m unittest discover` finds, as path globs.

`discover -s tests -p "check_*.py"` names its own test-file pattern; the default rule knows only
unittest's `test*.py`, so without this a project's `tests/check_calc.py` would be code: the
patch's edit to it would grade itself. Read from the task's configured command only (the frozen
spec's), never from anything the patch holds. The command line is read as unittest's own
argument parser reads it: `-p PAT`, `-pPAT`, `-p=PAT`, `--pattern=PAT`, an abbreviation
(`--pat PAT`), the positional `discover START PATTERN TOP`; the last value given wins. A pattern
that is no glob of one file name falls back to unittest's default, `test*.py`.

The start dir resolves in the folder the command runs in: `cd pkg && python -m unittest
discover -p 'check_*.py'` loads `pkg/**/check_*.py`; a `cd` that may not have happened (after
`;` or `||`) leaves the pattern at any depth. A `make` call's recipe is read from the base's
Makefile (`make_recipes`), never the patch's: a patch that edits the Makefile moves no file.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from agentctl.domain import globs
from agentctl.domain.errors import BadInput
from agentctl.domain.make_recipes import Reads, make_call, plain_folder, recipes

DEFAULT_PATTERN = "test*.py"
# unittest's options that take a value (`-k` from the main parser, the rest from discover's)
_VALUED_SHORT = {"-s": "start", "-p": "pattern", "-t": "top", "-k": ""}
_FLAGS_SHORT = set("vqfcb")
_LONG = {"--start-directory": "start", "--pattern": "pattern", "--top-level-directory": "top",
         "--durations": "", "--verbose": None, "--quiet": None, "--locals": None,
         "--failfast": None, "--catch": None, "--buffer": None}
_POSITIONAL = ("start", "pattern", "top")
_JOINED = re.compile(r"(&&|\|\||;)")
_REDIRECT = re.compile(r"\d*(?:>>?|<<?|&>>?|>&|<&)(.*)")
_SHELL_ENDS = {"&&", "||", ";", "|", "&", ";;"}
_LIST_ENDS = {"||", ";", "&", ";;"}  # what ends an `&&` list (a pipe goes on in it)
_DEPTH = 8  # nested scripts and makes followed at most


@dataclass(frozen=True, slots=True)
class CommandDiscovery:
    """What the verify commands' `unittest discover` calls load (`globs`), the Makefiles their
    `make` calls run through (`read`), and the base's files still to be read before the answer
    is whole (`wanted`)."""

    globs: tuple[str, ...]
    wanted: tuple[str, ...] = ()
    read: tuple[str, ...] = ()


def discover_in(commands: Iterable[str], makefiles: Mapping[str, str | None]) -> CommandDiscovery:
    """Each `unittest discover` of `commands`, directly, after a `cd DIR &&`, or in the recipe
    of a `make` call: `makefiles` holds the base's Makefiles asked for so far (None: absent)."""
    out: list[str] = []
    reads = Reads()
    for command in commands:
        for folder, start, pattern in _discoveries(command, "", makefiles, reads, 0):
            out += _globs_for(folder, start, pattern)
    return CommandDiscovery(tuple(dict.fromkeys(out)), tuple(reads.wanted), tuple(reads.read))


def _discoveries(command: str, cwd: str | None, makefiles: Mapping[str, str | None],
                 reads: Reads, depth: int) -> Iterator[tuple[str | None, str, str]]:
    """(the folder it runs in, start dir, pattern) of each `-m unittest discover` in the
    command, also inside a quoted script (`bash -c "..."`) and in a `make` call's recipe. The
    folder is followed through `cd DIR &&` (and a subshell's end); None where it cannot be
    known (a `cd` that may not have happened: after `;`, `||`, a `cd` of no plain folder)."""
    try:
        words = list(_tokens(shlex.split(command)))
    except ValueError:
        return
    if depth > _DEPTH:
        return
    here: str | None = cwd
    listed = cwd  # the folder when the current `&&` list began
    outer: list[str | None] = []  # the folders outside each open subshell
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _SHELL_ENDS and word not in ("(", ")"):
            segment.append(word)
            continue
        moved = _cd(segment, here)
        yield from _in_segment(segment, here, makefiles, reads, depth)
        segment = []
        if moved is not _NOT_CD:
            here = moved if word == "&&" else None
        if word == "(":
            outer.append(here)
        elif word == ")":
            here = outer.pop() if outer else None
        elif word in _LIST_ENDS:
            if here != listed:  # the list's `cd` may have failed: the rest runs in either
                here = None
            listed = here


_NOT_CD = "\0not a cd"


def _cd(segment: Sequence[str], here: str | None) -> str | None:
    """Where a `cd DIR` (or `pushd DIR`) segment leaves the shell; `_NOT_CD` for another."""
    if not segment or segment[0] not in ("cd", "pushd", "popd"):
        return _NOT_CD
    if segment[0] == "popd" or len(segment) != 2:
        return None
    return plain_folder(here, segment[1])


def _in_segment(segment: Sequence[str], here: str | None, makefiles: Mapping[str, str | None],
                reads: Reads, depth: int) -> Iterator[tuple[str | None, str, str]]:
    for index, word in enumerate(segment):
        if any(c.isspace() for c in word):
            yield from _discoveries(word, here, makefiles, reads, depth + 1)
        after = _after_unittest(segment, index)
        if after is not None and segment[after:after + 1] == ["discover"]:
            found = _arguments(segment[after + 1:])
            if found is not None:
                yield here, *found
    call = make_call(segment, here)
    if call is not None:
        for line in recipes(call, makefiles, reads):
            yield from _discoveries(line, call.folder, makefiles, reads, depth + 1)


def _tokens(words: Iterable[str]) -> Iterator[str]:
    """Shell words with a subshell's parentheses, `&&`, `||` and `;` split off (`(cd`,
    `check_*.py)`, `tests;`, `pkg&&python`); a quoted script (a word with spaces) is left
    whole."""
    for whole in words:
        if any(c.isspace() for c in whole):
            yield whole
            continue
        for word in _JOINED.split(whole):  # `cd pkg&&python ...`
            if word:
                yield from _parenthesised(word)


def _parenthesised(word: str) -> Iterator[str]:
    """A word with a subshell's opening and closing parentheses split off."""
    if word in _SHELL_ENDS:
        yield word
        return
    core = word.lstrip("(")
    yield from "(" * (len(word) - len(core))
    body = core
    while body and body[-1] in ");" and (body[-1] == ";" or body.count(")") > body.count("(")):
        body = body[:-1]  # a `$(VAR)` keeps its own parenthesis
    if body:
        yield body
    yield from core[len(body):]


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
        redirect = _REDIRECT.fullmatch(word)
        if redirect is not None:  # `2>&1`, `> log`: the shell's, not unittest's
            if not redirect.group(1) and rest:
                rest.pop(0)
            continue
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


def _globs_for(cwd: str | None, start: str, pattern: str) -> list[str]:
    """The test files' globs: the pattern under the start dir, itself under the folder the
    command runs in (unittest matches the pattern against file names only). A start or a
    folder that is no plain relative one (absolute, `..`, a variable, unknown) leaves the
    pattern at any depth; a dotted start may be a package's name as well (`-s pkg.tests`)."""
    pattern = _file_pattern(pattern) or DEFAULT_PATTERN
    name = start.strip()
    name = name if name == "/" else name.rstrip("/")
    folder = plain_folder(cwd, name or ".")
    if not folder:
        return [pattern]
    out = [f"{folder}/**/{pattern}"]
    parts = name.split(".")
    if "/" not in name and len(parts) > 1 and all(p.isidentifier() for p in parts):
        dotted = plain_folder(cwd, "/".join(parts))
        out += [f"{dotted}/**/{pattern}"] if dotted else []
    return out


def _file_pattern(pattern: str) -> str | None:
    """The pattern as a glob of one file name, or None where it is none (unittest would match
    no file, or every path would be a test)."""
    text = pattern.strip()
    if not text or "/" in text or text in ("*", "**") or text.startswith("!") or \
            any(c in text for c in "$`"):  # a variable: no pattern can be named
        return None
    try:
        return globs.validate_glob(text)
    except BadInput:
        return None
