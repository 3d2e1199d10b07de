"""The pull request as its forge holds it: forge, number, base branch and state.

Revision ID: 0003
Revises: 0002
PRs recorded before were branches pushed without a forge: `none` and `BRANCH`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pull_request") as table:
        table.add_column(sa.Column("forge", sa.String(), nullable=False, server_default="none"))
        table.add_column(sa.Column("number", sa.Integer(), nullable=True))
        table.add_column(sa.Column("base", sa.String(), nullable=True))
        table.add_column(sa.Column("state", sa.String(), nullable=False,
                                   server_default="BRANCH"))
