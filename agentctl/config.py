"""`.agentctl.toml`: discovery, validation against a schema, and the defaults every key falls back to.

Every key is declared once in `SCHEMA` with its type and default; `.agentctl.example.toml` documents
the same keys and a test keeps the two in step.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain import globs
from agentctl.domain.enums import AutonomyLevel, choices
from agentctl.domain.errors import BadInput, ConfigError

CONFIG_FILENAME = ".agentctl.toml"
Validator = Callable[[object], object]


def _str(value: object) -> object:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def _bool(value: object) -> object:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _int(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError("a non-negative integer")
    return value


def _positive_int(value: object) -> object:
    if _int(value) == 0:
        raise TypeError("a positive integer")
    return value


def _number(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise TypeError("a non-negative number")
    return float(value)


def _fraction(value: object) -> object:
    number = _number(value)
    if number > 1:  # type: ignore[operator]
        raise TypeError("a number between 0 and 1")
    return number


def _str_list(value: object) -> object:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError("a list of strings")
    return tuple(value)


def _glob_list(value: object) -> object:
    items = _str_list(value)
    try:
        return tuple(globs.validate_glob(item) for item in items)  # type: ignore[union-attr]
    except BadInput as error:
        raise TypeError(f"a list of valid globs ({error})") from None


def _command_list(value: object) -> object:
    items = _str_list(value)
    for item in items:  # type: ignore[union-attr]
        try:
            if not shlex.split(item):
                raise ValueError("empty")
        except ValueError:
            raise TypeError(f"a list of command lines ({item!r} does not split shell-style)") from None
    return items


def _regex_list(value: object) -> object:
    items = _str_list(value)
    for item in items:  # type: ignore[union-attr]
        try:
            re.compile(item)
        except re.error as error:
            raise TypeError(f"a list of regular expressions ({item!r}: {error})") from None
    return items


def _autonomy(value: object) -> object:
    try:
        return AutonomyLevel(_str(value))
    except ValueError:
        raise TypeError(f"one of {choices(AutonomyLevel)}") from None


def _checks(value: object) -> object:
    """Verification commands: strings, or tables {command, name, required, timeout_seconds, junit_xml}."""
    if not isinstance(value, list):
        raise TypeError("a list of commands or tables")
    out = []
    for item in value:
        if isinstance(item, str) and item.strip():
            out.append({"command": item})
        elif isinstance(item, dict) and isinstance(item.get("command"), str):
            unknown = set(item) - {"command", "name", "required", "timeout_seconds", "junit_xml"}
            if unknown:
                raise TypeError(f"tables with command, name, required, timeout_seconds, junit_xml "
                                f"(unknown: {', '.join(sorted(unknown))})")
            out.append(dict(item))
        else:
            raise TypeError("a list of command strings or tables with a 'command' key")
    return tuple(out)


def _aliases(value: object) -> object:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TypeError("a table of name = \"path or URL\"")
    return dict(value)


LOCKFILES = (
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock", "uv.lock",
    "Cargo.lock", "Gemfile.lock", "composer.lock", "go.sum", "gradle.lockfile", "*.lock",
)
GENERATED = (
    "dist/**", "build/**", "target/**", "*.min.js", "*.min.css", "*_pb2.py", "*.pb.go",
    "**/generated/**", "*.generated.*",
)
PRODUCTION_CONFIG = (
    "**/config/**", "*Config.java", "*Configuration.java", "config.py", "settings.py",
    "*production*", "*.properties", "application*.yml", "application*.yaml",
)
SECRET_FILES = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*.p12", "*.pfx",
                ".npmrc", ".pypirc", ".netrc", "credentials*.json")

SCHEMA: dict[str, dict[str, tuple[Validator, object]]] = {
    "policy": {
        "max_autonomy": (_autonomy, AutonomyLevel.SUPERVISED_PR),
        "default_autonomy": (_autonomy, AutonomyLevel.DRY_RUN),
        "repository_allowlist": (_str_list, ()),
    },
    "repositories": {},  # free-form aliases, validated as a whole
    "boundary": {
        "forbidden": (_glob_list, (".github/**", "infra/**", "deployment/**", *SECRET_FILES[:4])),
        "allowed": (_glob_list, ()),
        "lockfiles": (_glob_list, LOCKFILES),
        "generated": (_glob_list, GENERATED),
        "allow_lockfile_changes": (_bool, False),
        "allow_generated_changes": (_bool, False),
    },
    "verification": {
        "commands": (_checks, ()),
        "timeout_seconds": (_number, 600.0),
        "infra_patterns": (_regex_list, ()),
        "redact_logs_up_to_bytes": (_int, 64 * 1024 * 1024),
    },
    "tools": {
        "allow_shell": (_bool, False),
        "secret_files": (_glob_list, SECRET_FILES),
        "max_result_bytes": (_positive_int, 16_384),
    },
    "tools.commands": {
        "deny": (_command_list, ("git push *", "git remote *", "git config *", "curl *",
                                 "wget *", "ssh *", "scp *", "sudo *", "rm -rf /*")),
        "ask": (_command_list, ("pip install *", "npm install *", "rm -rf *")),
        "allow": (_command_list, ("python *", "python3 *", "pytest *", "ls *", "cat *",
                                  "grep *", "git status *", "git diff *",
                                  "git log *", "mvn *", "gradle *", "npm test *", "make *",
                                  "go test *", "cargo test *", "sleep *", "true", "echo *")),
    },
    "env": {
        "allowlist": (_str_list, ("PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "VIRTUAL_ENV")),
        "passthrough": (_str_list, ()),
    },
    "budget": {
        "max_attempts": (_positive_int, 2),
        "wall_seconds": (_number, 1800.0),
        "max_tool_calls": (_positive_int, 500),
        "max_output_bytes": (_positive_int, 100 * 1024 * 1024),
        "backoff_initial_seconds": (_number, 1.0),
        "backoff_max_seconds": (_number, 60.0),
    },
    "judge": {
        "strict": (_bool, True),
        "min_confidence": (_fraction, 0.7),
        "command": (_str, ""),
        "timeout_seconds": (_number, 120.0),
        "max_diff_lines": (_positive_int, 1000),
        "production_config": (_glob_list, PRODUCTION_CONFIG),
    },
    "agent": {
        "default": (_str, "noop"),
    },
    "worker": {
        "lease_ttl_seconds": (_number, 30.0),
        "poll_seconds": (_number, 1.0),
    },
}


@dataclass(frozen=True, slots=True)
class Config:
    """Validated settings: `section(name)[key]`, every key present (file value or default)."""

    values: Mapping[str, Mapping[str, object]]
    source: Path | None

    def __getitem__(self, dotted: str) -> object:
        section, _, key = dotted.rpartition(".")
        return self.values[section][key]

    @property
    def repositories(self) -> Mapping[str, str]:
        return self.values["repositories"]  # type: ignore[return-value]

    # Typed accessors: the schema guarantees each key's type, these tell the type checker.
    def text(self, key: str) -> str:
        return str(self[key])

    def flag(self, key: str) -> bool:
        return bool(self[key])

    def number(self, key: str) -> float:
        return float(self[key])  # type: ignore[arg-type]

    def integer(self, key: str) -> int:
        return int(self[key])  # type: ignore[call-overload]

    def strings(self, key: str) -> tuple[str, ...]:
        return tuple(self[key])  # type: ignore[arg-type]

    def autonomy(self, key: str) -> AutonomyLevel:
        return AutonomyLevel(self[key])

    def checks(self) -> tuple[Mapping[str, object], ...]:
        return tuple(self["verification.commands"])  # type: ignore[arg-type]


def defaults() -> Config:
    return Config(values=_validate({}, "<defaults>"), source=None)


def load(path: Path) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config is not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    return Config(values=_validate(data, str(path)), source=path)


def _validate(data: Mapping[str, object], where: str) -> dict[str, dict[str, object]]:
    sections = _flatten_sections(data, where)
    unknown = set(sections) - set(SCHEMA)
    if unknown:
        name = sorted(unknown)[0]
        raise ConfigError(f"{where}: unknown section [{name}]; expected one of: "
                          f"{', '.join(SCHEMA)}")
    values: dict[str, dict[str, object]] = {}
    for section, keys in SCHEMA.items():
        given = sections.get(section, {})
        if section == "repositories":
            values[section] = _check(where, "repositories", _aliases, given)  # type: ignore[assignment]
            continue
        for key in given:
            if key not in keys:
                raise ConfigError(f"{where}: unknown key '{section}.{key}'; expected one of: "
                                  f"{', '.join(keys)}")
        values[section] = {
            key: _check(where, f"{section}.{key}", check, given[key]) if key in given else default
            for key, (check, default) in keys.items()
        }
    return values


def _flatten_sections(data: Mapping[str, object], where: str) -> dict[str, dict[str, object]]:
    """`{"tools": {"commands": {...}}}` -> `{"tools": {...}, "tools.commands": {...}}`."""
    out: dict[str, dict[str, object]] = {}
    for name, body in data.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{where}: top-level key '{name}' must be a [section]")
        plain = {}
        for key, value in body.items():
            if isinstance(value, dict) and f"{name}.{key}" in SCHEMA:
                out[f"{name}.{key}"] = value
            else:
                plain[key] = value
        out[name] = plain
    return out


def _check(where: str, key: str, check: Validator, value: object) -> object:
    try:
        return check(value)
    except TypeError as error:
        raise ConfigError(f"{where}: '{key}' must be {error}, got {value!r}") from None


def discover(explicit: str | None, cwd: Path) -> Config:
    """--config / AGENTCTL_CONFIG, else the nearest .agentctl.toml upwards, else the user's."""
    chosen = explicit or os.environ.get("AGENTCTL_CONFIG")
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        return load(path)
    for folder in (cwd, *cwd.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file():
            return load(candidate)
    user_file = user_config_path()
    return load(user_file) if user_file.is_file() else defaults()


def user_config_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("agentctl")) / "config.toml"
