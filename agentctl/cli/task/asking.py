"""What `task submit` settles from a session and asks at a terminal: the dialog and Rich's
prompts, loaded only when there is something to settle or ask."""


from dataclasses import replace
from pathlib import Path

import typer

from agentctl.cli import dialog
from agentctl.cli.context import State
from agentctl.cli.output import note
from agentctl.services.actions.requests import TaskRequest, overridden
from agentctl.services.actions.sessions import add_message, start_session
from agentctl.services.actions.tasks import current_user
from agentctl.services.actions.test_commands import detected_test_commands
from agentctl.store.run_views import RunViews


def completed(current: State, request: TaskRequest, *, ask: bool) -> TaskRequest:
    """The request with what `--session` settled, then (at a terminal) what the person answers;
    the repository you stand in when none is named."""
    if request.session_id:
        with current.views(RunViews) as views:
            _, messages = views.session(request.session_id)
        request = overridden(dialog.settled(messages), request)
    if not ask:
        if not request.repository and (here := dialog.here(Path.cwd())):
            request = replace(request, repository=here)
        return request
    config = current.config
    here = dialog.here(Path.cwd())
    checks = bool(config.verification.commands)
    request, exchange = dialog.converse(request, dialog.Defaults(
        here=here, allowed=config.boundary.allowed, forbidden=config.boundary.forbidden,
        checks=checks, autonomy=config.policy.default_autonomy,
        detected=detected_test_commands(Path(here)) if here and not checks else ()))
    store = current.store
    session_id = request.session_id or start_session(
        store, title=dialog.title_of(request), owner=current_user(),
        clock=lambda: exchange[0].asked_at).session_id  # it began with the first question
    for said in exchange:  # each stamped when it was said, not when the task was submitted
        add_message(store, session_id, role="system", content=said.question,
                    at=said.asked_at)
        add_message(store, session_id, role="user", content=said.answer,
                    at=said.answered_at)
    if exchange[-1].answer != "yes":
        note(f"not submitted; the questions and answers are in session {session_id}")
        raise typer.Exit(1)
    return replace(request, session_id=session_id)
