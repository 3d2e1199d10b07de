"""Tasks as text: their table (`task list`) and one task's card (`task show`, `task submit`).
Rich's tables (`render.tasks`) are imported with the first one printed: `--json`, and a run's
own report, load no Rich."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from agentctl.cli.output import out

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

    from agentctl.domain.run import Run
    from agentctl.domain.task import Task


class _Render(Protocol):
    """What is printed of `render.tasks` (the module itself, once imported)."""

    def task_table(self, tasks: Sequence[Task], *, short: Mapping[str, str], width: int,
                   awaiting: Collection[str] = ()) -> RenderableType: ...
    def task_detail(self, task: Task, awaiting: Run | None = None) -> Table: ...


def print_tasks(tasks: Sequence[Task], *, short: Mapping[str, str],
                awaiting: Collection[str]) -> None:
    """One row per task (`awaiting`: those with a run waiting for approval)."""
    out().print(_render().task_table(tasks, short=short, width=out().width, awaiting=awaiting))


def print_task(task: Task, awaiting: Run | None = None) -> None:
    """The task's card, naming its run that waits for approval."""
    out().print(_render().task_detail(task, awaiting))


def _render() -> _Render:
    from agentctl.cli.render import tasks

    return tasks
