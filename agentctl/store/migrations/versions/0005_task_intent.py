"""What a task asks its checks to show beyond passing: must-pass tests, removed tests allowed.

Revision ID: 0005
Revises: 0004
A task stored before has no intent (NULL): none of its tests must pass by name and no test may
vanish, which is what every task meant until the intent could be said.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("task", sa.Column("intent", sa.Text(), nullable=True))
