"""Sites that belong to plumbline (issue 27): a marker, a lock, all-or-nothing updates, and page
names that never collide. A user's own directory is never written into."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from pages_support import compare_document, write_run_records
from tests.support.site_pages import write_html

from plumbline.app.site import (
    GENERATOR_MARK,
    SITE_MARKER,
    NotASiteError,
    read_site_input,
    site_lock,
    site_problem,
    write_site,
)
from plumbline.cli.main import main

ARMS = ["control", "treatment"]


def comparison(path: Path, tasks: list[str]) -> tuple[dict[str, object], Path]:
    runs = write_run_records(path, ARMS, tasks, 2)
    return compare_document([runs], treatments=["treatment"], control="control"), runs


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_a_directory_of_the_users_files_is_refused_and_untouched(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.html").write_text("<h1>my own page</h1>")
    (mine / "notes.txt").write_text("notes")
    before = snapshot(mine)
    document, runs = comparison(tmp_path / "runs.jsonl", ["t1", "t2"])
    with pytest.raises(click.UsageError, match="not a plumbline site"):
        write_html("compare", "compare-runs", document, [runs], mine)
    with pytest.raises(NotASiteError):
        write_site([read_site_input("compare", "c", document)], mine)
    report_json = tmp_path / "compare.json"
    report_json.write_text(json.dumps(document))
    for args in (
        ["report", str(report_json), "-o", str(mine)],
        ["compare", str(runs), "-t", "treatment", "-c", "control", "--html", str(mine)],
    ):
        result = CliRunner().invoke(main, [*args, "--json", str(tmp_path / "out.json")])
        assert result.exit_code == 2, result.output
        assert "not a plumbline site" in result.output
        assert not (tmp_path / "out.json").exists()  # refused before any work
    assert snapshot(mine) == before


def test_new_empty_and_plumbline_sites_are_written_and_marked(tmp_path: Path) -> None:
    document, runs = comparison(tmp_path / "runs.jsonl", ["t1", "t2"])
    empty = tmp_path / "empty"
    empty.mkdir()
    for root in (tmp_path / "new", empty):
        assert site_problem(root) is None
        write_html("compare", "compare-runs", document, [runs], root)
        assert (root / SITE_MARKER).is_file() and (root / "index.html").is_file()
        assert site_problem(root) is None  # and it can be written again
        write_html("compare", "compare-runs", document, [runs], root)
    real = tmp_path / "real-site"  # a symlinked results directory, as on CI machines
    real.mkdir()
    linked = tmp_path / "linked-site"
    linked.symlink_to(real)
    write_html("compare", "compare-runs", document, [runs], linked)
    assert linked.is_symlink() and (real / "compare-runs" / "index.html").is_file()
    older = tmp_path / "older"  # a site written before the marker existed
    (older / "data").mkdir(parents=True)
    (older / "index.html").write_text(f"<html><head>{GENERATOR_MARK}</head></html>")
    assert site_problem(older) is None
    write_html("compare", "compare-runs", document, [runs], older)
    assert "compare-runs/index.html" in (older / "index.html").read_text()


def test_two_reports_whose_names_slug_alike_get_pages_of_their_own(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, first_runs = comparison(tmp_path / "a" / "runs.jsonl", ["t1", "t2"])
    second, second_runs = comparison(tmp_path / "b" / "runs.jsonl", ["u1", "u2", "u3"])
    site = tmp_path / "site"
    write_html("compare", "compare-runs", first, [first_runs], site)
    page = (site / "compare-runs" / "index.html").read_bytes()
    write_html("compare", "compare-runs", second, [second_runs], site)
    assert (site / "compare-runs" / "index.html").read_bytes() == page  # not overwritten
    assert (site / "compare-runs-2" / "index.html").is_file()
    # the same report again replaces its own page, under its own slug
    write_html("compare", "compare-runs", first, [first_runs], site)
    assert sorted(p.name for p in (site / "data").glob("*.json")) == [
        "compare-runs-2.json",
        "compare-runs.json",
    ]
    index = (site / "index.html").read_text()
    assert 'href="compare-runs/index.html"' in index and 'href="compare-runs-2/index.html"' in index


def test_a_writer_waits_for_the_lock_and_concurrent_writers_all_land(tmp_path: Path) -> None:
    site = tmp_path / "site"
    documents = []
    for number in range(4):
        (tmp_path / f"d{number}").mkdir()
        documents.append(comparison(tmp_path / f"d{number}" / f"runs{number}.jsonl", ["t1", "t2"]))
    write_html("compare", "compare-first", *documents[0][:1], [documents[0][1]], site)
    index_before = (site / "index.html").read_bytes()
    done = threading.Event()

    def write(number: int) -> None:
        document, runs = documents[number]
        write_html("compare", f"compare-{number}", document, [runs], site)

    with site_lock(site):
        waiting = threading.Thread(target=lambda: (write(1), done.set()))
        waiting.start()
        time.sleep(1.0)
        assert not done.is_set()  # it waits for the lock held here
        assert (site / "index.html").read_bytes() == index_before
    waiting.join(timeout=60)
    assert done.is_set()
    writers = [threading.Thread(target=write, args=(n,)) for n in (2, 3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=60)
    index = (site / "index.html").read_text()
    for slug in ("compare-first", "compare-1", "compare-2", "compare-3"):
        assert f'href="{slug}/index.html"' in index, slug
        assert (site / slug / "index.html").is_file()


def test_a_failure_part_way_leaves_the_previous_site_intact(tmp_path: Path) -> None:
    """A write that fails while the update is staged (here: the file-size limit, EFBIG, as a
    full disk would) leaves every page, data copy and the index as they were."""
    import resource
    import signal

    document, runs = comparison(tmp_path / "runs.jsonl", ["t1", "t2"])
    site = tmp_path / "site"
    write_site(
        [read_site_input("compare", "first", document, (runs,))], site, keep_other_reports=True
    )
    before = snapshot(site)
    sizes = sorted(len(data) for data in before.values())
    changed = json.loads(json.dumps(document))
    changed["decision"] = "changed"
    second, second_runs = comparison(tmp_path / "second.jsonl", ["u1", "u2", "u3"])
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (sizes[len(sizes) // 2], limit[1]))
    try:
        with pytest.raises(OSError):
            write_site(
                [
                    read_site_input("compare", "first", changed, (runs,)),
                    read_site_input("compare", "second", second, (second_runs,)),
                ],
                site,
                keep_other_reports=True,
            )
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        signal.signal(signal.SIGXFSZ, previous)
    assert snapshot(site) == before  # no page, data copy or index changed
    assert not (site / "second").exists()
    assert not list(site.glob(".plumbline-stage-*"))


def test_an_input_inside_the_site_it_would_update_is_refused(tmp_path: Path) -> None:
    document, runs = comparison(tmp_path / "runs.jsonl", ["t1", "t2"])
    site = tmp_path / "site"
    write_html("compare", "compare", document, [runs], site)
    copy = site / "data" / "compare.json"
    before = copy.read_bytes()
    result = CliRunner().invoke(main, ["report", str(copy), "-o", str(site)])
    assert result.exit_code == 2, result.output
    assert "is inside this site" in result.output
    assert copy.read_bytes() == before
