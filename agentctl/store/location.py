"""Where state lives: the home folder, its database URL and artifact folder. No heavy imports."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DATABASE_FILENAME = "agentctl.db"


@dataclass(frozen=True, slots=True)
class Home:
    root: Path
    database_url: str

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def sqlite_path(self) -> Path | None:
        """The database file when the URL is SQLite, for the lean read path."""
        prefix = "sqlite:///"
        if self.database_url.startswith(prefix):
            return Path(self.database_url[len(prefix):])
        return None


def resolve_home(explicit: str | None) -> Home:
    """--home, else AGENTCTL_HOME, else the user data dir; the URL from AGENTCTL_DATABASE_URL."""
    chosen = explicit or os.environ.get("AGENTCTL_HOME")
    if chosen:
        root = Path(chosen).expanduser().resolve()
    else:
        import platformdirs

        root = Path(platformdirs.user_data_dir("agentctl"))
    url = os.environ.get("AGENTCTL_DATABASE_URL") or f"sqlite:///{root / DATABASE_FILENAME}"
    return Home(root=root, database_url=url)
