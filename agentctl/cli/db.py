"""`agentctl db current|upgrade`: the store's schema revision, and migrating it (Alembic)."""


import typer

from agentctl.cli.context import state
from agentctl.cli.migrations import migrations
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, out

app = typer.Typer(help="The database schema: its revision and upgrades.", no_args_is_help=True)


@app.command()
def current(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Show the schema revision of the database and the one this agentctl needs."""
    found = migrations().current(state(ctx).store)
    if as_json:
        emit_json(found)
        return
    where = found.revision or "none (no schema yet)"
    verdict = "up to date" if found.up_to_date else "behind: run 'agentctl db upgrade'"
    if found.revision is None:
        verdict = "created on first use"
    out().print(f"revision {where}, head {found.head}: {verdict}")


@app.command()
def upgrade(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Migrate the database to this agentctl's schema (an embedded SQLite home is backed up
    beside itself first); nothing to do when it is current."""
    done = migrations().upgrade(state(ctx).store)
    if as_json:
        emit_json(done)
        return
    if not done.upgraded:
        out().print(f"already at revision {done.to_revision}")
        return
    backup = f" (backup: {done.backup})" if done.backup else ""
    out().print(f"upgraded {done.from_revision or 'an empty database'} -> "
                f"{done.to_revision}{backup}")
