"""The first schema: results, their metrics and labels.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "results",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("document_digest", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("schema_version", sa.String(80), nullable=False),
        sa.Column("suite", sa.String(200), nullable=True),
        sa.Column("subjects", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("stored_at", sa.DateTime, nullable=False),
        sa.Column("source", sa.Text, nullable=True),
        sa.Column("inputs", sa.Text, nullable=False),
        sa.Column("document", sa.Text, nullable=False),
    )
    op.create_index("ix_results_document_digest", "results", ["document_digest"])
    op.create_index("ix_results_kind", "results", ["kind"])
    op.create_index("ix_results_suite", "results", ["suite"])
    op.create_index("ix_results_created_at", "results", ["created_at"])
    op.create_table(
        "metrics",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "result_id",
            sa.Integer,
            sa.ForeignKey("results.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("metric", sa.String(200), nullable=False),
        sa.Column("estimate", sa.Float, nullable=True),
        sa.Column("low", sa.Float, nullable=True),
        sa.Column("high", sa.Float, nullable=True),
        sa.Column("level", sa.Float, nullable=True),
        sa.Column("method", sa.String(300), nullable=True),
        sa.Column("n", sa.Integer, nullable=True),
    )
    op.create_index("ix_metrics_result_id", "metrics", ["result_id"])
    op.create_table(
        "labels",
        sa.Column(
            "result_id",
            sa.Integer,
            sa.ForeignKey("results.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.String(500), nullable=False),
    )
    op.create_index("ix_labels_key_value", "labels", ["key", "value"])


def downgrade() -> None:
    op.drop_table("labels")
    op.drop_table("metrics")
    op.drop_table("results")
