"""What the write path knows of each table, from `tables.py` by way of its compilation ahead
(`compiled_statements.SHAPES`): no SQLAlchemy at run time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentctl.store.compiled_statements import SHAPES as _COMPILED
from agentctl.store.rows import Value


@dataclass(frozen=True, slots=True)
class TableShape:
    name: str
    columns: tuple[str, ...]  # in the table's order: how pending rows and INSERTs hold values
    key: str
    defaults: Mapping[str, Value]  # the value of each column a record may not carry
    booleans: tuple[str, ...]
    floats: tuple[str, ...]


SHAPES: Mapping[str, TableShape] = {name: TableShape(name=name, **fields)
                                    for name, fields in _COMPILED.items()}
