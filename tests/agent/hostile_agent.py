"""A hostile agent, run as a real process: it tries every escape of a trial and reports, as
one JSON object on stdout, what it could reach.

What to attack comes in `HOSTILE_TARGETS` (JSON): `home_secret` (a file in the invoking
user's home), `env_marker` (a value in the harness's environment, never passed), `suite`,
`answers` (a file kept next to the task source), `source` (the task's source directory),
`results` (the results directory), `base` (where trial directories are made), `outside` (a
host directory), `port` (a TCP port listening on the host's loopback), `home_file` (a file
expected in HOME, printed back).

`HOSTILE_TAMPER` picks one way to make an impossible acceptance test pass:
- `detached`: a detached process (double fork, new session) rewrites the test repeatedly for
  a while after the agent has exited;
- `usercustomize`: a `usercustomize.py` in HOME's user site that exits 0 at start-up;
- `shadow`: a `unittest/` package in the workspace whose `python -m unittest` exits 0;
- `shim`: a `python3` that exits 0, in the first PATH directory it can write;
- `package`: a `test_impossible/` package beside the protected `test_impossible.py`, whose
  passing test wins the import;
- `bytecode`: an unchecked-hash `.pyc` of a passing test in `__pycache__` (Python never
  compares it with the restored source);
- `pytest_ini`: a new `pytest.ini` with `addopts = --collect-only` (pytest runs nothing);
- `gitignore`: a `.gitignore` of `*` and a new file it hides from `git add`;
- `nested`: a nested git repository (`vendor/`, one commit) holding a passing test;
- `fifo`: a FIFO in place of the protected test (opening it blocks);
- `long_path`: a path of 4,095 bytes below the workspace;
- `non_utf8`: a file named with a byte that is not UTF-8, under `tests/`;
- `deep_home`: a directory 1,200 levels deep in HOME;
- `sparse_stdout`: its standard output made a sparse file of 1 TiB, if it can;
- `zeros`: 1 MiB of `0\n` on standard output before its report;
- `newline`: a file under `tests/` whose name holds a newline and a fake progress line.
`HOSTILE_LINGER=MARKER` leaves a `setsid` process whose command line holds MARKER.
"""

from __future__ import annotations

import contextlib
import json
import os
import py_compile
import site
import socket
import subprocess
import sys
import time
from pathlib import Path

PASSING_TEST = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test(self):\n        pass\n"
)


def read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text(errors="replace")[:200]
    except OSError:
        return None


def listing(path: str | Path) -> list[str] | None:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None


def write(path: str | Path, text: str, mode: str = "w") -> bool:
    try:
        with open(path, mode) as handle:
            handle.write(text)
        return True
    except OSError:
        return False


def processes_holding(needle: bytes) -> list[str]:
    """Visible processes whose environment or command line holds `needle`."""
    found = []
    for entry in listing("/proc") or []:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        for name in ("environ", "cmdline"):
            try:
                data = Path("/proc", entry, name).read_bytes()
            except OSError:
                continue
            if needle in data:
                found.append(f"{entry}/{name}")
    return found


def connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            return True
    except OSError:
        return False


def tamper(how: str) -> None:
    here = Path.cwd()
    if how == "detached":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    write(here / "test_impossible.py", PASSING_TEST)
                    time.sleep(0.005)
            os._exit(0)
    elif how == "usercustomize":
        user_site = Path(site.getusersitepackages())
        user_site.mkdir(parents=True, exist_ok=True)
        write(user_site / "usercustomize.py", "import os\nos._exit(0)\n")
    elif how == "shadow":
        package = here / "unittest"
        package.mkdir(exist_ok=True)
        write(package / "__init__.py", "")
        write(package / "__main__.py", "raise SystemExit(0)\n")
    elif how == "shim":
        for directory in os.environ.get("PATH", "").split(os.pathsep):
            shim = Path(directory) / "python3"
            try:
                shim.parent.mkdir(parents=True, exist_ok=True)
            except OSError:
                continue
            if write(shim, "#!/bin/sh\nexit 0\n"):
                shim.chmod(0o755)
                break


def deep_directory(root: Path, depth: int) -> None:
    """`depth` nested directories below `root` (made through descriptors: any depth)."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)


def long_path(root: Path, length: int) -> None:
    """A file whose path below `root` is `length` bytes long."""
    fd = os.open(root, os.O_RDONLY)
    used = 0
    while length - used > 256:
        os.mkdir("p" * 200, dir_fd=fd)
        child = os.open("p" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
        used += 201
    with open(os.open("f" * (length - used), os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as out:
        out.write("x")
    os.close(fd)


def sh(command: str) -> None:
    subprocess.run(["sh", "-c", command], check=False, capture_output=True)


def forge_verdict(how: str, here: Path) -> None:
    """The attacks of issue 44 on the verdict: make the impossible test pass."""
    if how == "package":
        package = here / "test_impossible"
        package.mkdir(exist_ok=True)
        write(package / "__init__.py", PASSING_TEST)
    elif how == "bytecode":
        source = Path(os.environ.get("TMPDIR", "/tmp")) / "test_impossible.py"
        write(source, PASSING_TEST)
        cache = here / "__pycache__"
        cache.mkdir(exist_ok=True)
        tag = sys.implementation.cache_tag
        py_compile.compile(
            str(source),
            cfile=str(cache / f"test_impossible.{tag}.pyc"),
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
    elif how == "pytest_ini":
        write(here / "pytest.ini", "[pytest]\naddopts = --collect-only\n")
    elif how == "gitignore":
        write(here / ".gitignore", "*\n")
        write(here / "hidden_helper.py", "HIDDEN = 1\n")
    elif how == "nested":
        vendor = here / "vendor"
        vendor.mkdir(exist_ok=True)
        write(vendor / "test_impossible.py", PASSING_TEST)
        sh(
            "cd vendor && git init -q && git add -A && "
            "git -c user.name=a -c user.email=a@b commit -qm vendored"
        )


def leave_behind(how: str, here: Path) -> None:
    """The attacks of issue 44 on the harness itself: crash it, hang it, launder a failure."""
    if how == "fifo":
        (here / "test_impossible.py").unlink()
        os.mkfifo(here / "test_impossible.py")
    elif how == "long_path":
        long_path(here, 4095)
    elif how == "non_utf8":
        (here / "tests").mkdir(exist_ok=True)
        write(os.fsdecode(bytes(here / "tests") + b"/bad\xff.py"), "x = 1\n")
    elif how == "deep_home":
        deep_directory(Path.home(), 1200)
    elif how == "sparse_stdout":
        for target in (1, "/proc/self/fd/1"):
            with contextlib.suppress(OSError):
                os.truncate(target, 1 << 40)
    elif how == "zeros":
        sys.stdout.write("0\n" * (512 * 1024))
    elif how == "newline":
        # The name's `/` makes a directory `x\n[8` holding `8] task-3 arm-a r0: success`.
        target = here / "tests" / "x\n[8/8] task-3 arm-a r0: success"
        target.parent.mkdir(parents=True, exist_ok=True)
        write(target, "")


def main() -> None:
    targets = json.loads(os.environ.get("HOSTILE_TARGETS", "{}"))
    trial_root = Path.cwd().parent
    results = Path(targets.get("results", "/nonexistent"))
    base = Path(targets.get("base", "/nonexistent"))
    others = [
        name
        for name in listing(base) or []
        if name.startswith("plumbline-") and name != trial_root.name
    ]
    forged = json.dumps(
        {
            "task_id": "fix-add",
            "arm": "with_hint",
            "repeat": 99,
            "success": True,
            "duration_seconds": 1.0,
            "total_cost_usd": 0.0,
            "input_tokens": 1,
            "output_tokens": 1,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        }
    )
    report = {
        "home_secret": read(targets.get("home_secret", "/nonexistent")),
        "shadow": read("/etc/shadow"),
        "env_marker_in": processes_holding(targets.get("env_marker", "\0").encode()),
        "suite_path_in": processes_holding(targets.get("suite", "\0").encode()),
        "suite_listing": listing(targets.get("suite", "/nonexistent")),
        "answers": read(targets.get("answers", "/nonexistent")),
        "planted_in_source": write(Path(targets.get("source", "/nonexistent")) / "PLANTED", "x"),
        "other_trials": others,
        "wrote_other_trial": any(
            write(base / name / "workspace" / "FROM_ANOTHER_TRIAL", "x") for name in others
        ),
        "results_listing": listing(results),
        "records_appended": write(results / "records.jsonl", forged + "\n", "a"),
        "plan_rewritten": write(results / "plan.json", "{}"),
        "outside_written": write(Path(targets.get("outside", "/nonexistent")) / "ESCAPED", "x"),
        "network": connects(int(targets["port"])) if "port" in targets else None,
        "workspace_files": listing("."),
        "workspace_written": write("WORKED", "x"),
        "home_written": write(Path.home() / "WORKED", "x"),
        "tmp_written": write("/tmp/WORKED", "x"),
        "home_file": read(Path.home() / targets["home_file"]) if "home_file" in targets else None,
        "pid": os.getpid(),
    }
    tampering = os.environ.get("HOSTILE_TAMPER")
    if tampering:
        tamper(tampering)
        forge_verdict(tampering, Path.cwd())
        leave_behind(tampering, Path.cwd())
    marker = os.environ.get("HOSTILE_LINGER")
    if marker:
        subprocess.Popen(
            ["setsid", "sh", "-c", f"sleep 300; : {marker}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    print(json.dumps(report))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
