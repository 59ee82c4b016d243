"""Generate `src/plumbline/examples/agent_runs.jsonl`, the bundled A/B example for the demo.

Seeded and deterministic: running it again writes the same file. Two arms of a coding agent
(`with_skelly`, the treatment, and `without_skelly`, the control) on six tasks with six repeats
each, interleaved as a careful harness would run them. The treatment is faster and cheaper in
tokens, with a similar pass rate, like the harness's published snapshot (REFERENCE-NOTES §2).
Realistic blemishes: a few runs whose provider reported no cost, one infrastructure failure
(a workspace setup error, excluded and reported), and one run that hit its time limit (a
failure, not an exclusion).

    python scripts/make_example_agent_runs.py
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from plumbline.records.io import write_atomic
from plumbline.records.run_record import RunRecord

OUTPUT = Path(__file__).resolve().parents[1] / "src/plumbline/examples/agent_runs.jsonl"
SEED = 20260301
REPEATS = 6
TIME_LIMIT_SECONDS = 600.0
# task -> (control pass probability, control median seconds, control median non-cache tokens)
TASKS = {
    "add-retry-to-http-client": (0.85, 58.0, 79_000),
    "fix-flaky-date-parsing": (0.70, 95.0, 120_000),
    "rename-config-option": (0.95, 31.0, 41_000),
    "paginate-list-endpoint": (0.60, 140.0, 160_000),
    "migrate-logging-to-structlog": (0.75, 110.0, 135_000),
    "add-cli-dry-run-flag": (0.90, 45.0, 60_000),
}
# treatment effect: multiplicative on time and tokens, additive on the pass probability
EFFECT = {"with_skelly": (0.45, 0.35, 0.02), "without_skelly": (1.0, 1.0, 0.0)}
USD_PER_INPUT, USD_PER_OUTPUT = 3e-6, 15e-6
USD_PER_CACHE_READ, USD_PER_CACHE_WRITE = 0.3e-6, 3.75e-6


def make_records() -> list[RunRecord]:
    rng = np.random.default_rng(SEED)
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    clock = start
    records: list[RunRecord] = []
    run = 0
    for repeat in range(1, REPEATS + 1):
        for task, (p_pass, seconds, tokens) in TASKS.items():
            # Alternate which arm goes first, so drift and cache warmth do not follow the arm.
            arms = ["with_skelly", "without_skelly"]
            if rng.random() < 0.5:
                arms.reverse()
            for arm in arms:
                time_factor, token_factor, pass_shift = EFFECT[arm]
                run += 1
                duration = float(seconds * time_factor * rng.lognormal(0.0, 0.35))
                non_cache = int(tokens * token_factor * rng.lognormal(0.0, 0.3))
                output_tokens = int(non_cache * rng.uniform(0.08, 0.15))
                input_tokens = non_cache - output_tokens
                cache_read = int(non_cache * rng.uniform(2.0, 4.0))
                cache_write = int(non_cache * rng.uniform(0.2, 0.5))
                success = bool(rng.random() < min(p_pass + pass_shift, 0.99))
                steps = int(max(2, round(duration / 6 * rng.uniform(0.7, 1.3))))
                tools = int(max(1, round(steps * rng.uniform(0.8, 1.6))))
                cost: float | None = round(
                    input_tokens * USD_PER_INPUT
                    + output_tokens * USD_PER_OUTPUT
                    + cache_read * USD_PER_CACHE_READ
                    + cache_write * USD_PER_CACHE_WRITE,
                    6,
                )
                timed_out = infra = False
                reason = None
                agent_exit: int | None = 0
                if run in (9, 40, 57):
                    cost = None  # the provider's usage endpoint returned nothing
                if task == "paginate-list-endpoint" and arm == "without_skelly" and repeat == 4:
                    timed_out, success, duration = True, False, TIME_LIMIT_SECONDS
                    agent_exit = 124
                if task == "fix-flaky-date-parsing" and arm == "with_skelly" and repeat == 3:
                    infra, reason, success = (
                        True,
                        "workspace setup: git clone failed (exit 128)",
                        False,
                    )
                    duration, agent_exit = 2.1, None
                    input_tokens = output_tokens = cache_read = cache_write = 0
                    cost, steps, tools = 0.0, 0, 0
                started = clock
                clock = clock + timedelta(seconds=duration + 5)
                records.append(
                    RunRecord(
                        task_id=task,
                        arm=arm,
                        repeat=repeat,
                        success=success,
                        duration_seconds=round(duration, 3),
                        total_cost_usd=cost,
                        input_tokens=input_tokens,
                        output_tokens=output_tokens,
                        cache_read_tokens=cache_read,
                        cache_write_tokens=cache_write,
                        run_id=f"run-{run:04d}",
                        agent="opencode",
                        model="anthropic/claude-sonnet-4",
                        step_count=steps,
                        tool_call_count=tools,
                        acceptance_cmd_count=int(rng.integers(1, 4)) if not infra else 0,
                        agent_exit_code=agent_exit,
                        acceptance_exit_code=None if infra or timed_out else (0 if success else 1),
                        started_at_utc=started.isoformat().replace("+00:00", "Z"),
                        ended_at_utc=clock.isoformat().replace("+00:00", "Z"),
                        timed_out=timed_out,
                        infra_failure=infra,
                        infra_failure_reason=reason,
                    )
                )
    return records


def main() -> None:
    from plumbline.cli.records import record_line

    lines = [record_line(record) for record in make_records()]
    write_atomic(OUTPUT, "\n".join(lines) + "\n")
    print(f"wrote {len(lines)} run records to {OUTPUT}")


if __name__ == "__main__":
    main()
