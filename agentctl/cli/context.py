"""What every command shares: the global options and, built on first use, home, config, store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from agentctl.cli.root_options import RootOptions
from agentctl.config_file import config_path
from agentctl.home import Home, resolve_home
from agentctl.services.queries.repositories import repository_here, repository_named
from agentctl.store.task_views import TaskViews

if TYPE_CHECKING:
    from agentctl.config import Config
    from agentctl.store.storage import Store

V = TypeVar("V", bound=TaskViews)


@dataclass
class State:
    home_option: str | None = None
    config_option: str | None = None
    _home: Home | None = field(default=None, repr=False)
    _config: Config | None = field(default=None, repr=False)
    _store: Store | None = field(default=None, repr=False)

    @property
    def home(self) -> Home:
        if self._home is None:
            # A config file is loaded whole even by commands that only read: one that does not
            # load is an error, never a silent fall back to another store.
            path = config_path(self.config_option, Path.cwd())
            store = self.config.store if path is not None else None
            url, artifacts = (store.url, store.artifacts) if store is not None else ("", "")
            self._home = resolve_home(self.home_option, url=url, artifacts=artifacts)
        return self._home

    @property
    def config(self) -> Config:
        if self._config is None:
            # the config's schema and checks: for a config file, or a command that needs one
            from agentctl.config import discover

            self._config = discover(self.config_option, Path.cwd())
        return self._config

    @property
    def store(self) -> Store:
        """The read-write store, imported here: a command that only reads uses `views(...)` and
        never loads it (the blobs, the audit signer, the schema)."""
        if self._store is None:
            from agentctl.store.storage import Store

            self._store = Store(self.home)
        return self._store

    def views(self, kind: type[V]) -> V:
        """Read views where "the newest run" means the newest of the repository you stand in.
        `kind` is the lightest the command needs, imported at the top of its module: `TaskViews`
        (ids, tasks, sessions, events), `RunViews` (and runs with their evidence) or `Views`
        (and the rows of run show --tree); the others are never loaded."""
        return kind(self.home, repository=repository_here(Path.cwd()))

    def repository_filter(self, text: str | None) -> str | None:
        """A listing's `--repo`, as tasks record it (aliases from config work too)."""
        if text is None:
            return None
        return repository_named(text, self.config.repositories, Path.cwd())


def state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        given = root.obj if isinstance(root.obj, RootOptions) else RootOptions()
        root.obj = State(home_option=given.home, config_option=given.config)
    return root.obj
