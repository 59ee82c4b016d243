"""The store's tables, in SQLAlchemy Core, as the newest migration leaves them.

- `results`: one row per stored result: its key (unique: storing a result twice is one entry,
  see `store.result_key`), the digest of its whole document, its kind, schema version, suite,
  subjects (models or arms), creation time, the digests of the inputs it was made from, where
  it came from, and the whole document (JSON);
- `metrics`: one row per published metric of a subject: estimate, interval, level, method and
  sample size, and the configuration it was measured with where a kind's results vary in it (a
  reliability probe's prompts and trials; `history` reads these, never the documents);
- `labels`: `key=value` pairs given with `--label` (one value per key and result).

Times are stored in UTC without a zone (both backends compare them the same way). The schema
itself is made and changed only by the migrations in `migrations/versions/`.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

results = Table(
    "results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("digest", String(64), nullable=False, unique=True),
    Column("document_digest", String(64), nullable=False, index=True),
    Column("kind", String(40), nullable=False, index=True),
    Column("schema_version", String(80), nullable=False),
    Column("suite", String(200), nullable=True, index=True),
    Column("subjects", Text, nullable=False),
    Column("created_at", DateTime, nullable=False, index=True),
    Column("stored_at", DateTime, nullable=False),
    Column("source", Text, nullable=True),
    Column("inputs", Text, nullable=False),
    Column("document", Text, nullable=False),
)

metrics = Table(
    "metrics",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
    Column("subject", String(300), nullable=False),
    Column("metric", String(200), nullable=False),
    Column("estimate", Float, nullable=True),
    Column("low", Float, nullable=True),
    Column("high", Float, nullable=True),
    Column("level", Float, nullable=True),
    Column("method", String(300), nullable=True),
    Column("n", Integer, nullable=True),
    Column("configuration", String(300), nullable=True),
    Index("ix_metrics_result_id", "result_id"),
    Index("ix_metrics_subject_metric", "subject", "metric", "result_id"),
)

labels = Table(
    "labels",
    metadata,
    Column(
        "result_id",
        Integer,
        ForeignKey("results.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("key", String(100), primary_key=True),
    Column("value", String(500), nullable=False),
    Index("ix_labels_key_value", "key", "value"),
)

#: `history ack`: a series (subject × metric) restarts from a run (`result_id`); the newest
#: acknowledgement of a series counts.
acknowledgements = Table(
    "acknowledgements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subject", String(300), nullable=False),
    Column("metric", String(200), nullable=False),
    Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
    Column("acknowledged_at", DateTime, nullable=False),
    Column("note", Text, nullable=True),
    Index("ix_acknowledgements_series", "subject", "metric"),
)
