"""The documents of `plumbline history` (`HistoryDocument`) and `plumbline history check`
(`ChangeReport`), built by `store.history`, rendered by `views.history`.

A metric keeps the unit its result document gives it (a leaderboard's scores are proportions,
CERT's `error_rate` a percentage, latencies seconds); `method` says how its interval was made.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from plumbline.core.result import ResultModel, unit_field

HISTORY_VERSION: Literal["plumbline.history/1"] = "plumbline.history/1"
CHECK_VERSION: Literal["plumbline.history_check/2"] = "plumbline.history_check/2"


class HistoryFilters(ResultModel):
    """What the history was narrowed to (None: not narrowed)."""

    kind: str | None = Field(default=None, description="Result kind.")
    suite: str | None = Field(default=None, description="Suite name.")
    model: str | None = Field(
        default=None, description="Subject: a model, an arm, or `TREATMENT vs CONTROL`."
    )
    metric: str | None = Field(default=None, description="Metric name.")
    labels: dict[str, str] = Field(default_factory=dict, description="Labels every result has.")
    since: str | None = Field(default=None, description="Earliest creation time (ISO 8601).")


class MetricValue(ResultModel):
    """One published metric of one subject in one stored result."""

    subject: str = Field(description="A model, an arm, or `TREATMENT vs CONTROL`.")
    metric: str = Field(description="The document's own name of the metric.")
    estimate: float | None = unit_field("The estimate (its document's unit).", "score")
    low: float | None = unit_field("Lower bound of its interval.", "same as estimate")
    high: float | None = unit_field("Upper bound of its interval.", "same as estimate")
    level: float | None = unit_field("Confidence level of the interval.", "probability")
    method: str | None = Field(description="How the interval was computed.")
    n: int | None = unit_field("Sample size the interval rests on.", "count")
    configuration: str | None = Field(
        default=None,
        description="How it was measured where a kind's results vary in it (a reliability "
        "probe's prompts and trials); null otherwise.",
    )
    repeat_of: int | None = unit_field(
        "The id of an earlier result with this same value of this series from a shared input "
        "file (one measurement stored twice): counted once, never checked twice; null "
        "otherwise (an id: a label, not a quantity).",
        "count",
        default=None,
    )
    alarm: bool | None = Field(
        default=None,
        description="With --html: the change check's alarm is up at this run (as `history "
        "check` says); null when not checked.",
    )


class HistoryEntry(ResultModel):
    """One stored result."""

    id: int = unit_field("The result's id in the store.", "count")
    kind: str = Field(description="`leaderboard`, `compare`, `reliability` or `agent_run`.")
    schema_version: str = Field(description="The stored document's kind and major version.")
    suite: str | None = Field(description="The suite, when the result names one.")
    subjects: list[str] = Field(description="Its models (or arms, or compared pairs).")
    created_at: str = Field(description="When the result was made (ISO 8601, UTC).")
    labels: dict[str, str] = Field(description="`--label key=value` given when it was stored.")
    source: str | None = Field(description="The file or command it was stored from.")
    digest: str = Field(
        description="Its key in the store: SHA-256 of its content and its inputs' digests "
        "(one entry per key)."
    )
    metrics: list[MetricValue] = Field(description="Its metrics (narrowed as the history is).")
    report: str | None = Field(
        default=None, description="With --html: the page of this result in the site."
    )


class HistoryDocument(ResultModel):
    """`plumbline history`: one entry per stored result, in time order."""

    schema_version: Literal["plumbline.history/1"] = Field(
        default=HISTORY_VERSION, description="The document kind and major version."
    )
    store: str = Field(description="The store read (a password in its URL hidden).")
    filters: HistoryFilters
    results: list[HistoryEntry]
    alarm_guarantee: str | None = Field(
        default=None,
        description="The guarantee of the alarms marked on the metrics (`history check`'s), "
        "when they are (the site's history page).",
    )


class RunPoint(ResultModel):
    """One run of a series: a stored result's value of the series' metric."""

    id: int = unit_field("The result's id in the store.", "count")
    created_at: str = Field(description="When the result was made (ISO 8601, UTC).")
    labels: dict[str, str] = Field(description="The result's labels.")
    estimate: float = unit_field("The metric's estimate.", "score")
    low: float = unit_field("Lower bound of its published interval.", "same as estimate")
    high: float = unit_field("Upper bound of its published interval.", "same as estimate")
    n: int = unit_field("Sample size the interval rests on.", "count")
    alarm: bool = Field(description="The detector's alarm is up at this run.")


class SeriesChange(ResultModel):
    """Whether and when one series changed beyond noise. A series is one kind of result, one
    suite, one model, one metric and one configuration."""

    kind: str | None = Field(default=None, description="The kind of result of its runs.")
    suite: str | None = Field(default=None, description="The suite of its runs (null: none).")
    configuration: str | None = Field(
        default=None,
        description="The configuration of its runs (a reliability probe's prompts and "
        "trials; null: none).",
    )

    model: str = Field(description="The series' subject: a model, an arm or a compared pair.")
    metric: str = Field(description="The series' metric.")
    runs: list[RunPoint] = Field(
        description="Its runs in time order, from its start or its acknowledged change."
    )
    first_alarm: int | None = unit_field(
        "Index into `runs` of the first alarm (null: none).", "count"
    )
    changed_at: int | None = unit_field(
        "The id of the run where the change is estimated to start (null: no alarm).", "count"
    )
    method: str = Field(description="The change detector and what it rests on.")
    alpha: float = unit_field(
        "This series' share of the false-alarm chance within `within` runs (α / family).",
        "probability",
    )
    left_out: int = unit_field(
        "Stored runs of this series without an estimate, a two-sided interval or a sample "
        "size (not checked).",
        "count",
        default=0,
    )
    restarted_at: int | None = unit_field(
        "The id of the run the series restarts from (an acknowledged change, `history ack`); "
        "null: checked from its first run.",
        "count",
        default=None,
    )
    before_restart: int = unit_field(
        "Stored runs before the acknowledged change (not checked).", "count", default=0
    )
    extra_variance: float | None = unit_field(
        "The night-to-night variance beyond the runs' intervals the check used (at its last "
        "run; in the estimate's units squared; null: not checked).",
        "score",
        default=None,
    )
    extra_variance_source: Literal["estimated", "given"] | None = Field(
        default=None,
        description="`estimated` from the series' successive differences, or `given` "
        "(--extra-variance).",
    )


class ChangeReport(ResultModel):
    """`plumbline history check`: every series (model × metric) and whether it changed."""

    schema_version: Literal["plumbline.history_check/2"] = Field(
        default=CHECK_VERSION, description="The document kind and major version."
    )
    store: str = Field(description="The store read (a password in its URL hidden).")
    filters: HistoryFilters
    alpha: float = unit_field(
        "The chance, with nothing changing, that any series checked together raises a false "
        "alarm within `within` runs of its start (the family's).",
        "probability",
    )
    within: int = unit_field("Runs from a series' start the false-alarm chance covers.", "count")
    family: int = unit_field("Series checked together (α is split evenly among them).", "count")
    average_run_length: float | None = unit_field(
        "Mean runs to a false alarm per series, with nothing changing (null: nothing checked).",
        "count",
    )
    threshold: float | None = unit_field(
        "The CUSUM's threshold h on the runs' standardized scores (in standard errors; null: "
        "nothing checked).",
        "score",
    )
    extra_variance: float | None = unit_field(
        "The night-to-night variance given with --extra-variance (the estimates' units "
        "squared; null: estimated per series).",
        "score",
        default=None,
    )
    guarantee: str = Field(description="The guarantee and its assumptions, in words.")
    changed: bool = Field(description="Some series raised an alarm.")
    series: list[SeriesChange]


def generated_history_schema() -> dict[str, Any]:
    """The JSON Schema shipped as `schemas/history.schema.json`."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        HistoryDocument,
        schema_id="https://plumbline.dev/schemas/history/1/history.schema.json",
        title="plumbline history",
    )


def generated_check_schema() -> dict[str, Any]:
    """The JSON Schema shipped as `schemas/history_check.schema.json`."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        ChangeReport,
        schema_id="https://plumbline.dev/schemas/history_check/2/history_check.schema.json",
        title="plumbline history check",
    )
