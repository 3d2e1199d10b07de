"""Secret redaction: what is stored as safe or shown has been through here first.

Patterns catch the common shapes (provider tokens, private keys, credentials in URLs,
`password=...` assignments); literals catch known values, such as the environment variables
agentctl scrubbed or passed through to an agent.

Logs are large and secrets rare, so the full patterns only run on the lines where a cheap
literal anchor (`AKIA`, `ghp_`, `@`, `password`, a known value...) occurs.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

MIN_LITERAL_CHARS = 8

_SECRET_WORDS = r"(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)"
PATTERNS: tuple[tuple[str, str], ...] = (
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    ("openai-key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b"),
    ("url-credentials", r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
    ("bearer", r"(?<=[Bb]earer )[A-Za-z0-9._~+/=-]{16,}"),
    # NAME = "value" (quoted, spaces allowed inside) where NAME says secret...
    ("quoted-assignment", rf"(?i:{_SECRET_WORDS}[\w.-]*[\"']?\s*[:=]\s*)(?P<quote>[\"'])"
                          rf"(?!\[REDACTED|\$)[^\"'\n]{{4,}}(?P=quote)"),
    # ...or NAME=value with no spaces (env files, shell, URLs). `password = get_password()` in
    # code and `token=${TOKEN}` are left alone.
    ("assignment", rf"(?i:{_SECRET_WORDS}[\w.-]*[:=])(?![\s\"'$]|\[REDACTED)"
                   rf"[^\s\"',;()]{{4,}}(?![\w(])"),
)
# Anchors: a secret of each kind contains one of these (the secret words in any case).
_ANCHORS = ("PRIVATE KEY-----", "AKIA", "ASIA", "gh", "github_pat_", "glpat-", "xox", "sk-",
            "AIza", "eyJ", "@", "earer ")
_LOWER_ANCHORS = ("password", "passwd", "secret", "token", "api_key", "api-key", "apikey",
                  "access_key", "access-key", "accesskey")


@dataclass(frozen=True, slots=True)
class Redactor:
    literals: tuple[str, ...] = field(default=())

    def redact(self, text: str) -> tuple[str, int]:
        """The text with each secret replaced by `[REDACTED:<kind>]`, and how many were found."""
        regex = _compiled(self.literals)
        count = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            count += 1
            kind = (match.lastgroup or "secret").replace("_", "-")
            if kind in ("assignment", "quoted-assignment"):
                return _keep_name(match.group(0))
            return f"[REDACTED:{kind}]"

        spans = _candidate_spans(text, self.literals)
        if spans is None:
            return regex.sub(replace, text), count
        pieces: list[str] = []
        done = 0
        for start, end in spans:
            pieces.append(text[done:start])
            pieces.append(regex.sub(replace, text[start:end]))
            done = end
        pieces.append(text[done:])
        return "".join(pieces), count

    def clean(self, text: str) -> str:
        return self.redact(text)[0]

    def knowing(self, values: Iterable[str]) -> Redactor:
        """This redactor, also hiding `values` and the encoded forms a command could print
        them in (base64, URL encoding)."""
        return Redactor(literals=tuple(dict.fromkeys((*self.literals, *encoded_forms(values)))))


def encoded_forms(values: Iterable[str]) -> list[str]:
    """Each value, its base64 (standard and URL-safe, padded or not), its URL encoding, its
    hex (either case) and the value reversed: what a command prints a value it hides as."""
    out: list[str] = []
    for value in values:
        if len(value) < MIN_LITERAL_CHARS:
            continue
        raw = value.encode("utf-8", "surrogateescape")
        standard, urlsafe = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
        out += [value, standard, standard.rstrip("="), urlsafe, urlsafe.rstrip("="),
                urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value),
                raw.hex(), raw.hex().upper(), value[::-1]]
    return list(dict.fromkeys(out))


@lru_cache(maxsize=32)
def _compiled(literals: tuple[str, ...]) -> re.Pattern[str]:
    parts = [f"(?P<{kind.replace('-', '_')}>{pattern})" for kind, pattern in PATTERNS]
    usable = _usable(literals)
    if usable:
        parts.append("(?P<secret_value>" + "|".join(re.escape(v) for v in usable) + ")")
    return re.compile("|".join(parts))


def _usable(literals: tuple[str, ...]) -> list[str]:
    return sorted({v for v in literals if len(v) >= MIN_LITERAL_CHARS}, key=len, reverse=True)


def _candidate_spans(text: str, literals: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """Line ranges holding an anchor, merged; None when only a full scan is safe."""
    lower = text.lower()
    if len(lower) != len(text):  # rare non-ASCII case mappings shift offsets
        return None
    hits: list[tuple[int, int]] = []
    for haystack, anchors in ((text, (*_ANCHORS, *_usable(literals))), (lower, _LOWER_ANCHORS)):
        for anchor in anchors:
            position = haystack.find(anchor)
            while position != -1:
                hits.append((position, len(anchor)))
                position = haystack.find(anchor, position + len(anchor))
    spans: list[tuple[int, int]] = []
    for position, length in sorted(hits):
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position + length)
        if text.startswith("PRIVATE KEY-----", position):  # a key block spans lines
            closing = text.find("PRIVATE KEY-----", position + length)
            end = text.find("\n", closing) if closing != -1 else -1
        end = len(text) if end == -1 else end
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _keep_name(text: str) -> str:
    """Keep `password=` so a reader sees what was there; hide only the value (and keep quotes)."""
    match = re.match(r"(.*?[:=]\s*)([\"']?)", text)
    prefix, quote = (match.group(1), match.group(2)) if match else ("", "")
    return f"{prefix}{quote}[REDACTED:assignment]{quote}"
