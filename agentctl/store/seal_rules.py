"""Which tables and columns are sealed into the event log, known without the ORM: the writer
(`store/seals.py`, from the schema) and `audit verify` (from the database it reads) agree on
them through here.

Every column of every record table is sealed, so a column or table added later is sealed
without anyone remembering to. Left out: the log itself (chained by its own hashes), `meta`,
the migration marker, and the lease bookkeeping every heartbeat and fenced write rewrites (an
attempt's expiry, last heartbeat and write count: when a worker was last alive, not what
happened; sealing them would take an event per heartbeat). Their final values are sealed apart,
as `LEASE_SEAL` rows, by the transaction that ends the attempt (and any later one that writes
it): nothing rewrites them after that, so an edit is found. An attempt that ended in a home
from before has no such seal, and nothing is compared for it. Columns are sealed in name order,
so the order a migration added them in does not matter; a column a migration added to a table
whose rows were already sealed is digested only where it holds a value (`ADDED_LATER`), so the
rows sealed before it existed keep their seals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

NOT_RECORDS = frozenset({"event", "event_head", "meta", "alembic_version"})
LEASE_BOOKKEEPING = {"attempt": frozenset({"lease_expires_at", "last_heartbeat_at",
                                           "fenced_writes"})}
ADDED_LATER = {"run": frozenset({"replay_of"})}
LEASE_SEAL = "attempt_lease"  # the seal's table name: {attempt id: digest of its final lease}
LEASE_COLUMNS = tuple(sorted(LEASE_BOOKKEEPING["attempt"]))


def sealed_columns(table: str, columns: Iterable[str]) -> tuple[str, ...]:
    """The columns of `table` that are sealed, in the order they are digested."""
    left_out = LEASE_BOOKKEEPING.get(table, frozenset())
    return tuple(sorted(column for column in columns if column not in left_out))


def optional_positions(table: str, sealed: Sequence[str]) -> tuple[int, ...]:
    """Where, among a table's sealed columns, those added later are (`ADDED_LATER`)."""
    later = ADDED_LATER.get(table, frozenset())
    return tuple(at for at, column in enumerate(sealed) if column in later)


def without_unset(values: Sequence[object], optional: tuple[int, ...]) -> tuple[object, ...]:
    """The values digested: those of columns added later left out where they are NULL."""
    if not optional:
        return tuple(values)
    return tuple(value for at, value in enumerate(values)
                 if value is not None or at not in optional)


def final_lease(row: Mapping[str, object]) -> tuple[object, ...] | None:
    """An attempt row's lease bookkeeping (`LEASE_COLUMNS` order) once it has ended, else None:
    while it runs the values still change."""
    if row.get("ended_at") is None:
        return None
    return tuple(row.get(column) for column in LEASE_COLUMNS)
