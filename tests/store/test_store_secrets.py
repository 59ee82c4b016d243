"""A store password never shows: every form the driver accepts (in `user:password@`, with an
unencoded `/`, percent-encoded, as `?password=`, `?sslpassword=`, under every scheme alias),
fed with a unique marker to every command that takes `--store`, on a real PostgreSQL server
(working and unreachable) and with URLs that do not parse; then everything written is
scanned: stdout, stderr (warnings and debug logs), the JSON, the site's HTML, the server's
log, and the demo's echo of each step."""

from __future__ import annotations

import shlex
import socket
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from tests.support.postgres import PostgresServer
from tests.support.store_results import EXAMPLES, Documents

from plumbline.cli.demo import demo_steps, shown_arguments
from plumbline.cli.main import main
from plumbline.cli.storing import StoreOptions


def _marker() -> str:
    return "SECRET" + uuid.uuid4().hex[:10]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _forms(host: str, database: str) -> list[tuple[str, list[str]]]:
    """(URL, the markers in it) for each way of giving a password."""
    forms = []
    a, b = _marker(), _marker()
    forms.append((f"postgresql://postgres:{a}/{b}@{host}/{database}", [a, b]))
    c = _marker()
    forms.append((f"postgresql://postgres@{host}/{database}?password={c}", [c]))
    d, e = _marker(), _marker()
    forms.append(
        (f"postgresql://postgres:{quote(d + '/@:' + e, safe='')}@{host}/{database}", [d, e])
    )
    f = _marker()
    forms.append((f"postgres://postgres:{f}@{host}/{database}", [f]))
    g = _marker()
    forms.append((f"postgresql+psycopg2://postgres:{g}@{host}/{database}", [g]))
    h, i = _marker(), _marker()
    forms.append(
        (
            f"postgresql://postgres@{host}/{database}?sslmode=disable&password={h}&sslpassword={i}",
            [h, i],
        )
    )
    return forms


def _broken_forms() -> list[tuple[str, list[str]]]:
    """URLs with a password that do not parse or name no reachable server."""
    forms = []
    for template in (
        "postgresql://ci:{m}@127.0.0.1:abc/db",
        "postgresql://ci:{m}@[::1/db",
        "postgresql://ci:{m}@host:99999/db",
        "postgresql://ci:{m}@bad@127.0.0.1/db",
        "postgresql://ci:{m}/x@127.0.0.1:" + str(_closed_port()) + "/db",
        "postgresql://ci@127.0.0.1:" + str(_closed_port()) + "/db?password={m}",
        "postgresql://ci@127.0.0.1:abc/db?password={m}",
        "mysql://ci:{m}@host/db",
        "sqlite:///x.db?password={m}",
    ):
        marker = _marker()
        forms.append((template.format(m=marker), [marker]))
    return forms


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--verbose", *args], env=env)
    return result.exit_code, result.stdout + result.stderr


def _compare(output: Path) -> list[str]:
    return [
        "compare",
        str(EXAMPLES / "agent_runs.jsonl"),
        "--treatment",
        "with_skelly",
        "--control",
        "without_skelly",
        "--resamples",
        "100",
        "--json",
        str(output),
    ]


def _written(root: Path, since_ns: int = 0) -> str:
    """Every file under `root` (those written since `since_ns` only: a file left as it was
    cannot hold a marker made after it was last written)."""
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace")
        for path in root.rglob("*")
        if path.is_file() and path.stat().st_mtime_ns >= since_ns
    )


def _assert_hidden(text: str, markers: list[str], where: str) -> None:
    lowered = text.lower()  # once: the server's files are large
    for marker in markers:
        assert marker not in text, f"{marker} shown in {where}"
        assert marker.lower() not in lowered, f"{marker} shown in {where}"


def test_a_working_store_never_shows_its_password(
    postgres: PostgresServer, documents: Documents, tmp_path: Path
) -> None:
    database = f"s_{uuid.uuid4().hex[:10]}"
    postgres.create_database(database)
    for index, (url, markers) in enumerate(_forms(f"127.0.0.1:{postgres.port}", database)):
        out = tmp_path / f"form{index}"
        out.mkdir()
        started_ns = time.time_ns() - 2_000_000_000  # a margin for the file system's clock
        outputs = []
        outputs.append(_run(["store", "add", str(documents.leaderboard), "--store", url]))
        outputs.append(_run([*_compare(out / "c.json"), "--store", url]))
        outputs.append(_run(_compare(out / "d.json"), env={"PLUMBLINE_STORE": url}))
        outputs.append(
            _run(
                [
                    "history",
                    "--store",
                    url,
                    "--json",
                    str(out / "h.json"),
                    "--html",
                    str(out / "site"),
                ]
            )
        )
        outputs.append(_run(["history", "check", "--json"], env={"PLUMBLINE_STORE": url}))
        outputs.append(_run(["history", "--store", url, "--kind", "nope"]))
        for code, text in outputs[:-1]:
            assert code == 0, text
        assert "stored as result" in outputs[1][1]
        assert (out / "h.json").is_file() and any((out / "site").rglob("*.html"))
        assert "***" in (out / "h.json").read_text()
        for _code, text in outputs:
            _assert_hidden(text, markers, f"the output of {url}")
        _assert_hidden(_written(out), markers, "the files written")
        _assert_hidden(_written(postgres.root, started_ns), markers, "the server's files")


def test_a_store_that_fails_never_shows_its_password(documents: Documents, tmp_path: Path) -> None:
    for index, (url, markers) in enumerate(_broken_forms()):
        out = tmp_path / f"form{index}"
        out.mkdir()
        runs = [
            _run(["store", "add", str(documents.leaderboard), "--store", url]),
            _run(["history", "--store", url, "--json", str(out / "h.json")]),
            _run(["history", "check"], env={"PLUMBLINE_STORE": url}),
            _run([*_compare(out / "c.json"), "--store", url]),
            _run([*_compare(out / "d.json"), "--store", url, "--store-required"]),
        ]
        for code, text in runs[:3]:
            assert code in (2, 3), text
            assert "internal error" not in text and "Traceback" not in text, text
            assert len([line for line in text.splitlines() if "error" in line.lower()]) == 1, text
        assert runs[3][0] == 0 and "result not stored" in runs[3][1], runs[3][1]
        assert runs[4][0] == 3 and (out / "d.json").is_file()
        for _, text in runs:
            _assert_hidden(text, markers, f"the output of {url}")
        _assert_hidden(_written(out), markers, "the files written")


@pytest.mark.parametrize("form", range(6))
def test_the_demo_echoes_each_step_without_the_password(form: int, tmp_path: Path) -> None:
    url, markers = _forms("db.example:5432", "results")[form]
    store = StoreOptions(url=url, labels=(("commit", "abc"),))
    steps = demo_steps(tmp_path, store)
    assert any(url in step.args for step in steps)  # the steps get the real URL...
    echoed = "\n".join(shlex.join(shown_arguments(step.args, url)) for step in steps)
    assert "://postgres" in echoed and "***" in echoed
    _assert_hidden(echoed, markers, "the demo's echo")  # ...their echo never shows it
