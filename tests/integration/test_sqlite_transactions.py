"""A SQLite home's write transactions on the stdlib driver (store/transactions.py): connections
kept between transactions, never one whose transaction could not end, and all of them closed at
exit (the last to close checkpoints the WAL into the database)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentctl.store.transactions import SqliteDatabase, close_all, sqlite_database


def _marked(database: SqliteDatabase) -> bool:
    """Whether the transaction's connection is one that ran `_mark` before (a TEMP table lives
    as long as its connection)."""
    transaction = database.begin()
    try:
        cursor = transaction.cursor()
        cursor.execute("SELECT count(*) FROM sqlite_temp_master WHERE name = 'mark'")
        return bool(cursor.fetchone()[0])
    finally:
        transaction.rollback()
        transaction.close()


def _mark(database: SqliteDatabase) -> None:
    transaction = database.begin()
    transaction.cursor().execute("CREATE TEMP TABLE mark (x)")
    transaction.commit()
    transaction.close()


def test_a_connection_is_kept_for_the_next_transaction_with_its_settings(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "a.db")
    _mark(database)
    assert _marked(database)
    transaction = database.begin()
    cursor = transaction.cursor()
    assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert cursor.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    transaction.rollback()
    transaction.close()
    database.close()


def test_a_connection_whose_commit_failed_is_closed_not_kept(tmp_path: Path) -> None:
    """A deferred foreign key left broken makes COMMIT fail: the transaction is still open on
    that connection, which is closed (SQLite rolls it back), and the next transaction gets a
    new one, with nothing of the failed one written."""
    database = SqliteDatabase(tmp_path / "a.db")
    setup = database.begin()
    setup.cursor().execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    setup.cursor().execute("CREATE TABLE child (parent REFERENCES parent(id) "
                           "DEFERRABLE INITIALLY DEFERRED)")
    setup.commit()
    setup.close()
    _mark(database)
    failing = database.begin()
    failing.cursor().execute("INSERT INTO child VALUES (42)")
    with pytest.raises(sqlite3.IntegrityError):
        failing.commit()
    failing.close()
    assert not _marked(database)
    check = database.begin()
    assert check.cursor().execute("SELECT count(*) FROM child").fetchone()[0] == 0
    check.rollback()
    check.close()
    database.close()


def test_closing_every_database_checkpoints_its_wal_into_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    database = sqlite_database(path)
    transaction = database.begin()
    transaction.cursor().execute("CREATE TABLE t (x)")
    transaction.cursor().execute("INSERT INTO t VALUES (1)")
    transaction.commit()
    transaction.close()
    assert path.with_name("a.db-wal").exists()
    close_all()
    assert not path.with_name("a.db-wal").exists()  # the last connection folded it in
    with sqlite3.connect(path) as reader:
        assert reader.execute("SELECT x FROM t").fetchall() == [(1,)]
