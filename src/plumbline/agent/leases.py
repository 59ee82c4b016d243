"""Trials in flight, written down, so that a killed harness leaves nothing running.

Before a trial starts the harness writes `OUTPUT/running/<run_id>.json` naming its trial
directory, and deletes it once the directory is gone. A harness killed in between (SIGKILL,
a crash, a power cut) leaves the lease behind, and with it perhaps an agent still working in
its own session. The next run of the same command reclaims every lease first: it kills each
process still working in that trial (its working directory, or its HOME, lies inside the
trial directory), removes the directory, and deletes the lease. The unit has no record, so
it runs again.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.agent.safe_files import remove_tree
from plumbline.records.io import write_json_atomic
from plumbline.records.locks import LockBusy, exclusive

RUNNING = "running"
#: The lock a harness holds on its output directory for its whole run.
LOCK = ".lock"


class OutputBusy(LockBusy):
    """Another harness is running into the same output directory."""


@contextlib.contextmanager
def hold(output: Path) -> Iterator[None]:
    """Hold the exclusive lock of `output` (created if needed) while the block runs; raise
    `OutputBusy` at once when another process holds it. The kernel releases it when the
    holder dies, however it dies, so a killed harness never leaves it behind."""
    output.mkdir(parents=True, exist_ok=True)
    busy = (
        f"{output} is in use by another `plumbline agent run` ({{holder}}); wait for it "
        "to finish, or use another output directory"
    )
    with exclusive(output / LOCK, busy, OutputBusy):
        yield


#: Every trial directory's name starts so; a lease never leads to deleting anything else.
TRIAL_PREFIX = "plumbline-trial"
#: The per-run directory of pristine `.git` copies (outside every trial directory) starts so.
BASELINES_PREFIX = "plumbline-baselines"


@dataclass(frozen=True)
class Reclaimed:
    """What reclaiming one lease found: the trial, and how many processes were still in it."""

    run_id: str
    trial_root: Path
    killed: int


def lease_path(output: Path, run_id: str) -> Path:
    return output / RUNNING / f"{run_id}.json"


def take(output: Path, run_id: str, trial_root: Path, baseline: Path | None = None) -> Path:
    """Write the lease of a trial about to run (its directory, and where its pristine `.git`
    copy goes); returns its path."""
    path = lease_path(output, run_id)
    document: dict[str, Any] = {"run_id": run_id, "trial_root": str(trial_root), **holder()}
    if baseline is not None:
        document["baseline"] = str(baseline)
    write_json_atomic(path, document)
    return path


def release(lease: Path) -> None:
    lease.unlink(missing_ok=True)


def _started(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), to tell it from a later process
    given the same pid; None when it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def holder() -> dict[str, Any]:
    """This process, as `holder_alive` later recognises it (pid and start time)."""
    return {"pid": os.getpid(), "pid_started": _started(os.getpid())}


def holder_alive(document: dict[str, Any]) -> bool:
    """Whether the process that took a lease still runs."""
    pid = document.get("pid")
    if not isinstance(pid, int):
        return False
    started = _started(pid)
    return started is not None and started == document.get("pid_started", started)


def _inside(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(f"{root}/")


def processes_in(trial_root: Path) -> list[int]:
    """Processes (of any session) whose working directory or HOME is inside `trial_root`."""
    found: list[int] = []
    own = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not ours to inspect
        homes = [v[5:].decode(errors="replace") for v in environ if v.startswith(b"HOME=")]
        if _inside(cwd, trial_root) or any(_inside(home, trial_root) for home in homes):
            found.append(int(entry.name))
    return found


def _kill(pids: list[int]) -> None:
    own_group = os.getpgrp()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            group = os.getpgid(pid)
            if group != own_group:
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)


def reclaim(
    output: Path, *, keep_workspaces: bool = False, orphans_only: bool = False
) -> list[Reclaimed]:
    """End what every lease left in `output` still has running; remove the trial directories
    (unless `keep_workspaces`) and the leases. Only under `hold(output)`: the leases of a
    harness still running are not leftovers. With `orphans_only` (the leases of a node's
    Ray workers, which come and go on their own), only leases whose holder process is gone.
    Each lease is claimed by renaming it first, so two reclaimers never take the same one."""
    reclaimed: list[Reclaimed] = []
    for lease in sorted((output / RUNNING).glob("*.json")):
        try:
            document = json.loads(lease.read_text(encoding="utf-8"))
            run_id, root = str(document["run_id"]), Path(document["trial_root"])
        except FileNotFoundError:
            continue  # released (or claimed by another worker) meanwhile
        except (OSError, ValueError, KeyError, TypeError):
            if not orphans_only:
                release(lease)  # a lease cut short by the kill itself: nothing ran under it yet
            continue
        if orphans_only and holder_alive(document):
            continue
        claimed = lease.with_name(f"{lease.name}.reclaiming.{os.getpid()}")
        try:
            lease.rename(claimed)
        except FileNotFoundError:
            continue  # claimed by another reclaimer of the same directory
        lease = claimed
        killed = 0
        if root.is_absolute() and root.name.startswith(f"{TRIAL_PREFIX}."):
            for _attempt in range(20):  # a dying process may still fork: look again
                pids = processes_in(root)
                if not pids:
                    break
                killed += len(pids)
                _kill(pids)
                time.sleep(0.05)
            if not keep_workspaces:
                remove_tree(root)
        baselines = Path(str(document.get("baseline", ""))).parent
        if baselines.is_absolute() and baselines.name.startswith(f"{BASELINES_PREFIX}."):
            remove_tree(baselines)
        release(lease)
        reclaimed.append(Reclaimed(run_id, root, killed))
    return reclaimed


__all__ = [
    "BASELINES_PREFIX",
    "LOCK",
    "RUNNING",
    "TRIAL_PREFIX",
    "OutputBusy",
    "Reclaimed",
    "hold",
    "holder",
    "holder_alive",
    "lease_path",
    "processes_in",
    "reclaim",
    "release",
    "take",
]
