"""The write path's SQL is written once, as Core statements over tables.py
(store/statements.py), and run from its compilation ahead of time
(store/compiled_statements.py); the statements whose shape a call decides are joined from
compiled pieces (store/prebuilt.py). Neither may drift from what SQLAlchemy compiles."""

from __future__ import annotations

import re
from itertools import combinations

import pytest

from agentctl.store import compiled_statements, prebuilt, statements, tables
from agentctl.store.seals import SEALED
from agentctl.store.table_shapes import SHAPES

DIALECTS = ("sqlite", "postgresql")


def test_the_compiled_write_sql_is_what_the_statements_compile_to_now() -> None:
    assert statements.TARGET.read_text() == statements.render(), (
        "store/compiled_statements.py is stale: run 'python -m agentctl.store.statements'")
    done = statements.compiled()
    assert compiled_statements.STATEMENTS == done["STATEMENTS"]
    assert compiled_statements.PIECES == done["PIECES"]


def _compiled(statement: object, dialect: str) -> str:
    """What SQLAlchemy compiles `statement` to for `dialect`."""
    return str(statement.compile(dialect=statements.dialects()[dialect]))  # type: ignore[attr-defined]


def _expanded(statement: object, dialect: str) -> str:
    """What SQLAlchemy sends for `statement` once its list parameter holds its values, the
    casts PostgreSQL's compiler adds to each value left out (the server takes a text
    parameter's type from the column it is compared with)."""
    made = statement.compile(dialect=statements.dialects()[dialect],  # type: ignore[attr-defined]
                             compile_kwargs={"render_postcompile": True})
    return re.sub(r"::VARCHAR\b(?=[,)])", "", str(made))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_update_a_save_makes_is_the_one_sqlalchemy_compiles(dialect: str) -> None:
    for table in tables.metadata.sorted_tables:
        names = [column.name for column in table.columns][1:]
        subsets = [(), *[(name,) for name in names], *combinations(names[:4], 2),
                   tuple(names), tuple(reversed(names))]
        for changed in subsets:
            for compare in ((False, True) if "status" in table.c else (False,)):
                joined = prebuilt.update(table.name, dialect, changed, compare).sql
                expected = _compiled(statements.update_of(table, changed, compare), dialect)
                assert joined == expected, (table.name, changed, compare)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_find_is_the_select_sqlalchemy_compiles(dialect: str) -> None:
    for table in tables.metadata.sorted_tables:
        names = [column.name for column in table.columns]
        for matched in [(), (names[1],), tuple(names[1:3]), tuple(names)]:
            for order_by in (None, names[0], names[-1]):
                joined = prebuilt.matching(table.name, dialect, matched, order_by).sql
                expected = _compiled(statements.matching(table, matched, order_by), dialect)
                assert joined == expected, (table.name, matched, order_by)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_list_parameter_expands_as_sqlalchemy_expands_it(dialect: str) -> None:
    for count in (1, 3, 500):
        keys = [f"k{at}" for at in range(count)]
        for name, spec in SEALED.items():
            table = tables.metadata.tables[name]
            joined = prebuilt.read_back(name, dialect, count).sql
            assert joined == _expanded(statements.sealed_read(table, spec.columns)
                                       .params(keys=keys), dialect), (name, count)
        joined = prebuilt.listing("directories", "ids", dialect, count).sql
        made = statements.statement("directories", dialect).params(ids=keys)  # type: ignore[attr-defined]
        assert joined == _expanded(made, dialect)
    assert prebuilt.listed("keys", ["a", "b"]) == {"keys_1": "a", "keys_2": "b"}


def test_the_tables_the_write_path_knows_are_those_of_tables_py() -> None:
    for table in tables.metadata.sorted_tables:
        shape = SHAPES[table.name]
        assert shape.columns == tuple(column.name for column in table.columns)
        (key,) = table.primary_key.columns
        assert shape.key == key.name
    assert SHAPES["attempt"].defaults == {"fenced_writes": 0}
    assert SHAPES["pull_request"].booleans == ("draft",)
    assert SHAPES["judge_report"].floats == ("confidence",)
    assert set(SHAPES) == set(tables.metadata.tables)


def test_sqlite_inserts_take_tuples_and_everything_else_names() -> None:
    sql, order, _ = compiled_statements.STATEMENTS["sqlite"]["insert:tool_call"]
    assert order == SHAPES["tool_call"].columns and sql.count("?") == len(order)
    sql, order, constants = compiled_statements.STATEMENTS["sqlite"]["fence"]
    assert order is None and ":attempt_id" in sql and "?" not in sql
    assert constants["fenced_writes_1"] == 1  # `+ 1` travels as a value
    sql, order, _ = compiled_statements.STATEMENTS["postgresql"]["next_queued"]
    assert order is None and "%(now)s" in sql and sql.endswith("FOR UPDATE SKIP LOCKED")
