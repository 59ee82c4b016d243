"""CDK synthesis: the naive approach against plumbline's warm sandboxed pool, in one run.

Naive (what the reference implementation did): for each app, one after another, the npm
`cdk synth` CLI in a fresh directory (a cold Python + jsii runtime every time), then the
`cfn-lint` CLI. Ours: `CdkSynthesizer` at default settings (bubblewrap sandbox per sample,
warm single-use workers, cfn-lint in process), timed from construction, so the warm-up of
the first workers is included.

Our default skips aws-cdk-lib's built-in CloudFormation validator, whose findings are only
warnings (see `SynthOptions.builtin_validation`); the CLI runs it. So the same work is also
timed: ours with the validator on (`--no-same-work` skips that run).

Apps: the reference solutions of the cdk_synth dataset (tests/cdk/apps/good when there are
none). Needs the project-local CDK CLI: `make cdk-cli`.

    .venv/bin/python benchmarks/bench_cdk.py [--limit N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from plumbline.cdk.cli_synth import CDK_CLI_VERSION, find_cdk_cli, synth_with_cli
from plumbline.cdk.extract import ExtractedApp, extract_from_source
from plumbline.cdk.outcomes import SynthReport
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "src/plumbline/suites/sa_bench/data/cdk_solutions"
FALLBACK = ROOT / "tests/cdk/apps/good"


def load_apps(limit: int | None) -> tuple[list[tuple[str, ExtractedApp]], Path]:
    source = SOLUTIONS if any(SOLUTIONS.glob("*.py")) else FALLBACK
    paths = sorted(source.glob("*.py"))[:limit]
    return [(path.stem, extract_from_source(path.read_text())) for path in paths], source


def run_ours(
    apps: list[tuple[str, ExtractedApp]], *, builtin_validation: bool
) -> tuple[list[SynthReport], float]:
    """Our synthesizer at default settings (or with the built-in validator on), timed."""
    started = time.monotonic()
    options = SynthOptions(expected_samples=len(apps), builtin_validation=builtin_validation)
    with CdkSynthesizer(options) as synthesizer:
        size = synthesizer.options.pool_size or 2
        with ThreadPoolExecutor(max_workers=max(size, 2)) as executor:
            reports = list(executor.map(synthesizer.check_app, [app for _, app in apps]))
    return reports, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N apps")
    parser.add_argument(
        "--no-same-work",
        action="store_true",
        help="skip timing ours with aws-cdk-lib's built-in validator on",
    )
    args = parser.parse_args()
    cdk = find_cdk_cli()
    if cdk is None:
        print(f"the CDK CLI is missing: run `make cdk-cli` (aws-cdk@{CDK_CLI_VERSION})")
        return 2
    apps, source = load_apps(args.limit)
    print(f"{len(apps)} apps from {source.relative_to(ROOT)}; CDK CLI {cdk}")

    started = time.monotonic()
    naive = []
    for index, (name, app) in enumerate(apps, 1):
        naive.append(synth_with_cli(app, cdk))
        print(f"  naive {index}/{len(apps)} {name}: {naive[-1].outcome.value}", flush=True)
    naive_seconds = time.monotonic() - started
    print(f"naive (cdk CLI + cfn-lint CLI, sequential): {naive_seconds:8.1f} s", flush=True)

    ours, ours_seconds = run_ours(apps, builtin_validation=False)
    print(f"plumbline (sandboxed warm pool, defaults):  {ours_seconds:8.1f} s")
    print(f"speed-up: {naive_seconds / ours_seconds:.2f}x (target >= 3x)")
    if not args.no_same_work:
        same, same_seconds = run_ours(apps, builtin_validation=True)
        print(f"plumbline, built-in validator on (same work as the CLI): {same_seconds:8.1f} s")
        print(f"speed-up at the same work: {naive_seconds / same_seconds:.2f}x")
        print(f"same-work outcomes: {dict(Counter(r.outcome.value for r in same))}")

    print(f"naive outcomes:     {dict(Counter(r.outcome.value for r in naive))}")
    print(f"plumbline outcomes: {dict(Counter(r.outcome.value for r in ours))}")
    disagreements = [
        (name, a.outcome.value, b.outcome.value)
        for (name, _), a, b in zip(apps, naive, ours, strict=True)
        if a.outcome != b.outcome
    ]
    for name, a, b in disagreements:
        print(f"  {name}: naive {a}, plumbline {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
