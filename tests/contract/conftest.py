"""The storage port's implementations, each test run on all three: the in-memory fake
(`agentctl.testing`), SQLite and PostgreSQL. What passes here holds for the use cases on each."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.home import Home, resolve_home
from agentctl.services.unit_of_work import Storage
from agentctl.store.storage import Store
from agentctl.testing import InMemoryStorage


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    if request.param == "memory":
        return InMemoryStorage()
    home = resolve_home(str(tmp_path / "home"))
    if request.param == "postgresql":
        home = Home(root=home.root, database_url=request.getfixturevalue("postgres").database())
    return Store(home)
