"""An index for a series (subject × metric): `history --model M` and `history check` read one
subject's metrics in result order without scanning every metric row.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_metrics_subject_metric", "metrics", ["subject", "metric", "result_id"])


def downgrade() -> None:
    op.drop_index("ix_metrics_subject_metric", table_name="metrics")
