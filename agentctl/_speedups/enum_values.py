"""`Enum.value` as a plain property: Python 3.11's `Enum.value` is a Python-level descriptor
(~4x slower to read), and a busy agent's every tool call reads a dozen of them on the way to its
rows and events. The property reads the member's `_value_`, where `enum` keeps it. Same value,
same type; members and lookups are untouched. Under `AGENTCTL_PLAIN=1`, nothing changes."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from operator import attrgetter

from agentctl._speedups import PLAIN


def plain_values(vocabularies: Iterable[object]) -> None:
    """Give each `StrEnum` class among `vocabularies` (a module's globals) the plain `.value`."""
    if PLAIN:
        return
    value = property(attrgetter("_value_"))
    for vocabulary in list(vocabularies):
        if isinstance(vocabulary, type) and issubclass(vocabulary, StrEnum) \
                and vocabulary is not StrEnum:
            type.__setattr__(vocabulary, "value", value)
