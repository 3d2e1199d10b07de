"""Persistence: `storage.Store` (the storage port on SQLite or PostgreSQL) and its parts.

Only this package imports SQLAlchemy, and on a SQLite home only to migrate a database that is
behind: reads (`task_views`, `run_views`, `views`, `reads`) and writes (`uow`) run the SQL
`queries` and `statements` compiled ahead on the stdlib driver. A PostgreSQL store's connections
come from SQLAlchemy's engine.

This module imports nothing: every module of the package loads it first, and a command that
only reads (`events`, `task list`) needs none of what the store's writes do.
"""
