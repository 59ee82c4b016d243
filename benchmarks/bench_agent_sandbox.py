"""The trial sandbox's cost: what bubblewrap adds to each agent trial, against running it
unconfined (`--sandbox none`), in the same run.

Two measurements, alternating the two modes so machine load hits both alike:

1. Start-up per command: the same short command (this interpreter's `-c pass`, as an agent's
   first process would be) started through the harness's own launcher (`Harness.run_confined`)
   with a trial's real confinement (runtimes, workspace, HOME, hidden paths), sandboxed and
   not; the median difference is the sandbox's start-up cost per command.
2. Whole trials: `plumbline agent run` of the example suite (2 tasks × 2 arms × REPEATS) with an
   agent that exits at once, `--sandbox bubblewrap` vs `--sandbox none`; the difference in wall
   time per trial (a sandboxed trial starts two sandboxes: the agent's and the acceptance
   check's).

Target: under 100 ms per trial on 2 cores.

    .venv/bin/python benchmarks/bench_agent_sandbox.py            # 40 starts, 3 repeats
    .venv/bin/python benchmarks/bench_agent_sandbox.py --quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plumbline.agent.harness import Harness, RunOptions
from plumbline.agent.plan import make_plan
from plumbline.agent.profiles import resolve_agent
from plumbline.agent.sandbox import SandboxOptions
from plumbline.agent.suite import load_suite
from plumbline.agent.workspace import Trial, create_trial

SUITE = Path(__file__).resolve().parents[1] / "src/plumbline/examples/agent_suite/suite.toml"
TARGET_MS = 100.0


def start_times(kind: str, starts: int, base: Path) -> list[float]:
    """Seconds to run `python3 -c pass` through the harness's launcher, `starts` times."""
    plan = make_plan(load_suite(SUITE), resolve_agent("true", None), repeats=1, seed=0)
    options = RunOptions(output=base / f"out-{kind}", sandbox=SandboxOptions(kind=kind))
    harness = Harness(plan, options)
    trial: Trial = create_trial(base, "plumbline-trial")
    sandbox = harness.sandbox()
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(trial.home)}
    confinement = harness.agent_confinement(
        harness.scope(plan.schedule[0], trial),
        Path(sys.executable),
        [],
        trial.root / "prompt.txt",
        env,
    )
    times = []
    for _ in range(starts):
        began = time.perf_counter()
        result = harness.run_confined(
            sandbox,
            [sys.executable, "-c", "pass"],
            confinement,
            timeout=60,
            stdout=trial.logs / "out",
            stderr=trial.logs / "err",
        )
        times.append(time.perf_counter() - began)
        assert result.exit_code == 0, (trial.logs / "err").read_text()
    return times


def same_python() -> dict[str, str]:
    """This environment with this interpreter first on PATH: `python3` is then the same file in
    and out of the sandbox (not, unconfined, a version manager's shim the sandbox lacks)."""
    path = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    return {**os.environ, "PATH": path}


def run_seconds(kind: str, repeats: int, base: Path, index: int) -> tuple[float, int]:
    """Wall seconds of `agent run` on the example suite, and its number of trials."""
    out = base / f"run-{kind}-{index}"
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(SUITE), "--agent", "true"]
    command += ["-o", str(out), "--repeats", str(repeats), "--sandbox", kind, "--json"]
    command += ["--workdir", str(base)]
    began = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=same_python())
    return time.perf_counter() - began, 4 * repeats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 starts, 1 run per mode")
    arguments = parser.parse_args()
    starts, runs, repeats = (10, 1, 2) if arguments.quick else (40, 3, 5)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="plumbline-bench-sandbox-") as directory:
        base = Path(directory)
        timing: dict[str, list[float]] = {"none": [], "bubblewrap": []}
        for _ in range(2):
            for kind in timing:
                timing[kind] += start_times(kind, starts // 2, base)
        medians = {kind: statistics.median(values) * 1000 for kind, values in timing.items()}
        start_cost = medians["bubblewrap"] - medians["none"]
        print(
            f"start-up of one command: unconfined {medians['none']:.1f} ms, sandboxed "
            f"{medians['bubblewrap']:.1f} ms (median of {starts}): +{start_cost:.1f} ms"
        )
        walls: dict[str, list[float]] = {"none": [], "bubblewrap": []}
        trials = 0
        for index in range(runs):
            for kind in walls:
                seconds, trials = run_seconds(kind, repeats, base, index)
                walls[kind].append(seconds / trials)
        per_trial = {kind: statistics.median(v) * 1000 for kind, v in walls.items()}
        trial_cost = per_trial["bubblewrap"] - per_trial["none"]
        print(
            f"whole trials ({trials} per run, median of {runs}): unconfined "
            f"{per_trial['none']:.0f} ms, sandboxed {per_trial['bubblewrap']:.0f} ms per trial: "
            f"+{trial_cost:.0f} ms (ratio {per_trial['bubblewrap'] / per_trial['none']:.2f})"
        )
    met = trial_cost < TARGET_MS
    print(
        f"target: sandbox overhead per trial < {TARGET_MS:.0f} ms: {trial_cost:.0f} ms "
        f"{'MET' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
