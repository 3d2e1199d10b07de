"""The writer's side of sealing: the seal of each row a transaction wrote, from the schema.

Which tables and columns are sealed is `seal_rules`; `audit verify` re-digests the rows from
the database with the same rules and `domain.audit.row_digest`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING

from agentctl.domain.audit import row_digest
from agentctl.store import prebuilt
from agentctl.store.seal_rules import (
    NOT_RECORDS,
    final_lease,
    optional_positions,
    sealed_columns,
    without_unset,
)
from agentctl.store.table_shapes import SHAPES

if TYPE_CHECKING:
    from agentctl.store.transactions import Transaction

_CHUNK = 500  # keys per read-back query


@dataclass(frozen=True, slots=True)
class SealedTable:
    key: str
    columns: tuple[str, ...]  # in schema order
    flags: tuple[int, ...] = ()  # positions of Boolean columns (a driver may give True or 1)
    floats: tuple[int, ...] = ()  # positions of Float columns (1 and 1.0 are one value)
    optional: tuple[int, ...] = ()  # positions of columns added later (left out when NULL)

    def digest(self, values: Sequence[object]) -> str:
        """The seal of a row given as its sealed columns' values in schema order."""
        if not (self.flags or self.floats or self.optional):
            return row_digest(tuple(values))
        row = list(values)
        for at in self.flags:
            row[at] = None if row[at] is None else int(bool(row[at]))
        for at in self.floats:
            row[at] = None if row[at] is None else float(row[at])  # type: ignore[arg-type]
        return row_digest(without_unset(row, self.optional))


def _sealed() -> dict[str, SealedTable]:
    found = {}
    for table in SHAPES.values():
        if table.name in NOT_RECORDS:
            continue
        names = sealed_columns(table.name, table.columns)
        found[table.name] = SealedTable(
            table.key, names,
            flags=tuple(i for i, name in enumerate(names) if name in table.booleans),
            floats=tuple(i for i, name in enumerate(names) if name in table.floats),
            optional=optional_positions(table.name, names))
    return found


SEALED: Mapping[str, SealedTable] = _sealed()


def seal_rows(transaction: Transaction, touched: Mapping[str, Iterable[str]]
              ) -> dict[str, dict[str, str]]:
    """{table: {id: seal}} of the rows written in this transaction, read back as stored."""
    sealed: dict[str, dict[str, str]] = {}
    for name, keys in touched.items():
        spec = SEALED[name]
        wanted = sorted(keys)
        key_index = spec.columns.index(spec.key)
        found = sealed.setdefault(name, {})
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            query = prebuilt.read_back(name, transaction.dialect, len(chunk))
            for row in prebuilt.run(transaction, query, prebuilt.listed("keys", chunk)).rows:
                found[str(row[key_index])] = spec.digest(row)
    return sealed


@lru_cache(maxsize=64)
def inserted(name: str, fields: tuple[str, ...]) -> Callable[[Sequence[object]], tuple[str, str]]:
    """(id, seal) of a row as inserted, its values in `fields` order: no read-back. The values
    are what the driver stores (text, integers, floats, None), so the seal is the stored one."""
    spec = SEALED[name]
    pick = itemgetter(*(fields.index(column) for column in spec.columns))
    key = fields.index(spec.key)
    digest = spec.digest if spec.flags or spec.floats or spec.optional else row_digest

    def seal(row: Sequence[object]) -> tuple[str, str]:
        return str(row[key]), digest(pick(row))

    return seal


def lease_seals(transaction: Transaction, attempts: Iterable[str]) -> dict[str, str]:
    """{attempt id: seal of its final lease bookkeeping} of the attempts written in this
    transaction that have ended, read back as stored (`seal_rules.LEASE_SEAL`)."""
    found = {}
    for attempt_id in sorted(attempts):
        for row in prebuilt.run_named(transaction, "get:attempt", {"key": attempt_id}).mappings():
            values = final_lease(row)
            if values is not None:
                found[attempt_id] = row_digest(values)
    return found
