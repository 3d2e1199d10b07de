"""Which rows are sealed into the event log, and the seal of each as it is stored.

Every column of every record table is sealed, taken from the schema itself, so a column added
later is sealed without anyone remembering to. Left out: the log itself (chained by its own
hashes), `meta`, and the lease bookkeeping every heartbeat and fenced write rewrites (the
attempt's expiry, last heartbeat and write count: when a worker was last alive, not what
happened; sealing them would take an event per heartbeat).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import Connection, Table, select

from agentctl.domain.audit import row_digest
from agentctl.store import tables

NOT_RECORDS = frozenset({"event", "event_head", "meta"})
LEASE_BOOKKEEPING = {"attempt": frozenset({"lease_expires_at", "last_heartbeat_at",
                                            "fenced_writes"})}
_CHUNK = 500  # keys per read-back query


@dataclass(frozen=True, slots=True)
class SealedTable:
    table: Table
    key: str
    columns: tuple[str, ...]  # in schema order


def _sealed() -> dict[str, SealedTable]:
    found = {}
    for table in tables.metadata.sorted_tables:
        if table.name in NOT_RECORDS:
            continue
        left_out = LEASE_BOOKKEEPING.get(table.name, frozenset())
        (key,) = [column.name for column in table.primary_key.columns]
        columns = tuple(c.name for c in table.columns if c.name not in left_out)
        found[table.name] = SealedTable(table, key, columns)
    return found


SEALED: Mapping[str, SealedTable] = _sealed()


def seal_rows(connection: Connection, touched: Mapping[str, Iterable[str]]
              ) -> dict[str, dict[str, str]]:
    """{table: {id: seal}} of the rows written in this transaction, read back as stored."""
    sealed: dict[str, dict[str, str]] = {}
    for name, keys in touched.items():
        spec = SEALED[name]
        wanted = sorted(keys)
        columns = [spec.table.c[column] for column in spec.columns]
        key_index = spec.columns.index(spec.key)
        found = sealed.setdefault(name, {})
        for start in range(0, len(wanted), _CHUNK):
            query = select(*columns).where(
                spec.table.c[spec.key].in_(wanted[start:start + _CHUNK]))
            for row in connection.execute(query):
                found[str(row[key_index])] = row_digest(row)
    return sealed


def select_all(name: str) -> str:
    """The SQL that reads every sealed column of a table, for `audit verify`."""
    return f"SELECT {', '.join(SEALED[name].columns)} FROM {name}"  # names from our schema
