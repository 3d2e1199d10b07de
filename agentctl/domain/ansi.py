"""Terminal escape codes out of runner output, before anything matches or summarizes it.

A coloured pytest (`--color=yes` in its config) writes `\x1b[31mFAILED\x1b[0m tests/...`; a
summary or a pattern must see `FAILED tests/...`. JUnit XML written by such a run carries the
same codes spelled `#x1B[...m`.
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # two-character escapes
    r"|#x1[bB]\[[0-9;]*[A-Za-z]"  # the same colours as JUnit XML writers escape them
)


def strip_ansi(text: str) -> str:
    if "\x1b" not in text and "#x1" not in text:
        return text
    return _ESCAPES.sub("", text)
