"""Each attempt's private directory, recorded when the attempt starts.

Revision ID: 0004
Revises: 0003
A worker killed with -9 cannot remove its attempt's directory; the next worker on that host (and
whoever reclaims the lease) removes it because the store says whose it was.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("attempt", sa.Column("directory", sa.Text(), nullable=True))
    op.create_index("ix_attempt_directory", "attempt", ["directory"], unique=False)
