"""Agent-chosen text (paths, test ids, messages quoting them) is data wherever it is shown.

A file name may hold a newline, an escape sequence or Markdown: written raw into a PR body it
could add a section (`### Approvals`), open an HTML comment that hides the rest, or rewrite a
table. The path guard and the boundary refuse control characters in paths (`control_character`);
what is shown anyway goes through `visible` (one line, its control characters spelled out) and,
in Markdown, `md_text` or `md_code`, so content can never change the document's structure.
"""

from __future__ import annotations

import re

from agentctl.domain.lazy_regex import lazy_regex

# C0 and C1 controls and DEL; the line and paragraph separators (a new line to some readers);
# the bidi embeddings, overrides and isolates, which make text show in another order than it
# reads (a path that looks like another)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The same but tab, newline and carriage return: in a document whose lines and indents are the
# text's own (a diff, a log), only what is never the text's own layout is spelled out
_HIDDEN = lazy_regex("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# What CommonMark or GitHub's Markdown reads as markup anywhere on a line (code, emphasis,
# links, HTML and entities, table cells, strikethrough, math), `_` where it can open or close
# emphasis, and what starts a block at the start of a line (heading, list, quote): escaped with
# a backslash, which CommonMark defines for any ASCII punctuation.
_MARKDOWN = lazy_regex(r"[\\`*\[\]<>&|~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_BLOCK_START = lazy_regex(r"^( *)([#+=-]|\d+(?=[.)]))")
# What GitHub acts on in a body's text though Markdown does not: `@name` notifies a person or a
# team, a closing keyword closes the issue it names (`Fixes #1`, `closes o/r#2`, a URL), and
# `#1`/`GH-1` links the body into that timeline. A word joiner (U+2060, invisible) after
# `@`, after the first letter of a keyword that names an issue and between `#` or `GH-` and the
# number breaks each.
_JOINER = "\u2060"
_ACTED_ON = lazy_regex(r"@|(?<=\b[cfr])(?=(?:lose[sd]?|ix|ixe[sd]|esolve[sd]?):?\s+"
                       r"(?:[\w.-]+/[\w.-]+)?(?:#|gh-|https?://))|(?<=#)(?=\d)|(?<=\bgh-)(?=\d)",
                       re.IGNORECASE)
_BACKTICKS = lazy_regex(r"`+")


def control_character(text: str) -> str | None:
    """The first control character in `text` (C0, DEL, C1, a line or paragraph separator, a
    bidi control) as it is spelled in a message, or None when there is none."""
    found = _CONTROL.search(text)
    return None if found is None else _spelled(found.group())


def visible(text: str) -> str:
    """`text` on one line with its control characters spelled out (`\\n`, `\\x1b`,
    `\\u202e`)."""
    return _CONTROL.sub(lambda match: _spelled(match.group()), text)


def spelled_out(text: str) -> str:
    """`text` with its control characters but tab, newline and carriage return spelled out
    (`\\u202e`): for a whole document agentctl built (the run page), whose own markup holds
    none, so a diff line or an argument cannot reorder or break what a reviewer reads."""
    return _HIDDEN().sub(lambda match: _spelled(match.group()), text)


def md_text(text: object) -> str:
    """Agent-chosen text as Markdown that renders as exactly that text: one line, nothing in
    it read as markup, HTML, a heading, a list item or a table cell border, and nothing GitHub
    acts on (a mention, a closing keyword, an issue reference); the joiners that keep it so
    are invisible."""
    inert = _ACTED_ON().sub(lambda match: match.group() + _JOINER, visible(str(text)))
    escaped = _MARKDOWN().sub(lambda match: "\\" + match.group(), inert)
    return _BLOCK_START().sub(lambda match: match.group(1) + _block_escaped(match.group(2)),
                            escaped)


def md_code(text: object, *, in_table: bool = False) -> str:
    """Agent-chosen text as a Markdown code span: a fence longer than any run of backticks in
    it, so it cannot close early; one line. In a table cell `|` is escaped, which GitHub's
    tables read as a plain `|` inside a code span too."""
    shown = visible(str(text))
    if in_table:
        shown = shown.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS().findall(shown)), default=0)
    fence = "`" * (longest + 1)
    if not shown.strip(" ") or shown.startswith("`") or shown.endswith("`") or \
            (shown.startswith(" ") and shown.endswith(" ")):
        shown = f" {shown} "  # CommonMark strips one space from each side
    return f"{fence}{shown}{fence}"


def _block_escaped(start: str) -> str:
    """`#` as `\\#`; a list number `12.` as `12\\.` (the digits themselves need nothing)."""
    return f"{start}\\" if start[0].isdigit() else f"\\{start}"


def _spelled(character: str) -> str:
    code = ord(character)
    return _NAMED.get(character) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
