"""Tasks and sessions for people."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rich.console import RenderableType
from rich.table import Table

from agentctl.cli.render.fit import Column, fitted
from agentctl.cli.render.style import badge, escape, repository_name, when
from agentctl.domain.run import Run
from agentctl.domain.task import Session, SessionMessage, Task, shown_status


def task_table(tasks: Sequence[Task], *, short: Mapping[str, str], width: int,
               awaiting: Collection[str] = ()) -> RenderableType:
    """One row per task; the title and what else does not fit go on an indented line.
    `awaiting`: the tasks a run of which waits for approval (they read NEEDS_APPROVAL)."""
    columns = [Column("TASK", 3), Column("STATUS", 3), Column("TYPE", 1), Column("AUTONOMY", 1),
               Column("REPO"), Column("CREATED"), Column("TITLE", text=True)]
    rows = [[short.get(t.task_id, t.task_id),
             badge(shown_status(t.status, awaiting_approval=t.task_id in awaiting)),
             t.task_type.value,
             t.autonomy_level.value, escape(repository_name(t.repository)),
             when(t.created_at)[:16], escape(t.title)] for t in tasks]
    return fitted(columns, rows, width)


def task_detail(task: Task, awaiting: Run | None = None) -> Table:
    """`awaiting`: the task's run that waits for a person's approval, named on the status row
    with the command that gives it."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    rows: list[tuple[str, str]] = [
        ("task", task.task_id),
        ("status", badge(shown_status(task.status, awaiting_approval=awaiting is not None))
         + (f"  run #{awaiting.number} awaits approval: agentctl verdict approve "
            f"{awaiting.run_id}" if awaiting is not None else
            f"  {escape(task.status_reason)}" if task.status_reason else "")),
        ("title", escape(task.title)),
        ("type", task.task_type.value),
        ("autonomy", task.autonomy_level.value),
        ("repository", escape(task.repository or "-")),
        ("base ref", escape(task.base_ref)),
        ("instruction", escape(task.instruction)),
    ]
    if task.allowed_paths:
        rows.append(("allowed", escape(", ".join(task.allowed_paths))))
    if task.forbidden_paths:
        rows.append(("forbidden", escape(", ".join(task.forbidden_paths))))
    if task.verification_commands:
        rows.append(("verify", escape("; ".join(task.verification_commands))))
    if task.must_pass:
        rows.append(("must pass", escape(", ".join(task.must_pass))))
    if task.test_patch:
        rows.append(("test patch", f"{task.test_patch.count(chr(10))} lines (judged in its "
                                   "version, not the agent's)"))
    if task.allow_removed_tests:
        rows.append(("removed tests", "allowed"))
    if task.labels:
        rows.append(("labels", escape(", ".join(f"{k}={v}" for k, v in task.labels.items()))))
    if task.session_id:
        rows.append(("session", task.session_id))
    rows += [("created", f"{when(task.created_at)} by {escape(task.created_by)} "
                         f"({task.source.value})")]
    for key, value in rows:
        table.add_row(key, value)
    return table


def session_table(sessions: Sequence[Session]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("SESSION", "STATUS", "TITLE", "TASKS", "LAST ACTIVITY"):
        table.add_column(column, no_wrap=column != "TITLE", overflow="fold")
    for session in sessions:
        table.add_row(session.session_id, badge(session.status), escape(session.title or "-"),
                      str(len(session.related_tasks)), when(session.last_activity_at))
    return table


def session_detail(session: Session, messages: Sequence[SessionMessage]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("session", f"{session.session_id}  {badge(session.status)}")
    table.add_row("title", escape(session.title or "-"))
    table.add_row("owner", escape(session.owner))
    table.add_row("tasks", ", ".join(session.related_tasks) or "-")
    for message in messages:
        table.add_row(f"{message.role.value}", f"[dim]{when(message.created_at)}[/]  "
                                               f"{escape(message.content)}")
    return table
