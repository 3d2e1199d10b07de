"""The run a replay replays, as a column of the run (it was a key of its policy decision).

Revision ID: 0006
Revises: 0005
A run stored before has no `replay_of` (NULL): it replays nothing, or it is a replay made
before the column, whose policy decision still names the original. Old rows are not rewritten:
their seals in the event log stay true (`seal_rules.ADDED_LATER`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("run", sa.Column("replay_of", sa.String(), nullable=True))
