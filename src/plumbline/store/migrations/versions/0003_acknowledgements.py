"""Acknowledged changes: `history ack` restarts a series (subject × metric) from a run, so the
change check counts its runs, and its false-alarm guarantee, from there.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "acknowledgements",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("metric", sa.String(200), nullable=False),
        sa.Column(
            "result_id",
            sa.Integer,
            sa.ForeignKey("results.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("acknowledged_at", sa.DateTime, nullable=False),
        sa.Column("note", sa.Text, nullable=True),
    )
    op.create_index("ix_acknowledgements_series", "acknowledgements", ["subject", "metric"])


def downgrade() -> None:
    op.drop_index("ix_acknowledgements_series", table_name="acknowledgements")
    op.drop_table("acknowledgements")
