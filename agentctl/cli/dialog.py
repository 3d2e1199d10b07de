"""The dialog of `task submit` at a terminal: ask for what the flags left out, as `gh pr create`
does, and keep the exchange (questions as `system` messages, answers as `user` messages) in a
Session linked to the task, so the trail shows what was asked and what was answered.

`settled` reads such an exchange back, so `task submit --session S` reuses its answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from rich.prompt import Confirm, Prompt

from agentctl.cli.cancel import cancellable
from agentctl.cli.output import err
from agentctl.cli.render.style import escape
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import AutonomyLevel, MessageRole, TaskType
from agentctl.domain.task import SessionMessage
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.queries.repositories import repository_here

REPOSITORY = "Which repository?"
TASK_TYPE = "What kind of change is it?"
INSTRUCTION = "What should change?"
ALLOWED = "Which paths may change? (globs, comma-separated; none: any path)"
FORBIDDEN = "Which paths must not change? (globs, comma-separated)"
VERIFY = "Which commands verify the change? (separated by ';')"
AUTONOMY = "How far may agentctl go?"
CONFIRM = "Submit this task?"
NONE = "none"

AUTONOMY_HELP = {
    AutonomyLevel.DRY_RUN: "a patch and a verdict, nothing is pushed",
    AutonomyLevel.DRAFT_PR: "at most a draft PR",
    AutonomyLevel.SUPERVISED_PR: "a PR after a person approves",
    AutonomyLevel.AUTO_PR: "a PR on its own when every check passes",
}


@dataclass(frozen=True)
class Exchange:
    """A question and its answer, each stamped when it was said (the session keeps both)."""

    question: str
    answer: str
    asked_at: datetime
    answered_at: datetime


@dataclass(frozen=True)
class Defaults:
    """What the place and the config already settle: a field they give is never asked, and
    the autonomy question proposes the config's level."""

    here: str | None = None  # the repository you stand in
    allowed: Sequence[str] = ()
    forbidden: Sequence[str] = ()
    checks: bool = False  # the config names verification commands
    detected: Sequence[str] = ()  # the test commands the repository's files imply
    autonomy: AutonomyLevel = AutonomyLevel.DRY_RUN


def _split(text: str, separator: str) -> tuple[str, ...]:
    if text.strip().lower() == NONE:
        return ()
    return tuple(part.strip() for part in text.split(separator) if part.strip())


def settled(messages: Sequence[SessionMessage]) -> TaskRequest:
    """What a session already answered: each dialog question with the user message after it;
    the first user message that answers no question is the instruction ("Upgrade Jackson")."""
    fields: dict[str, object] = {}
    loose: list[str] = []
    question: str | None = None
    for message in messages:
        if message.role is MessageRole.SYSTEM:
            question = message.content
            continue
        if message.role is not MessageRole.USER:
            continue
        answer = message.content.strip()
        if question == REPOSITORY:
            fields["repository"] = answer
        elif question == TASK_TYPE:
            fields["task_type"] = answer
        elif question == INSTRUCTION:
            fields["instruction"] = answer
        elif question == ALLOWED:
            fields["allowed_paths"] = _split(answer, ",")
        elif question == FORBIDDEN:
            fields["forbidden_paths"] = _split(answer, ",")
        elif question == VERIFY:
            fields["verification_commands"] = _split(answer, ";")
        elif question == AUTONOMY:
            fields["autonomy_level"] = answer
        else:
            loose.append(answer)
        question = None
    if "instruction" not in fields and loose:
        fields["instruction"] = loose[0]
    return TaskRequest(**fields)  # type: ignore[arg-type]


def converse(request: TaskRequest, defaults: Defaults, *, clock: Clock = utcnow,
             ) -> tuple[TaskRequest, list[Exchange]]:
    """Ask for each field that neither `request` (the flags) nor `defaults` give; the answers,
    and what was asked, in order. The last exchange is the confirmation ("yes" or "no")."""

    console = err()
    asked: list[Exchange] = []

    def ask(question: str, default: str | None = None, choices: list[str] | None = None) -> str:
        while True:
            asked_at = clock()
            with cancellable():
                answer = (Prompt.ask(escape(question), console=console, default=default,
                                     choices=choices, show_default=default is not None)
                          or "").strip()
            if answer:
                asked.append(Exchange(question, answer, asked_at, clock()))
                return answer
            console.print("[red]an answer is needed[/]")

    if not request.repository:
        request = replace(request, repository=defaults.here or ask(REPOSITORY))
    if not request.task_type:
        request = replace(request, task_type=ask(TASK_TYPE, None, [t.value for t in TaskType]))
    if not request.instruction:
        request = replace(request, instruction=ask(INSTRUCTION))
    if not (request.allowed_paths or defaults.allowed):
        request = replace(request, allowed_paths=_split(ask(ALLOWED, NONE), ","))
    if not (request.forbidden_paths or defaults.forbidden):
        request = replace(request, forbidden_paths=_split(ask(FORBIDDEN, NONE), ","))
    if not (request.verification_commands or defaults.checks):
        request = replace(request, verification_commands=_split(
            ask(VERIFY, "; ".join(defaults.detected) or NONE), ";"))
    if not request.autonomy_level:
        for level, meaning in AUTONOMY_HELP.items():
            console.print(f"  [bold]{level.value}[/]: {meaning}")
        request = replace(request, autonomy_level=ask(
            AUTONOMY, defaults.autonomy.value, [a.value for a in AutonomyLevel]))
    console.print(summary(request, defaults))
    asked_at = clock()
    with cancellable():
        confirmed = Confirm.ask(CONFIRM, console=console, default=True)
    asked.append(Exchange(CONFIRM, "yes" if confirmed else "no", asked_at, clock()))
    return request, asked


def summary(request: TaskRequest, defaults: Defaults) -> str:
    def listed(given: Sequence[str], configured: Sequence[str], separator: str) -> str:
        return separator.join([*given, *configured])

    rows = [("repository", request.repository), ("type", request.task_type),
            ("instruction", request.instruction),
            ("allowed", listed(request.allowed_paths, defaults.allowed, ", ") or "any path"),
            ("forbidden", listed(request.forbidden_paths, defaults.forbidden, ", ") or "-"),
            ("verify", "; ".join(request.verification_commands) or "config's checks"),
            ("autonomy", request.autonomy_level)]
    return "\n" + "\n".join(f"  [bold]{key:<12}[/]{escape(value or '-')}" for key, value in rows)


def title_of(request: TaskRequest) -> str:
    """The session's title: the instruction's first line, short."""
    line = re.split(r"[\n.]", (request.instruction or "task").strip(), maxsplit=1)[0]
    return line[:60]


def here(cwd: Path) -> str | None:
    return repository_here(cwd)
