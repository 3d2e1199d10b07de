"""The row codecs against the schema: each writes exactly its table's columns (but the ones the
store keeps for itself), so a field added to a record without a column, or a column without a
field, is caught here rather than by a failing INSERT."""

from __future__ import annotations

import pytest

from agentctl.store import tables
from agentctl.store.rows import RowMapping, evidence, runs, tasks

CODECS = {codec.table: codec for module in (tasks, runs, evidence)
          for codec in vars(module).values() if isinstance(codec, RowMapping)}
STORE_ONLY = {"attempt": {"fenced_writes", "directory"}}  # written by their own updates


def test_every_record_table_has_a_codec() -> None:
    assert set(CODECS) == set(tables.metadata.tables) - {"event_head", "meta"}


@pytest.mark.parametrize("name", sorted(CODECS))
def test_a_codec_writes_exactly_its_tables_columns(name: str) -> None:
    codec = CODECS[name]
    columns = [column.name for column in tables.metadata.tables[name].columns]
    assert sorted(codec.columns) == sorted(set(columns) - STORE_ONLY.get(name, set()))
    assert codec.key == columns[0]



def test_row_values_are_the_row_in_the_inserts_order(samples: dict[str, object]) -> None:
    """`to_values` (what a batched INSERT takes) holds exactly `to_row`'s values, each under its
    column, and the column's default where the record has none."""
    checked = 0
    for record in samples.values():
        codec = next((c for c in CODECS.values() if c.record is type(record)), None)
        if codec is None or codec.table == "event":
            continue
        columns = tuple(reversed([c.name for c in tables.metadata.tables[codec.table].columns]))
        defaults = {name: f"default of {name}" for name in columns}
        row = codec.to_row(record)  # type: ignore[arg-type]
        values = codec.to_values(columns, defaults)(record)  # type: ignore[arg-type]
        assert values == tuple(row.get(name, defaults[name]) for name in columns)
        checked += 1
    assert checked >= 10
