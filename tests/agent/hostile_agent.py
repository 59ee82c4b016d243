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
- `shim`: a `python3` that exits 0, in the first PATH directory it can write.
`HOSTILE_LINGER=MARKER` leaves a `setsid` process whose command line holds MARKER.
"""

from __future__ import annotations

import json
import os
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
