"""Store errors are one line naming the store, with exit codes by kind: a role the server
refuses (write or read), a server stopped midway, a store a reading command cannot find, a
path that looks like a URL, a time outside the representable range."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from tests.support.postgres import PostgresServer, postgres_server
from tests.support.store_results import Documents

from plumbline.cli.main import main
from plumbline.results.stored import read_result
from plumbline.store.migrate import StoreError
from plumbline.store.store import Query, Store


def invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout + result.stderr


def _error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _role(server: PostgresServer, database: str, name: str, grants: list[str]) -> str:
    """A role of `database` with only `grants`; its URL (with a password, as a user gives)."""
    with psycopg.connect(server.url(database), autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'pw'")
        for grant in grants:
            connection.execute(grant.format(role=name))
    return f"postgresql://{name}:pw@127.0.0.1:{server.port}/{database}"


def test_a_role_the_server_refuses_is_one_line_exit_3(
    postgres: PostgresServer, documents: Documents
) -> None:
    database = f"roles_{uuid.uuid4().hex[:10]}"
    url = postgres.create_database(database)
    code, text = invoke(["store", "add", str(documents.compare), "--store", url])
    assert code == 0, text
    suffix = uuid.uuid4().hex[:8]
    reader = _role(
        postgres,
        database,
        f"reader_{suffix}",
        ["GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"],
    )
    code, text = invoke(["store", "add", str(documents.reliability), "--store", reader])
    assert code == 3
    [line] = _error_lines(text)
    assert "cannot write the result: the server refused" in line
    assert f"reader_{suffix}:***@127.0.0.1" in line and "internal error" not in line
    code, text = invoke(["history", "--store", reader])
    assert code == 0, text  # reading is what the role may do
    nobody = _role(
        postgres,
        database,
        f"nobody_{suffix}",
        ["GRANT SELECT ON alembic_version TO {role}"],
    )
    for command in (["history"], ["history", "check"]):
        code, text = invoke([*command, "--store", nobody])
        assert code == 3
        [line] = _error_lines(text)
        assert "cannot read the store: the server refused" in line, line


def test_a_server_stopped_midway_is_a_store_error(documents: Documents) -> None:
    with postgres_server() as server:
        store = Store.open(server.create_database("stopping"))
        store.add(read_result(documents.json("compare")))
        server.stop()
        with pytest.raises(StoreError) as caught:
            store.add(read_result(documents.json("reliability")))
        with pytest.raises(StoreError):
            store.query(Query())
        store.close()
    message = str(caught.value)
    assert "\n" not in message and message.startswith("postgresql://postgres@127.0.0.1:")
    assert "cannot write the result" in message
    assert caught.value.kind in ("lost", "unreachable")


def test_reading_commands_never_create_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "nightly.db"
    for command in (["history"], ["history", "check", "--fail-on-change"]):
        code, text = invoke([*command, "--store", str(missing)])
        assert code == 2, text
        [line] = _error_lines(text)
        assert str(missing) in line and "no results store" in line
    assert not (tmp_path / "typo").exists()


def test_a_path_is_a_path_and_the_guard_sees_the_store(
    tmp_path: Path, documents: Documents
) -> None:
    for name in ("night?1.db", "a%20b.db"):
        store = tmp_path / name
        code, text = invoke(["store", "add", str(documents.compare), "--store", str(store)])
        assert code == 0, text
        assert store.is_file()
        code, text = invoke(["history", "--store", str(store), "--json", str(store)])
        assert code == 2 and "both an input and an output" in text
        with Store.open(str(store), create=False) as opened:
            assert opened.count() == 1
    assert not (tmp_path / "night").exists() and not (tmp_path / "a b.db").exists()
    code, text = invoke(
        ["history", "--store", str(tmp_path / "night?1.db"), "--json", str(tmp_path / "night")]
    )
    assert code == 0, text
    assert json.loads((tmp_path / "night").read_text())["results"][0]["kind"] == "compare"


def test_times_outside_the_representable_range_are_refused(
    tmp_path: Path, documents: Documents
) -> None:
    board = documents.json("leaderboard")
    board["_metadata"]["generated_at"] = "9999-12-31T23:59:59-14:00"
    late = tmp_path / "late.json"
    late.write_text(json.dumps(board), encoding="utf-8")
    store = str(tmp_path / "s.db")
    code, text = invoke(["store", "add", str(late), "--store", store])
    assert code == 2
    [line] = _error_lines(text)
    assert f"{late}:1: _metadata.generated_at:" in line and "9999-12-31" in line
    invoke(["store", "add", str(documents.compare), "--store", store])
    code, text = invoke(["history", "--store", store, "--since", "0001-01-01T00:00:00+14:00"])
    assert code == 2 and "outside the times a store keeps" in text
    assert "internal error" not in text
