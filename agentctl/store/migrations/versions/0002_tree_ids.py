"""The verified git tree on patches and verdicts; tool results carry an outcome, not `ok`.

Revision ID: 0002
Revises: 0001
Tool results written before typed outcomes stored `{"ok": bool, ...}`; they are rewritten to the
outcome the recorder would give them now (the call's decision is a column of its own).
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("patch", sa.Column("tree_id", sa.String(), nullable=True))
    op.add_column("verdict", sa.Column("tree_id", sa.String(), nullable=True))
    _tool_results_with_outcomes()


def _tool_results_with_outcomes() -> None:
    connection = op.get_bind()
    tool_call = sa.table("tool_call", sa.column("tool_call_id", sa.String()),
                         sa.column("decision", sa.String()), sa.column("result", sa.Text()))
    old = connection.execute(
        sa.select(tool_call.c.tool_call_id, tool_call.c.decision, tool_call.c.result)
        .where(tool_call.c.result.is_not(None))
        .where(tool_call.c.result.not_like('%"outcome":%'))).all()
    updates = []
    for tool_call_id, decision, text in old:
        result = json.loads(text)
        if "outcome" in result:
            continue
        updates.append({"key": tool_call_id, "value": json.dumps(
            _with_outcome(result, decision), separators=(",", ":"), ensure_ascii=False)})
    if updates:
        connection.execute(
            tool_call.update().where(tool_call.c.tool_call_id == sa.bindparam("key"))
            .values(result=sa.bindparam("value")), updates)


def _with_outcome(result: dict[str, object], decision: str) -> dict[str, object]:
    """The pre-outcome result as today's: the outcome from `ok`, the decision and the error."""
    ok = bool(result.pop("ok", False))
    error = str(result.get("error") or "")
    if ok:
        outcome = "ok"
    elif decision != "ALLOWED":
        outcome = "denied"
    elif error.startswith("timed out"):
        outcome = "timed_out"
    elif error.startswith("cancelled"):
        outcome = "cancelled"
    else:
        outcome = "failed"
    return {"outcome": outcome, "decision": decision, **result}
