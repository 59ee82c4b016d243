"""The results store on both backends (SQLite and a real PostgreSQL server): what a stored
result keeps, one entry per result, filters, schema migrations, many writers at once and a
writer killed mid-write."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from tests.support.postgres import PostgresServer
from tests.support.store_results import Documents, renamed
from tests.support.store_writers import write_many, write_same

from plumbline.results.compare import COST_METRICS as COMPARE_COST
from plumbline.results.stored import ResultDocumentError, read_result
from plumbline.store.migrate import StoreError, head_revision, upgrade_to
from plumbline.store.store import Query, Store
from plumbline.store.url import StoreUrlError, store_address

ROOT = Path(__file__).resolve().parents[2]


def test_a_result_is_stored_with_its_metrics_labels_and_document(
    store_url: str, documents: Documents
) -> None:
    board = documents.json("leaderboard")
    with Store.open(store_url) as store:
        added = store.add(read_result(board), labels={"commit": "abc123", "branch": "main"})
        [entry] = store.query(Query())
        assert store.document(added.id) == read_result(board).document
    assert added.created
    assert entry.kind == "leaderboard"
    assert entry.suite == "mini"
    assert entry.subjects == ("mockllm/model",)
    assert entry.labels == {"branch": "main", "commit": "abc123"}
    assert entry.created_at == datetime.fromisoformat(
        board["_metadata"]["generated_at"].replace("Z", "+00:00")
    ).replace(microsecond=entry.created_at.microsecond)
    by_name = {row.metric: row for row in entry.metrics}
    assert set(by_name) == {"overall", "qa"}
    qa = by_name["qa"]
    row = board["models"][0]
    assert qa.estimate == pytest.approx(24 / 40) == row["qa"]
    assert (qa.low, qa.high) == (row["intervals"]["qa"]["low"], row["intervals"]["qa"]["high"])
    assert qa.n == 40
    assert qa.method == row["intervals"]["qa"]["method"]


def test_every_kind_publishes_its_own_metric_names(store_url: str, documents: Documents) -> None:
    with Store.open(store_url) as store:
        for kind in ("compare", "reliability"):
            store.add(read_result(documents.json(kind)))
        compare = store.query(Query(kind="compare"))[0]
        reliability = store.query(Query(kind="reliability"))[0]
    assert {row.metric for row in compare.metrics} == {
        "pass_delta",
        "cost_delta_usd",
        "duration_delta_seconds",
        "token_delta",
        "non_cache_token_delta",
        *COMPARE_COST,
    }
    assert {row.subject for row in compare.metrics} == {"with_skelly vs without_skelly"}
    assert {row.metric for row in reliability.metrics} == {
        "consistency",
        "agreement",
        "performance",
        "latency.mean",
        "latency.p95",
        "error_rate",
    }
    report = documents.json("reliability")
    flaky = next(m for m in report["models"] if m["model"].endswith("flaky"))
    error_rate = next(
        row
        for row in reliability.metrics
        if row.metric == "error_rate" and row.subject == flaky["model"]
    )
    robustness = flaky["robustness"]
    assert error_rate.estimate == robustness["error_rate"]
    assert error_rate.low == robustness["error_rate_interval"]["low"]
    assert error_rate.n == robustness["total_trials"]


def test_storing_the_same_result_twice_is_one_entry_with_both_labels(
    store_url: str, documents: Documents
) -> None:
    board = documents.json("leaderboard")
    rebuilt = dict(board, _metadata=dict(board["_metadata"], generated_at="2030-01-01T00:00:00Z"))
    with Store.open(store_url) as store:
        first = store.add(read_result(board), labels={"commit": "a"})
        again = store.add(read_result(rebuilt), labels={"commit": "b", "nightly": "yes"})
        assert store.count() == 1
        [entry] = store.query(Query())
    assert (first.created, again.created) == (True, False)
    assert again.id == first.id
    # the first value of a label stays; a new label is added
    assert entry.labels == {"commit": "a", "nightly": "yes"}


def test_filters_select_by_kind_model_metric_label_and_time(
    store_url: str, documents: Documents
) -> None:
    board = documents.json("leaderboard")
    now = datetime.now(UTC)
    with Store.open(store_url) as store:
        store.add(read_result(renamed(board, "old")), labels={"branch": "main"})
        store.add(read_result(documents.json("compare")), created_at=now - timedelta(days=3))
        store.add(read_result(renamed(board, "new")), labels={"branch": "dev"})
        assert [e.kind for e in store.query(Query(kind="compare"))] == ["compare"]
        [new] = store.query(Query(model="new"))
        assert {row.subject for row in new.metrics} == {"new"}
        [overall] = store.query(Query(model="old", metric="overall"))
        assert [row.metric for row in overall.metrics] == ["overall"]
        assert [e.subjects for e in store.query(Query(labels=(("branch", "dev"),)))] == [("new",)]
        assert store.query(Query(labels=(("branch", "dev"), ("x", "y")))) == []
        recent = store.query(Query(since=now - timedelta(days=1)))
        assert sorted(e.kind for e in recent) == ["leaderboard", "leaderboard"]
        ordered = store.query(Query())
    assert [e.created_at for e in ordered] == sorted(e.created_at for e in ordered)
    assert ordered[0].kind == "compare"  # three days older than the others


def test_an_older_store_is_upgraded_on_first_use(store_url: str, documents: Documents) -> None:
    url = store_url_for_engine(store_url)
    engine = create_engine(url)
    upgrade_to(engine, "0001")  # the first schema, without the series index
    with engine.begin() as connection:
        assert _revision(connection) == "0001"
        assert "ix_metrics_subject_metric" not in _indexes(connection)
    engine.dispose()
    with Store.open(store_url) as store:
        store.add(read_result(documents.json("compare")))
        with store.engine.connect() as connection:
            assert _revision(connection) == head_revision() == "0004"
            assert "ix_metrics_subject_metric" in _indexes(connection)


def test_a_newer_store_is_refused_with_a_clear_message(store_url: str) -> None:
    Store.open(store_url).close()
    engine = create_engine(store_url_for_engine(store_url))
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(StoreError, match="schema version is 9999, newer than this plumbline"):
        Store.open(store_url)


def writers() -> Any:
    """Processes for the writers: forked from a server that imported plumbline once (fresh
    processes, not copies of this one, without each paying plumbline's imports)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.support.store_writers"])
    return context


def test_eight_processes_write_twenty_five_results_each_at_once(
    store_url: str, documents: Documents
) -> None:
    board = documents.json("leaderboard")
    Store.open(store_url).close()
    with writers().Pool(8) as pool:
        written = pool.starmap(write_many, [(store_url, worker, 25, board) for worker in range(8)])
    ids = [result_id for worker in written for result_id in worker]
    with Store.open(store_url) as store:
        entries = store.query(Query())
        assert store.count() == 200
    assert len(set(ids)) == 200
    assert sorted(e.id for e in entries) == sorted(ids)
    assert len({e.subjects for e in entries}) == 200
    assert all(len(e.metrics) == 2 and set(e.labels) == {"worker", "index"} for e in entries)


def test_eight_processes_storing_the_same_result_make_one_entry(
    store_url: str, documents: Documents
) -> None:
    board = documents.json("leaderboard")
    Store.open(store_url).close()
    with writers().Pool(8) as pool:
        outcomes = pool.starmap(write_same, [(store_url, board)] * 8)
    assert len({result_id for result_id, _ in outcomes}) == 1
    assert sum(created for _, created in outcomes) == 1
    with Store.open(store_url) as store:
        assert store.count() == 1
        assert len(store.query(Query())[0].metrics) == 2


def test_a_writer_killed_mid_write_leaves_the_store_readable_and_consistent(
    store_url: str, documents: Documents
) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    writer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.store_writers",
            store_url,
            str(documents.leaderboard),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert writer.stdout is not None
    committed = [int(writer.stdout.readline()) for _ in range(20)]  # it keeps writing
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    with Store.open(store_url) as store:
        entries = store.query(Query())
        # every committed result is there, whole: its row, both metrics and its label
        assert set(committed) <= {e.id for e in entries}
        assert all(len(e.metrics) == 2 and "run" in e.labels for e in entries)
        with store.engine.connect() as connection:
            orphans = connection.execute(
                text("SELECT count(*) FROM metrics WHERE result_id NOT IN (SELECT id FROM results)")
            ).scalar_one()
            if connection.dialect.name == "sqlite":
                assert connection.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"
        assert orphans == 0
        added = store.add(read_result(documents.json("compare")))
        assert added.created and store.count() == len(entries) + 1


def test_a_document_the_store_cannot_keep_says_which_field(documents: Documents) -> None:
    report = documents.json("compare")
    del report["paired"]
    with pytest.raises(ResultDocumentError) as caught:
        read_result(report)
    assert caught.value.problems == ["paired: Field required"]
    with pytest.raises(ResultDocumentError, match="schema_version: a leaderboard_check"):
        read_result({"schema_version": "plumbline.leaderboard_check/1"})


def test_store_urls_and_what_they_refuse(tmp_path: Path) -> None:
    assert store_address(str(tmp_path / "a.db")).path == tmp_path / "a.db"
    assert store_address("sqlite:///rel.db").path == Path(os.path.abspath("rel.db"))
    postgres = store_address("postgresql://ci@db/x")
    assert postgres.path is None
    assert postgres.url.render_as_string(hide_password=False) == "postgresql+psycopg://ci@db/x"
    for bad in ("", "  ", "mysql://x/y", "sqlite://", "sqlite:///:memory:", "sqlite:///a.db?x=1"):
        with pytest.raises(StoreUrlError):
            store_address(bad)


@pytest.mark.parametrize("name", ["night?1.db", "a%20b.db", "x#y.db", "sp ace.db"])
def test_a_plain_path_is_the_file_it_names_literally(tmp_path: Path, name: str) -> None:
    given = str(tmp_path / name)
    assert store_address(given).path == tmp_path / name
    with Store.open(given) as store:
        assert store.count() == 0
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))) == [
        name
    ]


def test_a_reading_open_never_creates_a_store(tmp_path: Path, postgres: PostgresServer) -> None:
    missing = tmp_path / "no" / "such" / "store.db"
    with pytest.raises(StoreError, match="no results store") as caught:
        Store.open(str(missing), create=False)
    assert caught.value.kind == "missing" and str(missing) in str(caught.value)
    assert not (tmp_path / "no").exists()
    empty = postgres.create_database(f"empty_{uuid.uuid4().hex[:12]}")
    with pytest.raises(StoreError, match="no results store in this database"):
        Store.open(empty, create=False)
    with Store.open(empty) as store:  # a writing open makes it
        assert store.count() == 0


def test_an_unreachable_server_is_a_store_error_without_the_password(
    postgres: object,
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreError) as caught:
        Store.open(f"postgresql://ci:s3cret@127.0.0.1:{port}/x")
    assert "cannot reach the store" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def store_url_for_engine(given: str) -> Any:
    return store_address(given).url


def _revision(connection: object) -> str:
    return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one())  # type: ignore[attr-defined]


def _indexes(connection: object) -> set[str]:
    from sqlalchemy import inspect

    return {index["name"] for index in inspect(connection).get_indexes("metrics")}  # type: ignore[arg-type]


def test_the_json_of_a_stored_document_round_trips(store_url: str, documents: Documents) -> None:
    report = documents.json("reliability")
    with Store.open(store_url) as store:
        added = store.add(read_result(report))
        stored = store.document(added.id)
    assert json.dumps(stored, sort_keys=True) == json.dumps(
        read_result(report).document, sort_keys=True
    )


def test_an_older_stores_reliability_runs_get_their_probe_configuration(
    store_url: str, documents: Documents
) -> None:
    """A reliability result stored before 0004 gets the configuration a new one would."""
    from dataclasses import asdict

    from sqlalchemy import insert

    from plumbline.store.store import result_key, utc_naive
    from plumbline.store.tables import metrics, results

    engine = create_engine(store_url_for_engine(store_url))
    upgrade_to(engine, "0002")
    result = read_result(documents.json("reliability"))
    with engine.begin() as connection:  # as plumbline before 0004 wrote it
        row_id = connection.execute(
            insert(results).values(
                digest=result_key(result),
                document_digest=result.document_digest,
                kind="reliability",
                schema_version=result.schema_version,
                suite=None,
                subjects=json.dumps(list(result.subjects)),
                created_at=utc_naive(datetime.now(UTC)),
                stored_at=utc_naive(datetime.now(UTC)),
                source=None,
                inputs="[]",
                document=json.dumps(result.document),
            )
        ).inserted_primary_key[0]
        for metric in result.metrics:
            values = asdict(metric)
            del values["configuration"]
            connection.execute(insert(metrics).values(result_id=row_id, **values))
    engine.dispose()
    with Store.open(store_url) as store:
        [entry] = store.query(Query())
    assert [m.configuration for m in entry.metrics] == [m.configuration for m in result.metrics]
    assert all(m.configuration and " × " in m.configuration for m in entry.metrics)


def test_a_series_is_one_suite_kind_and_probe_configuration_counted_once(
    tmp_path: Path, documents: Documents
) -> None:
    from plumbline.store.history import build_history, check_changes

    board = documents.json("leaderboard")
    other_suite = json.loads(json.dumps(board))
    other_suite["_metadata"]["suite"]["name"] = "other-suite"
    reliability = documents.json("reliability")
    longer = json.loads(json.dumps(reliability))
    for prompt in longer["models"][0]["prompts"]:
        prompt["trials"] += 5
    with Store.open(str(tmp_path / "s.db")) as store:
        store.add(read_result(board), inputs=[{"path": "a", "sha256": "a" * 64}])
        # the same leaderboard rebuilt beside more logs: the same measurement, counted once
        again = store.add(
            read_result(board),
            inputs=[{"path": "a", "sha256": "a" * 64}, {"path": "b", "sha256": "b" * 64}],
        )
        assert again.created
        store.add(read_result(other_suite))
        store.add(read_result(reliability))
        store.add(read_result(longer))
        report = check_changes(store, Query())
        history = build_history(store, Query())
    overall = [s for s in report.series if s.metric == "overall"]
    assert sorted((s.suite, len(s.runs)) for s in overall) == [
        ("mini", 1),
        ("other-suite", 1),
    ] or sorted(s.suite or "" for s in overall) == sorted(
        {board["_metadata"]["suite"]["name"], "other-suite"}
    )
    assert all(len(s.runs) == 1 for s in overall)
    first = reliability["models"][0]["model"]
    consistency = [s for s in report.series if s.model == first and s.metric == "consistency"]
    assert len(consistency) == 2 and len({s.configuration for s in consistency}) == 2
    assert all(s.kind == "reliability" for s in consistency)
    repeated = [v.repeat_of for v in history.results[1].metrics]
    assert repeated and all(r == history.results[0].id for r in repeated)
