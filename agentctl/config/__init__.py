"""`.agentctl.toml`: discovery, and loading into the typed, validated settings of `schema`.

An unknown section or key, or a value of the wrong type, is one ConfigError line naming the file
and the key; call sites read attributes (`config.budget.max_attempts`), which mypy checks.
"""

from __future__ import annotations

import types
import typing
from dataclasses import Field, fields, is_dataclass, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from agentctl.config.checks import Check
from agentctl.config.schema import CheckSettings, Config
from agentctl.config_file import CONFIG_FILENAME, config_path, user_config_path
from agentctl.domain.enums import choices
from agentctl.domain.errors import ConfigError
from agentctl.domain.toml_text import NotToml, parsed_toml

__all__ = ["CONFIG_FILENAME", "Config", "ConfigError", "defaults", "discover", "load",
           "sections", "user_config_path"]

_CHECK_KEYS = tuple(f.name for f in fields(CheckSettings))
S = TypeVar("S")


def defaults() -> Config:
    return Config()


def load(path: Path) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config is not UTF-8 text") from None
    try:
        data = parsed_toml(text)
    except NotToml as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    return replace(_section(Config, data, str(path), ""), source=path)


def discover(explicit: str | None, cwd: Path) -> Config:
    """--config / AGENTCTL_CONFIG, else the nearest .agentctl.toml upwards, else the user's."""
    path = config_path(explicit, cwd)
    return defaults() if path is None else load(path)


def sections(cls: type = Config, prefix: str = "") -> dict[str, tuple[str, ...]]:
    """Every section's dotted name and its keys, e.g. `{"tools.commands": ("deny", ...)}`."""
    out: dict[str, tuple[str, ...]] = {}
    keys: list[str] = []
    for item, hint in _fields(cls):
        if _is_section(hint):
            out.update(sections(hint, f"{prefix}{item.name}."))
        else:
            keys.append(item.name)
    if prefix:
        out[prefix.rstrip(".")] = tuple(keys)
    return out


def _section(cls: type[S], data: object, where: str, prefix: str) -> S:
    """Build section `cls` from its TOML table; the root (prefix "") holds the sections."""
    name = prefix.rstrip(".")
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: '{name}' must be a [section]")
    known = {item.name: hint for item, hint in _fields(typing.cast(type, cls))}
    values: dict[str, object] = {}
    for key, value in data.items():
        if not prefix and not isinstance(value, dict):
            raise ConfigError(f"{where}: top-level key '{key}' must be a [section]")
        if key not in known:
            if not prefix:
                raise ConfigError(f"{where}: unknown section [{key}]; expected one of: "
                                  f"{', '.join(known)}")
            raise ConfigError(f"{where}: unknown key '{prefix}{key}'; expected one of: "
                              f"{', '.join(known)}")
        hint = known[key]
        if _is_section(hint):
            values[key] = _section(hint, value, where, f"{prefix}{key}.")
        else:  # a key, or at the root a free-form table such as [repositories]
            values[key] = _value(hint, value, where, f"{prefix}{key}")
    return cls(**values)


def _value(hint: object, value: object, where: str, key: str) -> object:
    try:
        return _checker(hint)(value)
    except TypeError as error:
        raise ConfigError(f"{where}: '{key}' must be {error}, got {value!r}") from None


@cache
def _checker(hint: object) -> Check:
    """The check for a field's type: its Annotated check, an enum's values, or a list of tables."""
    if typing.get_origin(hint) is typing.Annotated:
        return typing.cast(Check, typing.get_args(hint)[1])
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _checker(inner[0])
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum_check(hint)
    if hint == tuple[CheckSettings, ...]:
        return _checks
    raise TypeError(f"no check for config type {hint!r}")  # a schema bug, caught by the tests


def _enum_check(enum: type[Enum]) -> Check:
    def check(value: object) -> object:
        if not isinstance(value, str):
            raise TypeError("a string")
        try:
            return enum(value)
        except ValueError:
            raise TypeError(f"one of {choices(enum)}") from None  # type: ignore[arg-type]
    return check


def _checks(value: object) -> tuple[CheckSettings, ...]:
    """Verification commands: command lines, or tables {command, name, required, timeout_seconds,
    junit_xml}, each key checked by its own type."""
    if not isinstance(value, list):
        raise TypeError("a list of commands or tables")
    out = []
    for item in value:
        if isinstance(item, str) and item.strip():
            out.append(CheckSettings(command=item))
        elif isinstance(item, dict) and isinstance(item.get("command"), str) \
                and item["command"].strip():
            unknown = set(item) - set(_CHECK_KEYS)
            if unknown:
                raise TypeError(f"tables with {', '.join(_CHECK_KEYS)} "
                                f"(unknown: {', '.join(sorted(unknown))})")
            hints = dict((f.name, h) for f, h in _fields(CheckSettings))
            typed: dict[str, Any] = {}
            for key, entry in item.items():
                try:
                    typed[key] = _checker(hints[key])(entry)
                except TypeError as error:
                    raise TypeError(f"tables whose '{key}' is {error}") from None
            out.append(CheckSettings(**typed))
        else:
            raise TypeError("a list of command strings or tables with a 'command' key")
    return tuple(out)


@cache
def _fields(cls: type) -> tuple[tuple[Field[Any], object], ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    return tuple((item, hints[item.name]) for item in fields(cls)
                 if item.metadata.get("section", True))


def _is_section(hint: object) -> TypeGuard[type]:
    return isinstance(hint, type) and is_dataclass(hint)
