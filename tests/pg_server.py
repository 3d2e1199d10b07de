"""A throw-away PostgreSQL 15 server for the tests: `initdb` + `pg_ctl` into a temporary
directory, on a free port, run as the `postgres` user (the server refuses root), torn down after.

Tests never skip for want of it: when the binaries are missing the session fails, naming them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(os.environ.get("AGENTCTL_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
SERVER_USER = "postgres"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_server_user(*argv: str) -> list[str]:
    if os.geteuid() != 0:
        return list(argv)
    return ["runuser", "-u", SERVER_USER, "--", *argv]


@dataclass
class PostgresServer:
    """One server; `database()` hands each test a database of its own."""

    listen: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="agentctl-pg-")))
    _count: int = 0
    _template: str = ""

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def host(self) -> str:
        return self.listen.split(",")[0]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SERVER_USER}@{self.host}:{self.port}/{database}"

    def start(self) -> PostgresServer:
        if not (BIN / "initdb").exists():
            raise RuntimeError(f"PostgreSQL 15 binaries not found in {BIN} "
                               "(apt-get install postgresql-15, or set AGENTCTL_TEST_PG_BIN)")
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.root, SERVER_USER)
        subprocess.run(_as_server_user(str(BIN / "initdb"), "-D", str(self.data), "-A", "trust",
                                       "-U", SERVER_USER, "-E", "UTF8", "--no-sync"),
                       check=True, capture_output=True, timeout=120)
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(f"\nlisten_addresses = '{self.listen}'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.root}'\nfsync = off\n"
                       "synchronous_commit = off\nfull_page_writes = off\n"
                       "max_connections = 200\nshared_buffers = 64MB\n")
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 10.0.0.0/8 trust\n")  # the network namespaces' addresses
        self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.root / "server.log"))
        return self

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(_as_server_user(str(BIN / "pg_ctl"), "-D", str(self.data), *args),
                       check=True, capture_output=True, timeout=120)

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("stop", "-m", mode, "-w", "-t", "60")

    def restart(self) -> None:
        self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.root / "server.log"))

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def database(self, *, empty: bool = False) -> str:
        """A new database, at the schema's head (a copy of a template migrated once) unless
        `empty`; its SQLAlchemy URL."""
        if not empty and not self._template:
            self._template = self._create("agentctl_template", template=None)
            _migrate(self.url(self._template))
        self._count += 1
        name = f"t{os.getpid()}_{self._count}_{int(time.time() * 1000) % 100000}"
        return self.url(self._create(name, template=None if empty else self._template))

    def copy(self, url: str) -> str:
        """A new database copied from the one at `url` (no connection to it may be open)."""
        self._count += 1
        name = f"c{os.getpid()}_{self._count}_{int(time.time() * 1000) % 100000}"
        return self.url(self._create(name, template=url.rsplit("/", 1)[1]))

    def _create(self, name: str, *, template: str | None) -> str:
        import psycopg

        with psycopg.connect(host=self.host, port=self.port, user=SERVER_USER,
                             dbname="postgres", autocommit=True) as connection:
            suffix = f' TEMPLATE "{template}"' if template else ""
            connection.execute(f'CREATE DATABASE "{name}"{suffix}')
        return name


def _migrate(url: str) -> None:
    from sqlalchemy import create_engine

    from agentctl.home import Home
    from agentctl.store import migrate

    engine = create_engine(url)
    try:
        migrate.upgrade(engine, Home(root=Path("/nonexistent"), database_url=url))
    finally:
        engine.dispose()  # a template must have no connections when it is copied
