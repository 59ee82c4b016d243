"""Regenerate `src/plumbline/examples/trials.jsonl`, the bundled example trial records.

The records are real: this starts the local OpenAI-compatible test server with three model
profiles (different latency distributions, answer styles and fault rates) and runs the real
`plumbline probe` command against it through Inspect's `openai-api` provider.

    .venv/bin/python scripts/make_example_trials.py [--output PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.openai_server import serve_in_subprocess  # noqa: E402

PROMPTS = {
    "cache": "Explain what a cache is and when to use one.",
    "breaker": "What does a circuit breaker do in a distributed system?",
    "cap": "Summarise the CAP theorem in two sentences.",
}

CAREFUL = {
    "cache": [
        "A cache is a small, fast store that keeps copies of data that is expensive to fetch "
        "or compute. Use one when the same data is read often and can be slightly stale.",
        "A cache keeps copies of expensive-to-fetch data in a small, fast store. It pays off "
        "when the same data is read often and may be slightly stale.",
    ],
    "breaker": [
        "A circuit breaker stops calls to a failing dependency after repeated errors, fails "
        "fast for a cooling-off period, then lets a trial call through to test recovery.",
        "After repeated errors a circuit breaker stops calling the failing dependency, fails "
        "fast for a while, and then lets one trial call through to see if it recovered.",
    ],
    "cap": [
        "The CAP theorem says that during a network partition a distributed system must choose "
        "between consistency and availability. Without a partition it can offer both.",
    ],
}

CREATIVE = {
    "cache": [
        "Think of a cache as a desk drawer: the papers you use most stay within reach.",
        "Caching: remember answers so you never pay twice for the same work.",
        "A cache is memory with an opinion about what you will ask for next.",
        "Use a cache when reads repeat and freshness can wait a moment.",
    ],
    "breaker": [
        "Like the fuse box at home: when a service keeps failing, trip the switch.",
        "It watches errors, and when they pile up it cuts the line so failures stay local.",
        "A circuit breaker lets a sick service rest instead of hammering it with retries.",
    ],
    "cap": [
        "Pick two of consistency, availability and partition tolerance; partitions pick for you.",
        "When the network splits you choose: answer now, or answer correctly.",
        "Bananas are a good source of potassium.",
    ],
}

PROFILES = {
    "steady": {
        "latency": {"kind": "normal", "a": 0.25, "b": 0.03},
        "ttft_fraction": 0.2,
        "responses_by_prompt": CAREFUL,
    },
    "creative": {
        "latency": {"kind": "lognormal", "a": 0.6, "b": 0.35},
        "ttft_fraction": 0.3,
        "responses_by_prompt": CREATIVE,
        "fault_rates": {"429": 0.03},
    },
    "flaky": {
        "latency": {"kind": "uniform", "a": 0.2, "b": 1.6},
        "ttft_fraction": 0.5,
        "responses_by_prompt": CAREFUL,
        "fault_rates": {"429": 0.08, "500": 0.04, "529": 0.03, "timeout": 0.03, "reset": 0.02},
        "hang_seconds": 30,
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--output", type=Path, default=ROOT / "src" / "plumbline" / "examples" / "trials.jsonl"
    )
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    config = {"seed": 3, "models": PROFILES}
    with serve_in_subprocess(config) as base_url, tempfile.TemporaryDirectory() as tmp:
        prompts = Path(tmp) / "prompts.jsonl"
        prompts.write_text(
            "".join(f'{{"id": "{key}", "prompt": "{text}"}}\n' for key, text in PROMPTS.items())
        )
        journal = Path(tmp) / "trials.jsonl"
        command = [sys.executable, "-m", "plumbline", "probe", "--prompts", str(prompts)]
        for name in PROFILES:
            command += ["--model", f"openai-api/example/{name}"]
        command += ["--trials", str(args.trials), "--concurrency", "8", "--timeout", "5"]
        command += ["--stream", "--seed", "42", "-o", str(journal)]
        env = dict(os.environ, EXAMPLE_BASE_URL=base_url, EXAMPLE_API_KEY="example-not-a-key")
        subprocess.run(command, env=env, check=True, cwd=ROOT)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(journal.read_text())
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
