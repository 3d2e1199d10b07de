"""The command guard: argv-prefix rules in three lists, `deny`, `ask`, `allow`, first match wins.

A rule is a command line split shell-style. A lone trailing `*` matches any further arguments
(zero or more); every other token must match one argument, as an fnmatch glob (case-sensitive:
`*`, `?`, `[...]`; write `[*]` for a literal star), so `rm -rf /*` covers `rm -rf /` and
`rm -rf /etc`. A command no rule matches is denied.

Deny and ask rules must not be dodged by spelling, so they are also tried against normalised
forms of the command: the program's basename (`/usr/bin/git push`), the tail after a wrapper
(`env git push`, `timeout 5 git push`, `sh -c 'git push'`) and git without its global options
(`git -C . push`). Allow rules match only the command as written: `/usr/bin/python` or
`env python` needs a rule that says so. Denying what no rule vouches for is the safe default.

A git command line an allow rule matches is also held to `git_rules`: options that write files
or run programs (`-c`, `--output`, `--exec`, ...), aliases and `-C` outside the workspace are
denied unless the allow rule names them itself.

Without `allow_shell` the command runs as argv, never through a shell, and any character sh
would act on (unquoted `| & ; < > ( )` or newline, `$` and backticks outside single quotes) is
refused before any rule: the agent asked for a shell it will not get. Globs and `~` are
passed as written (`pytest 'tests/t.py::test[a]'` needs no quoting). With `allow_shell` the
command is cut into the simple commands sh would run (pipelines, lists, `$(...)`, backticks)
and each is judged; the strictest answer wins. Variables and redirection targets cannot be
judged statically: `allow_shell` trusts the shell as far as the rules reach.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import PurePosixPath

from agentctl.domain.enums import ToolDecision
from agentctl.domain.git_rules import GLOBAL_WITH_VALUE, git_risks, named_by
from agentctl.domain.spec import CommandRules

NO_MATCH_RULE = "default: deny (no rule matched)"
SHELL_METACHARACTERS: frozenset[str] = frozenset({
    "|", "||", "&", "&&", ";", ";;", "<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", ">|",
    "(", ")", "$", "$(", "${", "`", "\n",
})
_OPERATORS = "|&;()\n"
_REDIRECT_TAIL = "<>&|"
# Programs that run their arguments as another command (`find -exec` included).
_WRAPPERS = frozenset({
    "env", "command", "exec", "builtin", "nice", "nohup", "time", "timeout", "stdbuf", "setsid",
    "xargs", "ionice", "chrt", "taskset", "sudo", "doas", "su", "busybox", "flock", "watch", "find",
    "sh", "bash", "dash", "zsh", "ksh", "fish", "eval",
})
# Shell words that are syntax rather than a program (only meaningful with allow_shell).
_SHELL_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done",
                             "while", "until", "time"})
_MAX_NESTING = 4
_MAX_VIEWS = 2048


@dataclass(frozen=True, slots=True)
class GuardDecision:
    decision: ToolDecision
    matched_rule: str | None
    reason: str | None  # None when ALLOWED

    @property
    def allowed(self) -> bool:
        return self.decision is ToolDecision.ALLOWED


def rule_matches(rule: str, argv: Sequence[str]) -> bool:
    """Whether `rule` (a command line, trailing `*` = any further arguments) matches `argv`."""
    parsed = _rule_tokens(rule)
    if parsed is None:
        return False
    tokens, open_ended = parsed
    if len(argv) < len(tokens) or (not open_ended and len(argv) != len(tokens)):
        return False
    return all(fnmatchcase(arg, token) for arg, token in zip(argv, tokens, strict=False))


@lru_cache(maxsize=1024)
def _rule_tokens(rule: str) -> tuple[tuple[str, ...], bool] | None:
    try:
        tokens = shlex.split(rule)
    except ValueError:
        return None  # config validation rejects these; never let one match anything
    if not tokens:
        return None
    if tokens[-1] == "*":
        return tuple(tokens[:-1]), True
    return tuple(tokens), False


def check_command(command: str, rules: CommandRules, *, allow_shell: bool) -> GuardDecision:
    """Judge a shell.run command line; the decision names the rule (or check) that made it."""
    if "\0" in command:
        return _denied("malformed command", "the command contains a NUL byte")
    try:
        scan = _scan(command)
    except ValueError as error:
        return _denied("malformed command", f"`{command}` cannot be split shell-style: {error}")
    if not allow_shell:
        if scan.active:
            shown = " ".join(sorted({repr(c) if c == "\n" else c for c in scan.active}))
            return _denied("shell metacharacters",
                           f"`{command}` contains shell metacharacters ({shown}) and "
                           "tools.allow_shell is off: commands run as argv, without a shell")
        try:
            argv = shlex.split(command)
        except ValueError as error:
            return _denied("malformed command", f"`{command}` cannot be split shell-style: {error}")
        if not argv:
            return _denied("malformed command", "the command is empty")
        return _judge(argv, rules)
    segments = [words for words in (_strip_shell_syntax(s) for s in scan.segments) if words]
    if not segments:
        return _denied("malformed command", "the command is empty")
    return combine([_judge(words, rules) for words in segments])


def _judge(argv: Sequence[str], rules: CommandRules) -> GuardDecision:
    shown = shlex.join(argv)
    try:
        views = _views(argv)
    except ValueError as error:
        return _denied("malformed command", f"`{shown}`: {error}")
    for rule in rules.deny:
        if any(rule_matches(rule, view) for view in views):
            return _denied(f"deny: {rule}", f"`{shown}` matches the deny rule `{rule}`")
    for rule in rules.ask:
        if any(rule_matches(rule, view) for view in views):
            return GuardDecision(ToolDecision.REQUIRES_APPROVAL, f"ask: {rule}",
                                 f"`{shown}` needs a human's approval (rule `{rule}`)")
    refused: tuple[str, str] | None = None  # (risk, the first rule that allowed it blindly)
    for rule in rules.allow:
        if rule_matches(rule, argv):
            risk = _git_risk(argv, views, rule)
            if risk is None:
                return GuardDecision(ToolDecision.ALLOWED, f"allow: {rule}", None)
            refused = refused or (risk, rule)
    if refused is not None:
        risk, rule = refused
        return _denied(f"git: {risk}", f"`{shown}`: {risk}, which `allow: {rule}` does not "
                                       "name; only a rule that names it may allow it")
    hint = ""
    if "/" in argv[0]:
        hint = "; a path-qualified program is allowed only by a rule that names it as written"
    return _denied(NO_MATCH_RULE, f"no rule allows `{shown}`{hint}")


def _git_risk(argv: Sequence[str], views: Sequence[tuple[str, ...]], rule: str) -> str | None:
    """The first thing a git command line can do that the allow rule does not name (see
    git_rules): checked on the command as written and on every git inside a wrapper."""
    parsed = _rule_tokens(rule)
    tokens = parsed[0] if parsed else ()
    for view in views:
        if PurePosixPath(view[0]).name != "git":
            continue
        for risk in git_risks(view):
            if tuple(view) != tuple(argv) or not named_by(tokens, risk):
                return risk.reason
    return None


def combine(decisions: list[GuardDecision]) -> GuardDecision:
    """Several decisions as one, strictest first: any denial, then any approval needed, else
    allowed, naming every rule that allowed (`allow: ls *; allow: grep *`)."""
    asking = ToolDecision.REQUIRES_APPROVAL
    denied = [d for d in decisions if not d.allowed and d.decision is not asking]
    asked = [d for d in decisions if d.decision is asking]
    if denied or asked:
        return (denied or asked)[0]
    rules = list(dict.fromkeys(d.matched_rule for d in decisions if d.matched_rule))
    return GuardDecision(ToolDecision.ALLOWED, "; ".join(rules) or None, None)


def _denied(rule: str | None, reason: str) -> GuardDecision:
    return GuardDecision(ToolDecision.DENIED_BY_COMMAND_GUARD, rule, reason)


def _views(argv: Sequence[str]) -> list[tuple[str, ...]]:
    """The command as written, then the forms a deny or ask rule must also see: the basename
    of the program, the tails after a wrapper, command lines inside its arguments (`sh -c`)."""
    seen: dict[tuple[str, ...], None] = {tuple(argv): None}
    pending = [(tuple(argv), 0)]
    scanned: set[str] = set()
    while pending:
        current, depth = pending.pop()
        program = PurePosixPath(current[0]).name or current[0]
        found = [((program, *current[1:]), depth), (tuple(_strip_shell_syntax(current)), depth)]
        if program in _WRAPPERS:
            found += [(current[i:], depth) for i in range(1, len(current))]
            for arg in current[1:] if depth < _MAX_NESTING else ():
                if arg not in scanned and any(c.isspace() or c in _OPERATORS for c in arg):
                    scanned.add(arg)
                    found += [(tuple(words), depth + 1) for words in _command_lines(arg)]
        if program == "git":
            found.append((_without_git_options(current), depth))
        for view, level in found:
            if view and view not in seen:
                if len(seen) >= _MAX_VIEWS:
                    raise ValueError("the command has too many readings to judge")
                seen[view] = None
                pending.append((view, level))
    return list(seen)


def _command_lines(arg: str) -> list[list[str]]:
    try:
        return [_strip_shell_syntax(segment) for segment in _scan(arg).segments]
    except ValueError:
        return []


def _without_git_options(argv: tuple[str, ...]) -> tuple[str, ...]:
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in GLOBAL_WITH_VALUE else 1
    return ("git", *argv[index:])


def _strip_shell_syntax(words: Sequence[str]) -> list[str]:
    """Drop leading keywords (`if`, `!`, `{`) and variable assignments (`FOO=1 git push`)."""
    index = 0
    while index < len(words) and (words[index] in _SHELL_KEYWORDS or _is_assignment(words[index])):
        index += 1
    return list(words[index:])


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.replace("_", "a").isalnum() and not name[0].isdigit()


@dataclass(frozen=True, slots=True)
class _Scan:
    segments: list[list[str]]
    active: list[str]  # the metacharacters sh would have acted on


class _Scanner:
    """Reads a command line as sh would, well enough to find its simple commands."""

    def __init__(self) -> None:
        self.segments: list[list[str]] = []
        self.active: list[str] = []
        self.words: list[str] = []
        self.word: list[str] = []
        self.started = False  # a word is in progress (even `''`)
        self.redirect = False  # the next word is a redirection target, not an argument
        self.quote: str | None = None
        self.closer: str | None = None  # what ends the current substitution: ")" or "`"
        self.stack: list[tuple[list[str], list[str], bool, bool, str | None, str | None]] = []

    def scan(self, text: str) -> _Scan:
        i = 0
        while i < len(text):
            i = self._step(text, i)
        if self.quote is not None or self.stack:
            raise ValueError("unbalanced quotes or command substitution")
        self._end_segment()
        return _Scan(self.segments, self.active)

    def _step(self, text: str, i: int) -> int:
        char = text[i]
        if self.quote == "'":
            if char == "'":
                self.quote = None
            else:
                self.word.append(char)
            return i + 1
        if char == "\\":
            if i + 1 >= len(text):
                raise ValueError("a trailing backslash escapes nothing")
            escaped = text[i + 1]
            if self.quote == '"' and escaped not in '$`"\\\n':
                self.word.append(char)
            if escaped != "\n":
                self.word.append(escaped)
            self.started = True
            return i + 2
        if text.startswith("$(", i):
            self.active.append("$(")
            self._open(")")
            return i + 2
        if char == "`":
            self.active.append("`")
            if self.closer == "`":
                self._close()
            else:
                self._open("`")
            return i + 1
        if char == "$" and _expands(text[i + 1:i + 2]):
            self.active.append("$")
        if self.quote == '"':
            if char == '"':
                self.quote = None
            else:
                self.word.append(char)
            return i + 1
        return self._unquoted(text, i)

    def _unquoted(self, text: str, i: int) -> int:
        char = text[i]
        if char in "'\"":
            self.quote, self.started = char, True
        elif char == ")" and self.closer == ")":
            self._close()
        elif char in " \t":
            self._end_word()
        elif char in _OPERATORS:
            self.active.append(char)
            self._end_segment()
        elif char in "<>":
            self.active.append(char)
            if "".join(self.word).isdigit():  # `2>`: a file descriptor, not an argument
                self.word, self.started = [], False
            self._end_word()
            while i + 1 < len(text) and text[i + 1] in _REDIRECT_TAIL:
                i += 1
            self.redirect = True
        else:
            self.word.append(char)
            self.started = True
        return i + 1

    def _end_word(self) -> None:
        if self.started:
            if not self.redirect:
                self.words.append("".join(self.word))
            self.redirect = False
        self.word, self.started = [], False

    def _end_segment(self) -> None:
        self._end_word()
        if self.words:
            self.segments.append(self.words)
        self.words, self.redirect = [], False

    def _open(self, closer: str) -> None:
        self.stack.append((self.words, self.word, self.started, self.redirect, self.quote,
                           self.closer))
        self.words, self.word, self.started, self.redirect = [], [], False, False
        self.quote, self.closer = None, closer

    def _close(self) -> None:
        self._end_segment()
        (self.words, self.word, self.started, self.redirect, self.quote,
         self.closer) = self.stack.pop()
        self.word.append("$(...)")  # the outer word's value is unknown until run time
        self.started = True


def _expands(following: str) -> bool:
    """Whether `$` before this character expands; sh keeps `foo$` or `$.` literally."""
    return bool(following) and (following.isalnum() or following in "_{?#@*!$-")


def _scan(command: str) -> _Scan:
    return _Scanner().scan(command)
