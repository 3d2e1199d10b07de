"""Path globs with the gitignore conventions people already know from .gitignore and CODEOWNERS.

- `*` and `?` stay within one path segment, `**` spans any number of segments;
- a pattern with no slash (`*.lock`, `.env`) matches at any depth, one with a slash is anchored at
  the repository root (`src/**`, `.github/workflows/*.yml`);
- a pattern that matches a directory matches everything below it (`infra` covers `infra/main.tf`).

Negation (`!pattern`) is deliberately not supported: a boundary that can be punched through by a
later line is hard to review.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agentctl.domain.errors import BadInput


def validate_glob(pattern: str) -> str:
    """Return the normalised pattern or raise BadInput saying what is wrong with it."""
    text = pattern.strip()
    if not text:
        raise BadInput("empty path glob; expected a pattern such as 'src/**' or '*.lock'")
    if text.startswith("!"):
        raise BadInput(f"malformed glob {pattern!r}: negation ('!') is not supported")
    if "\\" in text or "\0" in text:
        raise BadInput(f"malformed glob {pattern!r}: use '/' as the separator")
    if ".." in text.split("/"):
        raise BadInput(f"malformed glob {pattern!r}: '..' may not appear in a path glob")
    if _unclosed_bracket(text):
        raise BadInput(f"malformed glob {pattern!r}: '[' is never closed")
    if text.startswith("./"):
        text = text[2:]
    if "[" not in text:  # only a set can make a bad regex: the rest is escaped or fixed
        return text
    try:
        _translate(text)
    except (re.error, ValueError):
        raise BadInput(f"malformed glob {pattern!r}: a [...] set is empty, reversed or spans "
                       "a '/'") from None
    return text


def _unclosed_bracket(text: str) -> bool:
    depth_open = False
    for char in text:
        if char == "[" and not depth_open:
            depth_open = True
        elif char == "]" and depth_open:
            depth_open = False
    return depth_open


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    return _translate(validate_glob(pattern))


def _translate(text: str) -> re.Pattern[str]:
    anchored = text.startswith("/") or "/" in text.rstrip("/")
    text = text.strip("/")
    parts = text.split("/")
    regex_parts: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex_parts.append(".*" if last else "(?:[^/]+/)*")
            continue
        regex_parts.append(_segment(part) + ("" if last else "/"))
    body = "".join(regex_parts)
    prefix = "" if anchored else "(?:[^/]+/)*"
    return re.compile(f"^{prefix}{body}(?:/.*)?$", re.DOTALL)


def _segment(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.index("]", i + 1)  # ValueError: a set that spans a '/' or never closes
            body = part[i + 1 : end]
            negated = body.startswith("!")
            body = body[1:] if negated else body
            if not body:
                raise ValueError("empty set")
            # Inside a set only `-` keeps its meaning; `[`, `\`, `^`, `&`, `~`, `|` are literal
            # (escaped, so `re` sees no nested set or set operation).
            body = re.sub(r"([\[\\^&~|])", r"\\\1", body)
            out.append(f"[{'^' if negated else ''}{body}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def matches(pattern: str, path: str) -> bool:
    # (a path ending in a newline is left to the regex, whose `$` matches before it)
    if (segments := plain_segments(pattern)) is not None and not path.endswith("\n"):
        return segments.match(path)
    return compile_glob(pattern).match(path) is not None


@dataclass(frozen=True)
class PlainSegments:
    """A glob whose segments hold no `?` or `[...]` set and whose `**` are only at its ends
    (`.env`, `*.lock`, `**/go.sum`, `dist/**`): matched segment by segment with string
    operations, as its regex would match. Most rules are such (a run's defaults: 123 globs,
    some 120 of them), and compiling each one's regex cost a run 5-9 ms."""

    at_any_depth: bool  # no slash, or a leading `**/`: it may start below the root
    something_below: bool  # a trailing `/**`: a path must go on below the last segment
    pieces: tuple[tuple[str, ...], ...]  # each segment split at its `*`s

    def match(self, path: str) -> bool:
        names = path.split("/")
        last_start = len(names) - len(self.pieces) - (1 if self.something_below else 0)
        for start in range(last_start + 1 if self.at_any_depth else min(1, last_start + 1)):
            if start and not names[start - 1]:  # the segments `**/` spans are never empty
                return False
            if all(_segment_matches(piece, name)
                   for piece, name in zip(self.pieces, names[start:], strict=False)):
                return True
        return False


def _segment_matches(pieces: tuple[str, ...], name: str) -> bool:
    """Whether one path segment matches one glob segment split at its `*`s."""
    if len(pieces) == 1:
        return name == pieces[0]
    first, *middle, last = pieces
    if len(name) < len(first) + len(last) or not name.startswith(first) \
            or not name.endswith(last):
        return False
    at, end = len(first), len(name) - len(last)
    for piece in middle:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@lru_cache(maxsize=1024)
def plain_segments(pattern: str) -> PlainSegments | None:
    """The pattern as plain segments, or None when only its regex can match it (a `?`, a set,
    a `**` inside); a malformed pattern is refused as `compile_glob` refuses it."""
    text = validate_glob(pattern)
    if "?" in text or "[" in text:
        return None
    anchored = text.startswith("/") or "/" in text.rstrip("/")
    parts = text.strip("/").split("/")
    leading = len(parts) > 1 and parts[0] == "**"
    trailing = len(parts) > 1 and parts[-1] == "**"
    inner = parts[1 if leading else 0:len(parts) - 1 if trailing else len(parts)]
    if not inner or any(not part or part == "**" for part in inner):
        return None
    return PlainSegments(at_any_depth=leading or not anchored, something_below=trailing,
                         pieces=tuple(tuple(part.split("*")) for part in inner))


def first_match(patterns: Iterable[str], path: str) -> str | None:
    """The first pattern that matches `path`, so a decision can name the rule that made it."""
    for pattern in patterns:
        if matches(pattern, path):
            return pattern
    return None


def matching_paths(patterns: Sequence[str], listing: str) -> list[str]:
    """The paths of `listing` (each ended by a NUL, as `git ls-files -z` prints them) that one of
    `patterns` matches, in listing order. Each pattern's longest run of literal characters is
    looked for in the listing as a whole, and only the paths holding one are matched: on a
    200,000-file repository, a few scans of the text instead of a regex per path and pattern."""
    text = "\0" + listing
    spans: set[tuple[int, int]] = set()
    for pattern in patterns:
        literal = _longest_literal(pattern)
        if not literal:  # `*`, `**/?`: every path may match
            return [path for path in listing.split("\0")
                    if path and first_match(patterns, path) is not None]
        position = text.find(literal)
        while position != -1:
            start, end = text.rfind("\0", 0, position) + 1, text.find("\0", position)
            end = len(text) if end == -1 else end
            spans.add((start, end))
            position = text.find(literal, end)
    return [path for path in (text[start:end] for start, end in sorted(spans))
            if first_match(patterns, path) is not None]


def _longest_literal(pattern: str) -> str:
    """The longest text every path the pattern matches holds as it is: a run between wildcards
    and sets, less the slashes at its ends (`**/` may match nothing, the root has no slash)."""
    runs = re.split(r"\[[^\]/]+\]|[*?]", validate_glob(pattern))
    return max((run.strip("/") for run in runs), key=len)


def representative_path(pattern: str) -> str:
    """A concrete path the pattern matches, for asking whether another glob covers it."""
    text = validate_glob(pattern).strip("/")
    text = re.sub(r"\[[^\]]*\]", "x", text)
    return text.replace("**", "x").replace("*", "x").replace("?", "x")
