"""Where state lives: the home folder, its database URL and artifact folder. No heavy imports.

Outside the store: the use cases need the home too (what a run must not see), and the composition
root builds the store from it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from agentctl.domain.errors import BadInput

DATABASE_FILENAME = "agentctl.db"


@dataclass(frozen=True, slots=True)
class Home:
    root: Path
    database_url: str
    artifacts_dir: Path | None = None  # `[store] artifacts`: a shared folder for several hosts

    @property
    def artifacts(self) -> Path:
        return self.artifacts_dir or self.root / "artifacts"

    @property
    def sqlite_path(self) -> Path | None:
        """The database file when the URL is SQLite, for the lean read path."""
        prefix = "sqlite:///"
        if self.database_url.startswith(prefix):
            return Path(self.database_url[len(prefix):])
        return None


def resolve_home(explicit: str | None, *, url: str = "", artifacts: str = "") -> Home:
    """--home, else AGENTCTL_HOME, else the user data dir. The database: AGENTCTL_DATABASE_URL,
    else `url` (`[store] url`), else the SQLite file in the home; the artifact store `artifacts`
    (`[store] artifacts`, relative to the home) or the home's `artifacts/`."""
    chosen = explicit or os.environ.get("AGENTCTL_HOME")
    if chosen:
        root = Path(chosen).expanduser().resolve()
    else:
        root = Path(platformdirs.user_data_dir("agentctl"))
    if root.exists() and not root.is_dir():

        raise BadInput(f"the state home {root} is not a directory; pass --home DIR "
                       "(or AGENTCTL_HOME) naming a folder")
    database = os.environ.get("AGENTCTL_DATABASE_URL") or url or \
        f"sqlite:///{root / DATABASE_FILENAME}"
    shared = (root / Path(artifacts).expanduser()).resolve() if artifacts else None
    return Home(root=root, database_url=database, artifacts_dir=shared)
