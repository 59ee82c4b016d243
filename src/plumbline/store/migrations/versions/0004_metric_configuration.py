"""The configuration a metric was measured with (`metrics.configuration`): a reliability
probe's prompts and trials, so that `history` keeps two probes of one model apart. The
reliability results already stored get theirs from their documents.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("metrics", sa.Column("configuration", sa.String(300), nullable=True))
    _fill_reliability()


def _fill_reliability() -> None:
    from plumbline.results.reliability import probe_configuration

    connection = op.get_bind()
    results = sa.table("results", sa.column("id"), sa.column("kind"), sa.column("document"))
    metrics = sa.table(
        "metrics", sa.column("result_id"), sa.column("subject"), sa.column("configuration")
    )
    rows = connection.execute(
        sa.select(results.c.id, results.c.document).where(results.c.kind == "reliability")
    ).all()
    for result_id, text in rows:
        document = json.loads(text)
        embedding = str((document.get("config") or {}).get("embedding_model_name", ""))
        for model in document.get("models") or []:
            prompts = [
                (str(p.get("prompt_id", "")), int(p.get("trials", 0)))
                for p in model.get("prompts") or []
            ]
            connection.execute(
                metrics.update()
                .where(metrics.c.result_id == result_id, metrics.c.subject == model.get("model"))
                .values(configuration=probe_configuration(prompts, embedding))
            )


def downgrade() -> None:
    with op.batch_alter_table("metrics") as batch:
        batch.drop_column("configuration")
