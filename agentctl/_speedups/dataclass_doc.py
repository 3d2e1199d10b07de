"""A dataclass's made-up docstring, written when it is first read instead of when the class is.

`dataclasses` gives each class that has no docstring one made of its signature
(`Point(x: 'int', y: 'int' = 0)`), calling `inspect.signature` as the class is made: about
110 us a class, some 90 classes and 10 ms of a run's start-up, for a text nothing reads.
`install` wraps `dataclasses._process_class` (looked up as a module global at each decoration)
so that such a class holds a descriptor in `__doc__` instead, which writes the same text the
first time it is read (`type.__doc__` calls a stored descriptor's `__get__`). Python 3.14 makes
the text another way (through `annotationlib`): there, and under `AGENTCTL_PLAIN=1`, nothing is
installed.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable
from typing import Any

from agentctl._speedups import PLAIN

PLAIN_PROCESS: Callable[..., type] | None = getattr(dataclasses, "_process_class", None)
_PENDING = "(the signature, written when this is read)"  # truthy: dataclasses writes none


class SignatureDoc:
    """The `__doc__` `dataclasses` would have written for the class holding it."""

    def __get__(self, instance: object, owner: type) -> str:
        try:
            signature = str(inspect.signature(owner)).replace(" -> None", "")
        except (TypeError, ValueError):
            signature = ""
        text = owner.__name__ + signature
        type.__setattr__(owner, "__doc__", text)
        return text


def install() -> None:
    """From here on, a dataclass without a docstring gets its signature's text when read."""
    if PLAIN or PLAIN_PROCESS is None or sys.version_info >= (3, 14):
        return
    setattr(dataclasses, "_process_class", _process_class)  # noqa: B010


def _process_class(cls: type, *args: Any) -> type:
    assert PLAIN_PROCESS is not None  # (installed only where it is)
    if getattr(cls, "__doc__"):  # noqa: B009 - as dataclasses asks it
        return PLAIN_PROCESS(cls, *args)
    cls.__doc__ = _PENDING
    made = PLAIN_PROCESS(cls, *args)
    type.__setattr__(made, "__doc__", SignatureDoc())
    return made
