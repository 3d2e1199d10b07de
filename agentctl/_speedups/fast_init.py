"""A quicker `__init__` for the frozen, slotted records a busy agent makes thousands of.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__` (the
class's own `__setattr__` refuses), which looks the attribute up on the type again for every
field: a step and its tool call cost 27 such lookups, more than the rest of building them. The
`__init__` made here has the same signature, defaults, default factories and `__post_init__`,
and sets each field through its slot's descriptor directly. The record stays frozen.
Under `AGENTCTL_PLAIN=1` the class keeps the dataclass's own `__init__` (the checks still run).
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from types import MemberDescriptorType
from typing import Any, TypeVar

from agentctl._speedups import PLAIN

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass `cls` the quicker `__init__` (apply above
    `@dataclass(frozen=True, slots=True, ...)`)."""
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or params is None or not params.frozen:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass")
    scope: dict[str, Any] = {"_MISSING": MISSING}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for field in fields(cls):
        name = field.name
        slot = cls.__dict__.get(name)
        if not field.init or not isinstance(slot, MemberDescriptorType):
            raise TypeError(f"{cls.__name__}.{name} is not a slot set by __init__")
        scope[f"_set_{name}"] = slot.__set__
        if field.default is not MISSING:
            scope[f"_default_{name}"] = field.default
            parameter = f"{name}=_default_{name}"
        elif field.default_factory is not MISSING:
            scope[f"_factory_{name}"] = field.default_factory
            parameter = f"{name}=_MISSING"
            body.append(f"    if {name} is _MISSING:\n        {name} = _factory_{name}()")
        else:
            parameter = name
        (keywords if field.kw_only else positional).append(parameter)
        body.append(f"    _set_{name}(self, {name})")
    if PLAIN:
        return cls
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    signature = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({signature}):\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(compile(source, f"<fast __init__ of {cls.__qualname__}>", "exec"), scope)  # noqa: S102
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses an assignment to a method)
    return cls
