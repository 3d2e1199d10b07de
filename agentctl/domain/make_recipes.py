"""The shell lines a `make` call runs, read from the base's Makefile.

A verify command `make test` whose recipe runs `python -m unittest discover -p 'check_*.py'`
names its test files as surely as the command itself would: the recipe is read so that the
pattern joins the test side. Only the base's text is ever read (the caller's `texts`), so a
patch that edits the Makefile moves no file across the rule. This is a reader of the plain
Makefiles tests are run through, not GNU make: variables (`=`, `:=`, `?=`, `+=`, and a call's
`VAR=value`), the default target, prerequisites, `$(MAKE) target` and `include` are followed;
both branches of a conditional are read; a function (`$(shell ...)`) is left as written, which
names no folder and no pattern.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from agentctl.domain.lazy_regex import lazy_regex

# the names GNU make tries, in its order, when no `-f` is given
DEFAULT_NAMES = ("GNUmakefile", "makefile", "Makefile")
MAKES = frozenset({"make", "gmake", "$(MAKE)", "${MAKE}"})
_DEPTH = 8  # nested makes, includes and prerequisites followed at most
_ASSIGN = lazy_regex(r"(?:(?:override|export)\s+)*([A-Za-z_][\w.-]*)\s*(\+=|\?=|:::=|::=|:=|!=|=)"
                     r"\s*(.*)")
_RULE = lazy_regex(r"([^:=#\t][^:=#]*?)\s*::?\s*(?!=)(.*)")
_INCLUDE = lazy_regex(r"-?(?:include|sinclude)\s+(.*)")
_DIRECTIVE = lazy_regex(r"(?:ifeq|ifneq|ifdef|ifndef|else|endif|define|endef|undefine|vpath"
                        r"|unexport|export|override)\b")
_REFERENCE = lazy_regex(r"\$(?:\(([A-Za-z_][\w.-]*)\)|\{([A-Za-z_][\w.-]*)\}|([@<^*?$]))")
# make's options that take a value, short and long (a long one also as `--opt=value`)
_VALUED = {"-C": "dir", "-f": "file", "-I": "", "-o": "", "-W": "", "--directory": "dir",
           "--file": "file", "--makefile": "file", "--include-dir": "", "--old-file": "",
           "--assume-old": "", "--new-file": "", "--assume-new": "", "--what-if": ""}


def plain_folder(cwd: str | None, folder: str) -> str | None:
    """`folder` relative to `cwd` (both relative to the repository's root, "" the root); None
    where either is unknown or not a plain relative folder (absolute, `~`, `..`, a variable
    or a glob): then no one folder can be named."""
    text = folder.strip()
    if cwd is None or not text or text.startswith(("/", "~")) or ".." in text.split("/") or \
            any(c in "*?[]{}\\$`'\"" or ord(c) < 32 for c in text):
        return None
    joined = posixpath.normpath(posixpath.join(cwd or ".", text))
    return "" if joined == "." else joined


@dataclass(frozen=True, slots=True)
class MakeCall:
    """One `make` in a command: the folder it runs in (None: unknown), the file named by
    `-f` (else make's default names), its targets and its `VAR=value` overrides."""

    folder: str | None
    file: str = ""
    targets: tuple[str, ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()

    def candidates(self) -> tuple[str, ...]:
        """The paths make would read, in its order (the first the base has is the one)."""
        if self.folder is None:
            return ()
        if self.file:
            path = plain_folder(self.folder, self.file)
            return (path,) if path else ()
        return tuple(posixpath.join(self.folder, name) for name in DEFAULT_NAMES)


def make_call(words: Sequence[str], cwd: str | None) -> MakeCall | None:
    """The call when `words` (one simple command) run make, else None."""
    index = 0
    while index < len(words) and (_ASSIGN().fullmatch(words[index]) or words[index] == "env"):
        index += 1  # `VAR=1 make test`, `env VAR=1 make test`
    if index >= len(words) or posixpath.basename(words[index]) not in MAKES:
        return None
    folder, file = cwd, ""
    targets: list[str] = []
    overrides: list[tuple[str, str]] = []
    rest = list(words[index + 1:])
    while rest:
        word = rest.pop(0)
        if word == "--":
            targets += [w for w in rest if "=" not in w]
            break
        key, equals, value = word.partition("=")
        valued = _VALUED.get(key if word.startswith("--") else word[:2])
        if valued is not None:
            if word.startswith("--"):
                value = value if equals else (rest.pop(0) if rest else "")
            else:
                value = word[2:] or (rest.pop(0) if rest else "")
            if valued == "dir":
                folder = plain_folder(folder, value)
            elif valued == "file":
                file = value
            continue
        if word in ("-j", "-l") and rest and rest[0].isdigit():
            rest.pop(0)
        if word.startswith("-"):
            continue
        assigned = _ASSIGN().fullmatch(word)
        if assigned is not None:
            overrides.append((assigned.group(1), assigned.group(3)))
        else:
            targets.append(word)
    return MakeCall(folder, file, tuple(targets), tuple(overrides))


@dataclass(slots=True)
class Reads:
    """What following the calls needed of the base: files not asked for yet (`wanted`) and
    the Makefiles it read (`read`: files a verify command runs through)."""

    wanted: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)

    def want(self, path: str) -> None:
        if path not in self.wanted:
            self.wanted.append(path)

    def note(self, path: str) -> None:
        if path not in self.read:
            self.read.append(path)


@dataclass(slots=True)
class _Rule:
    prerequisites: list[str] = field(default_factory=list)
    recipe: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Makefile:
    variables: dict[str, str] = field(default_factory=dict)
    rules: dict[str, _Rule] = field(default_factory=dict)
    default: str = ""


def recipes(call: MakeCall, texts: Mapping[str, str | None], reads: Reads,
            depth: int = 0) -> Iterator[str]:
    """Each shell line `call` runs, its variables expanded, in the order make runs them
    (prerequisites first). `texts`: the base's files asked for so far (None: the base has no
    such file); a file not asked for yet is added to `wanted` (the caller reads it from the
    base and asks again), and the call runs nothing until then."""
    candidates = call.candidates()
    unknown = [name for name in candidates if name not in texts]
    if unknown:
        for name in unknown:
            reads.want(name)
        return
    found = next((name for name in candidates if texts[name] is not None), None)
    if found is None or call.folder is None or depth > _DEPTH:
        return
    made = _Makefile()
    _parse(made, call.folder, found, texts, reads, depth)
    made.variables.update(call.overrides)
    done: set[str] = set()
    for target in call.targets or ((made.default,) if made.default else ()):
        yield from _run(made, target, done, depth)


def _run(made: _Makefile, target: str, done: set[str], depth: int) -> Iterator[str]:
    if target in done or depth > _DEPTH:
        return
    done.add(target)
    rule = made.rules.get(target)
    if rule is None:
        return
    for prerequisite in rule.prerequisites:
        yield from _run(made, _expand(prerequisite, made.variables, target), done, depth + 1)
    for line in rule.recipe:
        yield _expand(line.lstrip("@-+ \t"), made.variables, target)


def _parse(made: _Makefile, folder: str, path: str, texts: Mapping[str, str | None],
           reads: Reads, depth: int) -> None:
    """Variables and rules of one file (and of what it includes) into `made`."""
    reads.note(path)
    current: list[_Rule] = []
    for line in _logical_lines(texts.get(path) or ""):
        if line.startswith("\t"):
            for rule in current:
                rule.recipe.append(line[1:])
            continue
        text = _uncommented(line).strip()
        if not text:
            continue
        included = _INCLUDE().fullmatch(text)
        assigned = _ASSIGN().fullmatch(text)
        ruled = _RULE().fullmatch(text)
        if included is not None:
            current = []
            for name in _expand(included.group(1), made.variables).split():
                other = plain_folder(folder, name)
                if other is None or depth >= _DEPTH:
                    continue
                if other not in texts:
                    reads.want(other)
                elif texts[other] is not None:
                    _parse(made, folder, other, texts, reads, depth + 1)
        elif assigned is not None:
            current = []
            _assign(made.variables, *assigned.group(1, 2, 3))
        elif ruled is not None:
            current = _rules(made, ruled.group(1), ruled.group(2))
        elif _DIRECTIVE().match(text):
            continue  # both branches of a conditional are read
        else:
            current = []


def _rules(made: _Makefile, targets: str, after: str) -> list[_Rule]:
    """The rules of one `targets: prerequisites ; recipe` line (a target-specific variable
    or a pattern rule names none that runs)."""
    names = [t for t in _expand(targets, made.variables).split() if "%" not in t]
    prerequisites, _, inline = after.partition(";")
    if _ASSIGN().fullmatch(prerequisites.strip()) and not inline:
        return []
    out: list[_Rule] = []
    for name in names:
        rule = made.rules.setdefault(name, _Rule())
        rule.prerequisites += prerequisites.split()
        if inline.strip():
            rule.recipe.append(inline.strip())
        out.append(rule)
        if not made.default and not name.startswith("."):
            made.default = name
    return out


def _assign(variables: dict[str, str], name: str, operator: str, value: str) -> None:
    if operator == "!=":  # a shell's output: unknown
        variables.pop(name, None)
    elif operator == "?=":
        variables.setdefault(name, value)
    elif operator == "+=":
        variables[name] = f"{variables[name]} {value}" if variables.get(name) else value
    elif operator in (":=", "::=", ":::="):
        variables[name] = _expand(value, variables)
    else:
        variables[name] = value


def _expand(text: str, variables: Mapping[str, str], target: str = "",
            depth: int = 0) -> str:
    """`$(VAR)`, `${VAR}`, `$@` and `$$` replaced; an unknown variable is left as written."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name is None:
            special = match.group(3)
            return "$" if special == "$" else target if special == "@" else match.group(0)
        if name == "MAKE":
            return "make"
        value = variables.get(name)
        if value is None or depth >= _DEPTH:
            return match.group(0)
        return _expand(value, variables, target, depth + 1)
    return _REFERENCE().sub(one, text)


def _logical_lines(text: str) -> Iterator[str]:
    """The file's lines with backslash-newline continuations joined."""
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending += raw[:-1] + " "
            continue
        yield pending + raw
        pending = ""
    if pending:
        yield pending


def _uncommented(line: str) -> str:
    return line.split("#", 1)[0] if "#" in line and "\\#" not in line else line
