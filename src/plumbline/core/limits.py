"""Upper bounds on the options that multiply work, in one place.

Every bound is far above what a sound analysis needs, and low enough that a typo (an extra
zero, a pasted id) ends in a usage error naming the bound instead of a run that takes the
machine's memory or an afternoon. The README's "Limits and figures" lists them.
"""

from __future__ import annotations

#: Bootstrap resamples (compare, reliability). At 10,000 the Monte Carlo error of a 95% bound
#: is already about 1% of the interval's width; 100,000 leaves room for BCa and for papers.
MAX_RESAMPLES = 100_000

#: Repeats per task and arm of an agent suite (`--repeats`, the suite's `repeats`).
MAX_REPEATS = 1_000

#: Runs in one agent plan: tasks × arms × repeats. Each run is an agent session of minutes; at
#: 100,000 runs the schedule alone is tens of megabytes of JSON.
MAX_AGENT_RUNS = 100_000

#: Trials per model and prompt (`probe --trials`).
MAX_TRIALS = 10_000

#: Calls in flight at once (`--concurrency` of `probe`, `agent run`, `run` and
#: `judge calibrate`).
MAX_CONCURRENCY = 256

#: Epochs of a leaderboard run (`run --epochs`) and grading runs per judge (`judge --runs`).
MAX_EPOCHS = 1_000

#: Bytes in one line of any input file (records, prompts, documents, suites), its newline not
#: counted: 128 MiB. A longer line (a file that is one endless line, `/dev/zero`) is a
#: `file:line` error after reading at most this much of it; `plumbline --max-line-bytes N` or
#: `PLUMBLINE_MAX_LINE_BYTES=N` raises it.
MAX_LINE_BYTES = 128 * 1024 * 1024

#: Pairs of the fixed design a sequential plan is made for (`compare --sequential`, `power
#: --sequential`): planning searches the cap by exact computation over every look, so its cost
#: grows faster than the pairs (about 3 s at 800 pairs on one core). 1,500 pairs is a 5-point
#: pass-rate difference from a 50% baseline at alpha 0.005; an A/B of agents rarely runs more.
MAX_SEQUENTIAL_PAIRS = 1_500

#: The smallest planned pass-rate difference of `compare --sequential --effect` (shown in its
#: `--help`): at 0.05 from the worst baseline (0.5) the fixed design needs 787 pairs.
MIN_SEQUENTIAL_EFFECT = 0.05

__all__ = [
    "MAX_AGENT_RUNS",
    "MAX_CONCURRENCY",
    "MAX_EPOCHS",
    "MAX_LINE_BYTES",
    "MAX_REPEATS",
    "MAX_RESAMPLES",
    "MAX_SEQUENTIAL_PAIRS",
    "MAX_TRIALS",
    "MIN_SEQUENTIAL_EFFECT",
]
