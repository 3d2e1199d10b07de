"""Which config file applies, found without importing the config schema: commands that only
read need the config only when a file exists (for `[store]`), and start faster when none does."""

from __future__ import annotations

import os
from pathlib import Path

from agentctl.domain.errors import ConfigError

CONFIG_FILENAME = ".agentctl.toml"


def config_path(explicit: str | None, cwd: Path) -> Path | None:
    """--config / AGENTCTL_CONFIG, else the nearest .agentctl.toml upwards, else the user's."""
    chosen = explicit or os.environ.get("AGENTCTL_CONFIG")
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        return path
    for folder in (cwd, *cwd.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file():
            return candidate
    user_file = user_config_path()
    return user_file if user_file.is_file() else None


def user_config_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("agentctl")) / "config.toml"


def store_keys(path: Path) -> tuple[str, str]:
    """`[store] url` and `artifacts` from a config file, checked as the full loader checks them,
    without it: where the data is, even when the rest of the file does not load (commands that
    only read never needed a valid config; the first write reports what is wrong with it)."""
    import tomllib

    from agentctl.config.checks import database_url, text

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "", ""
    section = data.get("store", {})
    if not isinstance(section, dict):
        return "", ""
    values = {"url": "", "artifacts": ""}
    for key, value in section.items():
        check = {"url": database_url, "artifacts": text}.get(key)
        if check is None:
            raise ConfigError(f"{path}: unknown key 'store.{key}'; expected one of: "
                              "artifacts, url")
        try:
            values[key] = str(check(value))
        except TypeError as error:
            raise ConfigError(f"{path}: 'store.{key}' must be {error}, got {value!r}") from None
    return values["url"], values["artifacts"]
