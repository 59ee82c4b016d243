"""What an agent leaves, read and removed safely: FIFOs, links, sparse files, deep trees,
flooded output, runner configurations (`plumbline.agent.safe_files`, `capture`, `profiles`,
`evidence`), on real files, pipes and processes."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from plumbline.agent.capture import MAX_OUTPUT_BYTES, CappedLog
from plumbline.agent.evidence import collect_evidence, evidence_base, runner_files
from plumbline.agent.process import run_process
from plumbline.agent.profiles import json_objects, resolve_agent
from plumbline.agent.safe_files import (
    NotRegularFileError,
    escaped_value,
    open_regular,
    read_head,
    remove_tree,
)
from plumbline.agent.workspace import commit_all, init_repository, matches_globs, save_baseline
from plumbline.core.escape import terminal_line


def deep(root: Path, depth: int) -> None:
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.mkfifo("fifo", dir_fd=fd)
    os.close(fd)


def test_remove_tree_removes_any_depth_unreadable_directories_and_never_follows_links(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("x")
    root = tmp_path / "trial"
    root.mkdir()
    deep(root, 1_200)
    locked = root / "locked"
    locked.mkdir()
    (locked / "file").write_text("x")
    locked.chmod(0)
    (root / "link").symlink_to(outside)
    remove_tree(root)
    assert not root.exists()
    assert (outside / "kept").read_text() == "x"


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "target").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(NotRegularFileError):
        open_regular(tmp_path / "fifo")  # would block forever if opened for reading
    with pytest.raises(OSError):
        open_regular(tmp_path / "link")
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as handle:
        handle.truncate(1 << 40)
    data, size = read_head(sparse, 10)
    assert data == b"\0" * 10 and size == 1 << 40


def test_names_that_are_not_utf8_are_stored_escaped() -> None:
    name = os.fsdecode(b"tests/bad\xff.py")
    assert escaped_value({"paths": [name]}) == {"paths": ["tests/bad\\xff.py"]}
    json.dumps(escaped_value({"paths": [name]})).encode("utf-8")


def test_progress_text_keeps_to_its_line() -> None:
    text = terminal_line("tests/x\n[8/8] task-3 arm-a r0: success\x1b[2K")
    assert "\n" not in text and text.startswith("tests/x\\n")
    assert "\x1b" not in text


def test_a_capped_log_keeps_head_and_tail_with_a_note(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "out", limit=10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrst"):
        log.write(chunk)
    log.close()
    assert (tmp_path / "out").read_bytes() == (
        b"abcde\n[plumbline: 10 bytes of output left out here]\npqrst"
    )


def test_flooded_output_is_capped_and_a_fifo_log_replaced(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "stderr")
    result = run_process(
        ["sh", "-c", f"yes 0 | head -c {3 * MAX_OUTPUT_BYTES}; echo '{{\"end\": 1}}'"],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        timeout=120,
        stdout=tmp_path / "stdout",
        stderr=tmp_path / "stderr",
    )
    assert result.exit_code == 0
    data = (tmp_path / "stdout").read_bytes()
    assert len(data) < MAX_OUTPUT_BYTES + 100
    assert b"bytes of output left out here" in data and data.endswith(b'{"end": 1}\n')
    assert (tmp_path / "stderr").is_file()


def test_profiles_read_output_in_bounded_memory(tmp_path: Path) -> None:
    stdout = tmp_path / "agent.stdout"
    result = {"type": "result", "duration_ms": 2000, "usage": {"input_tokens": 3}}
    stdout.write_bytes(b"0\n" * (512 * 1024) + json.dumps(result).encode() + b"\n")
    tracemalloc.start()
    try:
        report = resolve_agent("claude-code").read(stdout)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.fields["input_tokens"] == 3 and report.fields["duration_seconds"] == 2.0
    assert peak < 4 * 1024 * 1024


def test_a_pretty_printed_object_is_still_read(tmp_path: Path) -> None:
    stdout = tmp_path / "export.json"
    stdout.write_text("text\n" + json.dumps({"info": {"id": "s"}, "messages": []}, indent=2))
    assert list(json_objects(stdout)) == [{"info": {"id": "s"}, "messages": []}]


def repository(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path, str, dict[str, str]]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name, text in files.items():
        (workspace / name).write_text(text)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    init_repository(workspace, env)
    commit_all(workspace, env)
    baseline = tmp_path / "baseline"
    save_baseline(workspace, baseline)
    return workspace, baseline, evidence_base(workspace, baseline, env), env


def test_runner_configurations_are_flagged_and_ignore_files_hide_nothing(tmp_path: Path) -> None:
    pyproject = "[project]\nname = 'x'\n"
    workspace, baseline, base, env = repository(
        tmp_path, {"pyproject.toml": pyproject, "package.json": '{"scripts": {"test": "jest"}}'}
    )
    (workspace / ".gitignore").write_text("*\n")
    (workspace / "pytest.ini").write_text("[pytest]\naddopts = --collect-only\n")
    (workspace / "pyproject.toml").write_text(pyproject + "[tool.pytest.ini_options]\n")
    (workspace / "package.json").write_text('{"scripts": {"test": "true"}}')
    (workspace / "Makefile").write_text("test:\n\ttrue\n")
    evidence = collect_evidence(workspace, baseline, base, env)
    assert b"+++ b/pytest.ini" in evidence.patch and b"+++ b/.gitignore" in evidence.patch
    flagged = runner_files(workspace, baseline, base, evidence, "python -m pytest", env)
    assert flagged == ["pyproject.toml", "pytest.ini"]
    flagged = runner_files(workspace, baseline, base, evidence, "make test && npm test", env)
    assert flagged == ["Makefile", "package.json", "pyproject.toml", "pytest.ini"]
    allowed = runner_files(workspace, baseline, base, evidence, "pytest", env, ["pytest.ini"])
    assert allowed == ["pyproject.toml"]


def test_a_protected_glob_matches_names_holding_newlines() -> None:
    assert matches_globs("tests/x\n[8/8] task-3 arm-a r0: success", ["tests/**"])
    assert matches_globs("a\nb.py", ["*.py"]) and not matches_globs("a/b.py", ["*.py"])
