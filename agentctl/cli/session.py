"""`agentctl session`: the conversation that leads to tasks."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import MAX_LIMIT, JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.cli.render.tasks import session_detail, session_table
from agentctl.domain.serialize import to_json
from agentctl.services.actions.sessions import add_message, start_session
from agentctl.services.actions.tasks import current_user
from agentctl.store.task_views import TaskViews

app = typer.Typer(help="Sessions: messy conversations that lead to structured tasks.",
                  no_args_is_help=True)


@app.command()
def start(
    ctx: typer.Context,
    title: Annotated[str, typer.Option("--title", help="What the session is about.")] = "",
    owner: Annotated[str | None, typer.Option("--owner", metavar="WHO",
                     help="Owner. (default: the current user)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Start a session; its id goes to `session say` and `task submit --session`."""

    session = start_session(state(ctx).store, title=title, owner=owner or current_user())
    if as_json:
        emit_json(session)
    else:
        out().print(session.session_id)


@app.command()
def say(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(metavar="SESSION", help="Session id or prefix.")],
    text: Annotated[str, typer.Argument(help="The message.")],
    role: Annotated[str, typer.Option("--role", help="user, system or agent.")] = "user",
    as_json: JsonOption = False,
) -> None:
    """Add a message to a session."""

    message = add_message(state(ctx).store, session_id, role=role, content=text)
    if as_json:
        emit_json(message)
    else:
        out().print(message.message_id)


@app.command()
def show(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(metavar="SESSION", help="Session id or prefix.")],
    as_json: JsonOption = False,
) -> None:
    """Show a session: its messages and the tasks it produced."""
    with state(ctx).views(TaskViews) as views:
        session, messages = views.session(session_id)
    if as_json:
        document = to_json(session)
        document["messages"] = to_json(messages)  # type: ignore[index]
        emit_json(document)
        return

    out().print(session_detail(session, messages))


@app.command("list")
def list_(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT, help="At most this many.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """List sessions, newest first."""
    with state(ctx).views(TaskViews) as views:
        sessions = views.sessions(limit=limit)
    if as_json:
        emit_json(sessions)
    elif not sessions:
        out().print("no sessions yet; start one with 'agentctl session start'")
    else:

        out().print(session_table(sessions))
