"""The read SQL is written once, as Core statements over tables.py (store/queries.py), and run
from its compilation ahead of time (store/compiled_queries.py): the two must not drift."""

from __future__ import annotations

from agentctl.store import compiled_queries, queries


def test_the_compiled_read_sql_is_what_the_statements_compile_to_now() -> None:
    assert queries.TARGET.read_text() == queries.render(), (
        "store/compiled_queries.py is stale: run 'python -m agentctl.store.queries'")
    assert compiled_queries.SQL == queries.compiled()


def test_every_statement_a_read_names_is_compiled_for_both_dialects() -> None:
    assert set(compiled_queries.SQL) == {"sqlite", "postgresql"}
    for dialect, statements in compiled_queries.SQL.items():
        assert sorted(statements) == queries.names(), dialect


def test_sqlite_statements_take_named_parameters_and_postgresql_ones_pyformat() -> None:
    sqlite_sql, constants = compiled_queries.SQL["sqlite"]["resolve:run"]
    assert ":low" in sqlite_sql and ":high" in sqlite_sql and "?" not in sqlite_sql
    assert 4 in constants.values()  # the LIMIT travels as a value, not as text
    postgres_sql, _ = compiled_queries.SQL["postgresql"]["resolve:run"]
    assert "%(low)s" in postgres_sql and "%(high)s" in postgres_sql


def test_the_statuses_the_views_call_live_are_the_attempt_statuses_that_hold_a_lease() -> None:
    from agentctl.domain.enums import AttemptStatus
    from agentctl.store.run_views import _LIVE

    assert set(_LIVE.values()) == {AttemptStatus.STARTING.value, AttemptStatus.ACTIVE.value}
