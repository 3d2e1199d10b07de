"""How long a statement on a SQLite database waits for a lock another connection holds, then
fails "database is locked": the write transactions' own loop (`transactions.when_unlocked`) and
SQLite's busy handler on the read-only views' connections both wait this long. A module of its
own so that a read command bounds its waits as the writers do without loading their module."""

BUSY_TIMEOUT_SECONDS = 120
