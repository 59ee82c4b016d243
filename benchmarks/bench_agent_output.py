"""The harness's memory against an agent that floods its standard output.

`plumbline agent run` of a one-task, two-arm suite (one repeat: two trials), in a process of
its own that reports its peak resident memory (`ru_maxrss` of the harness process alone, not
of the agents or git), twice in the same run: a baseline whose agent prints nothing, and one
whose agent prints `--bytes` of `0\\n` lines (the worst case for a parser that keeps every
JSON value; `yes 0 | head -c BYTES`). Both use the Claude Code profile, so the output is
parsed. Output goes through pipes into capped logs (`plumbline.agent.capture`) and the
profile reads it object by object (`plumbline.agent.profiles.json_objects`).

Target: 1 GiB of agent output raises the harness's peak memory by less than 64 MiB.

    .venv/bin/python benchmarks/bench_agent_output.py                    # 1 GiB per trial
    .venv/bin/python benchmarks/bench_agent_output.py --bytes 268435456  # 256 MiB
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MIB = 64.0
GIB = 1024**3

#: Runs `agent run` in this process and prints its own peak resident memory (KiB) last.
HARNESS = """
import resource, sys
from plumbline.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print("peak-rss-kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def write_suite(root: Path) -> Path:
    """A one-task, two-arm suite whose acceptance always passes."""
    source = root / "source"
    source.mkdir()
    (source / "README.md").write_text("nothing to do\n")
    suite = {
        "name": "flood",
        "arms": [{"name": "a"}, {"name": "b"}],
        "tasks": [
            {"id": "flood", "prompt": "print", "source": {"dir": "source"}, "acceptance": "true"}
        ],
        "repeats": 1,
    }
    path = root / "suite.json"
    path.write_text(json.dumps(suite))
    return path


def peak_mib(root: Path, suite: Path, size: int, sandbox: str) -> tuple[float, float]:
    """The harness's peak resident memory (MiB) and wall time (s) with agents printing
    `size` bytes."""
    agent = root / f"agent-{size}.sh"
    agent.write_text(f"#!/bin/sh\nyes 0 | head -c {size}\n")
    agent.chmod(0o755)
    output = root / f"results-{size}"
    workdir = root / f"trials-{size}"
    workdir.mkdir()
    command = ["-q", "agent", "run", str(suite), "--agent", str(agent), "--profile", "claude-code"]
    command += ["-o", str(output), "--workdir", str(workdir), "--sandbox", sandbox]
    began = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", HARNESS, *command], capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - began
    lines = [line for line in completed.stderr.splitlines() if line.startswith("peak-rss-kib")]
    if completed.returncode != 0 or not lines:
        raise SystemExit(f"agent run failed ({completed.returncode}):\n{completed.stderr}")
    records = [json.loads(line) for line in (output / "records.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(not r["infra_failure"] for r in records), records
    return int(lines[-1].split()[1]) / 1024, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=GIB, help="agent output per trial")
    parser.add_argument("--sandbox", default="none", help="--sandbox of agent run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-agent-output.") as name:
        root = Path(name)
        suite = write_suite(root)
        baseline, baseline_s = peak_mib(root, suite, 0, args.sandbox)
        flooded, flooded_s = peak_mib(root, suite, args.bytes, args.sandbox)
    rise = flooded - baseline
    print(
        f"agent output per trial: {args.bytes / 2**20:.0f} MiB (2 trials, --sandbox {args.sandbox})"
    )
    print(f"harness peak RSS, baseline (no output): {baseline:.1f} MiB ({baseline_s:.1f} s)")
    print(f"harness peak RSS, flooded:              {flooded:.1f} MiB ({flooded_s:.1f} s)")
    print(f"rise: {rise:+.1f} MiB (ratio {flooded / baseline:.3f}); target < {TARGET_MIB:.0f} MiB")
    print("PASS" if rise < TARGET_MIB else "FAIL")


if __name__ == "__main__":
    main()
