"""What a trial's own network namespace and kernel-enforced limits cost, against today's trial
(bubblewrap with the host's network and no limits), in the same run.

A trial starts two sandboxes: the agent's and the acceptance check's. Both are started here
through the harness's own launcher (`Harness.run_confined`) with a trial's real confinement,
running the same short command (this interpreter's `-c pass`, as an agent's first process
would be), alternating the configurations so machine load hits them alike:

- today: `--network host`, no limits (no cgroup, no prlimit, no entry script);
- isolated: the agent in its own network namespace with one proxy port bridged in (socat
  listening before the agent starts) and the default limits (a cgroup, `prlimit`, private
  `/dev/shm`); the acceptance check with the limits, without the bridge.

The extra cost per trial is the agent's difference plus the acceptance check's.
Target: under 150 ms per trial on 2 cores.

    .venv/bin/python benchmarks/bench_trial_isolation.py            # 40 starts per setup
    .venv/bin/python benchmarks/bench_trial_isolation.py --starts 10
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import socketserver
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from plumbline.agent.harness import Harness, RunOptions
from plumbline.agent.limits import TrialLimits
from plumbline.agent.limits_kernel import mechanism
from plumbline.agent.plan import make_plan
from plumbline.agent.profiles import resolve_agent
from plumbline.agent.sandbox import Confinement, SandboxOptions
from plumbline.agent.suite import load_suite
from plumbline.agent.workspace import create_trial

SUITE = Path(__file__).resolve().parents[1] / "src/plumbline/examples/agent_suite/suite.toml"
TARGET_MS = 150.0
BRIDGE_PORT = 18080


class _Quiet(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.recv(1)


def setups(base: Path, socket_path: Path) -> tuple[Harness, dict[str, Confinement]]:
    """The harness and the four confinements: agent and acceptance, today's and isolated."""
    plan = make_plan(load_suite(SUITE), resolve_agent("true", None), repeats=1, seed=0)
    options = RunOptions(output=base / "out", sandbox=SandboxOptions())
    harness = Harness(plan, options)
    trial = create_trial(base, "plumbline-trial")
    scope = harness.scope(plan.schedule[0], trial)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(trial.home)}
    prompt = trial.root / "prompt.txt"
    prompt.write_text("p")
    agent = harness.agent_confinement(scope, Path(sys.executable), [], prompt, env)
    acceptance = harness._acceptance_confinement(scope)
    limits = TrialLimits()
    bridges = ((BRIDGE_PORT, socket_path),)
    today = {"network": True, "bridges": (), "limits": None}
    return harness, {
        "agent today": dataclasses.replace(agent, **today),
        "agent isolated": dataclasses.replace(agent, network=False, bridges=bridges, limits=limits),
        "acceptance today": dataclasses.replace(acceptance, **today),
        "acceptance isolated": dataclasses.replace(acceptance, network=False, limits=limits),
    }


def start_times(harness: Harness, confinement: Confinement, starts: int, logs: Path) -> list[float]:
    """Seconds to run `python -c pass` through the harness's launcher, `starts` times."""
    sandbox = harness.sandbox()
    times = []
    for _ in range(starts):
        began = time.perf_counter()
        result = harness.run_confined(
            sandbox,
            [sys.executable, "-c", "pass"],
            confinement,
            timeout=60,
            stdout=logs / "out",
            stderr=logs / "err",
        )
        times.append(time.perf_counter() - began)
        assert result.exit_code == 0 and result.start_error is None, (logs / "err").read_text()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=40, help="starts per setup (default 40)")
    arguments = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; limits: {mechanism()}")
    with tempfile.TemporaryDirectory(prefix="pl-bench-iso-", dir="/tmp") as directory:
        base = Path(directory)
        socket_path = base / "proxy.sock"
        server = socketserver.ThreadingUnixStreamServer(str(socket_path), _Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        harness, confinements = setups(base, socket_path)
        logs = base / "logs"
        logs.mkdir()
        timing: dict[str, list[float]] = {name: [] for name in confinements}
        for _ in range(2):
            for name, confinement in confinements.items():
                timing[name] += start_times(harness, confinement, arguments.starts // 2, logs)
        server.shutdown()
    medians = {name: statistics.median(values) * 1000 for name, values in timing.items()}
    for name, value in medians.items():
        print(f"{name:20s} {value:7.1f} ms (median of {len(timing[name])})")
    today = medians["agent today"] + medians["acceptance today"]
    isolated = medians["agent isolated"] + medians["acceptance isolated"]
    extra = isolated - today
    print(
        f"per trial (agent + acceptance): today {today:.1f} ms, isolated {isolated:.1f} ms: "
        f"+{extra:.1f} ms (ratio {isolated / today:.2f})"
    )
    met = extra < TARGET_MS
    print(
        f"target: isolation and limits add < {TARGET_MS:.0f} ms per trial: {extra:.1f} ms "
        f"{'MET' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
