"""Outputs that keep what was there (issue 38, item 6): a file the shell opened for appending
(`--json /dev/stdout >> run.log`, `/dev/fd/3`) is appended to, never replaced; a site update is
all or nothing, under SIGKILL at the moment it switches and under a file that cannot be written,
and the next update removes what a killed one left."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from pages_support import compare_document, write_run_records

from plumbline.cli.main import main

ARMS = ["control", "treatment"]


def _plumbline(*args: str) -> list[str]:
    return [sys.executable, "-m", "plumbline", *args]


@pytest.mark.parametrize(
    ("target", "redirect"),
    [("/dev/stdout", ">>"), ("/dev/fd/3", "3>>"), ("/proc/self/fd/1", ">>")],
)
def test_json_into_a_file_opened_for_appending_appends(
    tmp_path: Path, target: str, redirect: str
) -> None:
    log = tmp_path / "run.log"
    log.write_text("earlier line 1\nearlier line 2\n")
    command = " ".join(
        [*_plumbline("interval", "--successes", "7", "--trials", "10", "--json", target)]
    )
    subprocess.run(f"{command} {redirect} {log}", shell=True, check=True, cwd=tmp_path, timeout=120)
    text = log.read_text()
    assert text.startswith("earlier line 1\nearlier line 2\n"), text[:200]
    assert text.count('"successes": 7') == 1, text
    assert list(tmp_path.glob(".run.log.*")) == []  # no temporary file left beside it


def test_json_into_a_file_opened_for_writing_is_written_at_its_offset(tmp_path: Path) -> None:
    """`> out.json`: the shell truncated it; the document is written into the open file."""
    out = tmp_path / "out.json"
    out.write_text("old content that is much longer than nothing\n" * 10)
    command = " ".join(_plumbline("interval", "--successes", "3", "--trials", "4", "--json"))
    subprocess.run(f"{command} /dev/stdout > {out}", shell=True, check=True, timeout=120)
    assert json.loads(out.read_text().split("\n}\n")[0] + "\n}")["successes"] == 3
    assert "old content" not in out.read_text()


# --- sites -----------------------------------------------------------------------------------


def _documents(tmp_path: Path) -> tuple[Path, Path]:
    """Two compare documents of different runs, both named `compare.json` (one slug)."""
    made = []
    for name, tasks in (("a", ["t1", "t2"]), ("b", ["u1", "u2", "u3", "u4"])):
        folder = tmp_path / name
        folder.mkdir()
        runs = write_run_records(folder / "runs.jsonl", ARMS, tasks, 2)
        document = compare_document([runs], treatments=["treatment"], control="control")
        path = folder / "compare.json"
        path.write_text(json.dumps(document))
        made.append(path)
    return made[0], made[1]


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".plumbline-site.lock"
    }


def _report(document: Path, site: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(document), "-o", str(site)])
    assert result.exit_code == 0, result.output


def _leftovers(site: Path) -> list[Path]:
    return [*site.parent.glob(f".plumbline-stage-{site.name}-*"), *site.glob(".plumbline-stage-*")]


def _staged_index(site: Path) -> bool:
    """Is a staged site complete (its index, written last before the switch, is there)?"""
    for folder in (site.parent, site):
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(".plumbline-stage-") and os.path.exists(
                    os.path.join(entry.path, "index.html")
                ):
                    return True
    return False


def test_a_site_update_killed_while_it_switches_is_all_or_nothing(tmp_path: Path) -> None:
    first, second = _documents(tmp_path)
    reference = tmp_path / "reference"
    _report(first, reference)
    old = snapshot(reference)
    _report(second, reference)
    new = snapshot(reference)
    assert old != new
    outcomes = set()
    for attempt, delay in enumerate((0.0, 0.0005, 0.002)):
        site = tmp_path / f"site{attempt}"
        _report(first, site)
        assert snapshot(site) == old
        process = subprocess.Popen(
            _plumbline("report", str(second), "-o", str(site)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 120
            while not _staged_index(site) and process.poll() is None:
                assert time.monotonic() < deadline, "the update never staged its index"
            if delay:
                time.sleep(delay)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=60)
        now = snapshot(site)
        assert now in (old, new), sorted(set(now.items()) ^ set(old.items()))[:4]
        outcomes.add("new" if now == new else "old")
        # the next update removes what the killed one left, and lands whole
        _report(second, site)
        assert snapshot(site) == new
        assert _leftovers(site) == []
    print("outcomes of the kills:", sorted(outcomes))  # which one is the race's; both whole


def test_a_file_that_cannot_be_written_leaves_the_whole_site_as_it_was(tmp_path: Path) -> None:
    first, second = _documents(tmp_path)
    site = tmp_path / "site"
    _report(first, site)
    data = site / "data" / "compare.json"
    data.unlink()
    data.mkdir()  # a directory where the update's data copy goes
    (data / "keep.txt").write_text("mine")
    before = snapshot(site)
    result = CliRunner().invoke(main, ["report", str(second), "-o", str(site)])
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    assert snapshot(site) == before  # no page, index or data copy of the failed update
    assert _leftovers(site) == []


def test_leftovers_of_an_older_killed_update_inside_the_site_are_removed(tmp_path: Path) -> None:
    first, second = _documents(tmp_path)
    site = tmp_path / "site"
    _report(first, site)
    inside = site / ".plumbline-stage-abcd1234"
    (inside / "compare").mkdir(parents=True)
    (inside / "index.html").write_text("staged")
    beside = tmp_path / ".plumbline-stage-site-zz_9ab12"
    shutil.copytree(site, beside, ignore=shutil.ignore_patterns(".plumbline-stage-*"))
    other = tmp_path / ".plumbline-stage-site2-abcdefgh"  # another site's: not touched
    other.mkdir()
    _report(second, site)
    assert _leftovers(site) == []
    assert other.is_dir()
