"""Secrets an agent held: a passthrough variable's value is in the agent's hands on purpose, so
its patch is searched for the value in the shapes a program would write it in, not only as is.

The redactor hides plain, base64 and URL-encoded copies; an agent that wants a value out writes
it hex-encoded, reversed, as a list of characters or escaped. Whatever is found, a patch from a
run that held one is for a person to review: the finding names the variable, never the value.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from agentctl.domain.enums import Severity
from agentctl.domain.findings import DiffLine, JudgeFinding

# Passed through to say where a model is, not to authorize anything.
ENDPOINT_VARIABLES = frozenset({"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE",
                                "GOOGLE_GEMINI_BASE_URL"})
MIN_SEARCHED_CHARS = 8  # shorter values would match ordinary text
# What separates the items of a list of characters (`['s', 'e']`, `"s","e"`, `(115, 101)`).
_LIST_NOISE = re.compile(r"[\s'\"`\[\](){},;]+")
# A list form found where the form itself is already found says nothing more.
_WITHOUT_LIST = {"list of characters": "plain", "reversed list of characters": "reversed"}


def encodings(value: str) -> tuple[tuple[str, str], ...]:
    """(form, text) pairs: the value as a patch might carry it. Base64 and base32 come at each
    byte alignment (their stable middle), so a value inside a longer encoded text is found."""
    raw = value.encode("utf-8", "surrogateescape")
    hex_lower = raw.hex()
    forms: list[tuple[str, str]] = [
        ("plain", value), ("reversed", value[::-1]),
        ("hex", hex_lower), ("hex", hex_lower.upper()), ("reversed hex", raw[::-1].hex()),
        ("percent-encoded", "".join(f"%{b:02x}" for b in raw)),
        ("percent-encoded", "".join(f"%{b:02X}" for b in raw)),
        ("escaped", "".join(f"\\x{b:02x}" for b in raw)),
        ("escaped", "".join(f"\\x{b:02X}" for b in raw)),
        ("escaped", "".join(f"\\u{ord(c):04x}" for c in value)),
        ("escaped", "".join(f"\\{b:03o}" for b in raw)),
    ]
    for name, encode, group, bits in (
        ("base64", base64.b64encode, 3, 6), ("base64", base64.urlsafe_b64encode, 3, 6),
        ("base32", base64.b32encode, 5, 5),
    ):
        forms += [(name, text) for text in _aligned(encode, raw, group, bits)]
    return tuple(dict.fromkeys((form, text) for form, text in forms if text))


def listed(value: str) -> tuple[tuple[str, str], ...]:
    """The value as a list of characters or of their codes, with the list's punctuation gone:
    what to look for in a text squeezed the same way (`squeezed`)."""
    forms = [("list of characters", squeezed(value)),
             ("reversed list of characters", squeezed(value[::-1])),
             ("list of character codes", ",".join(str(ord(c)) for c in value))]
    return tuple((form, text) for form, text in forms if len(text) >= MIN_SEARCHED_CHARS)


def squeezed(text: str) -> str:
    return _LIST_NOISE.sub("", text)


def _codes(text: str) -> str:
    """Numbers separated by commas with nothing else around them: `[115, 101]` -> `115,101`."""
    return re.sub(r"[^\d,]+", "", re.sub(r"\s+", "", text))


def found_forms(value: str, text: str) -> tuple[str, ...]:
    """The forms of `value` that `text` holds (empty when none, or when the value is too short
    to search for without matching ordinary text)."""
    if len(value) < MIN_SEARCHED_CHARS:
        return ()
    found = [form for form, encoded in encodings(value)
             if len(encoded) >= MIN_SEARCHED_CHARS and encoded in text]
    flat, codes = squeezed(text), _codes(text)
    for form, encoded in listed(value):
        if _WITHOUT_LIST.get(form) not in found \
                and encoded in (codes if form == "list of character codes" else flat):
            found.append(form)
    return tuple(dict.fromkeys(found))


def holds(value: str, secret: str) -> bool:
    """Whether `value` carries `secret` in any of its forms (`Bearer <key>`, base64...)."""
    return bool(found_forms(secret, value))


def held(passed: Mapping[str, str]) -> dict[str, str]:
    """Of the passthrough variables a run's processes were given, those that are secrets: all
    but a model endpoint's base URL that carries no credentials (`https://user:pass@...`)."""
    return {name: value for name, value in passed.items()
            if value and not (name in ENDPOINT_VARIABLES and "@" not in value)}


def held_secret_findings(held: Mapping[str, str], lines: Sequence[DiffLine],
                         clean: Callable[[str], str] = str) -> list[JudgeFinding]:
    """For a run whose agent held `held` (variable name -> value): one finding per variable and
    file whose added lines carry the value in some form (CRITICAL), then one that names every
    variable held and asks for a person's review. `clean` redacts a file name for the message."""
    if not held:
        return []
    added: dict[str, list[str]] = {}
    for line in lines:
        if line.added:
            added.setdefault(line.path, []).append(line.text)
    findings: list[JudgeFinding] = []
    for path, texts in added.items():
        text = "\n".join(texts)
        for name in sorted(held):
            forms = found_forms(held[name], text)
            if forms:
                shown = clean(path)
                findings.append(JudgeFinding(
                    severity=Severity.CRITICAL, category="held-secret", file_path=shown,
                    blocks_auto_pr=True,
                    message=f"the patch adds the value of {name} ({', '.join(forms)}) in {shown}",
                ))
    findings.append(JudgeFinding(
        severity=Severity.WARNING, category="held-secret", blocks_auto_pr=True,
        message=f"the agent held {_names(held)} ([env] passthrough): a person reviews "
                "the patch before any PR",
    ))
    return findings


def _names(held: Iterable[str]) -> str:
    names = sorted(held)
    return ("secret " if len(names) == 1 else "secrets ") + ", ".join(names)


def _aligned(encode: Callable[[bytes], bytes], raw: bytes, group: int,
             bits: int) -> list[str]:
    """The encoded characters that depend on `raw` alone, at each offset in its group: a value
    inside a longer text is encoded the same way at one of them."""
    out: list[str] = []
    for offset in range(group):
        padded = bytes(offset) + raw
        text = encode(padded).decode("ascii")
        whole = len(padded) // group * (group * 8 // bits)  # the full groups' characters
        start = -(-offset * 8 // bits)
        out.append(text[start:whole])
    return out
