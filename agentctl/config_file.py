"""Which config file applies, found without importing the config schema: commands that only
read load the config only when a file exists (for `[store]`), and start faster when none does."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

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
    return Path(platformdirs.user_config_dir("agentctl")) / "config.toml"
