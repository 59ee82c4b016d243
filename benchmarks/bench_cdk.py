"""CDK synthesis: the npm `cdk synth` CLI + cfn-lint CLI against plumbline's sandboxed pool.

Baseline (what the reference implementation did, what a user would run): for each app, one
after another, the npm `cdk synth` CLI in a fresh directory (a cold Python + jsii runtime
every time, aws-cdk-lib's built-in validator on), then the `cfn-lint` CLI. Ours, at the same
work: `CdkSynthesizer` with the built-in validator on (bubblewrap sandbox per sample, warm
single-use workers, the validator's engine restored from its snapshot, cfn-lint in process),
timed from construction, so the warm-up of the first workers is included. Target: >= 3x.

Then the two must agree app by app (outcome, templates, resource count); any disagreement
exits 1, as does a missed target. `--defaults` also times ours at default settings (the
validator off), for information.

Apps: the reference solutions of the cdk_synth dataset (tests/cdk/apps/good when there are
none). Needs the project-local CDK CLI: `make cdk-cli`.

    .venv/bin/python benchmarks/bench_cdk.py [--quick | --limit N] [--defaults]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from plumbline.cdk.cli_synth import CDK_CLI_VERSION, find_cdk_cli, synth_with_cli
from plumbline.cdk.extract import ExtractedApp, extract_from_source
from plumbline.cdk.outcomes import SynthReport
from plumbline.cdk.runtime import ensure_jsii_cache, ensure_validator_snapshot
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


TARGET = 3.0


def disagreements(
    apps: list[tuple[str, ExtractedApp]], naive: list[SynthReport], ours: list[SynthReport]
) -> list[str]:
    """Apps whose outcome, templates or resource count differ between the CLI and ours."""
    found = []
    for (name, _), a, b in zip(apps, naive, ours, strict=True):
        left = (a.outcome.value, sorted(a.templates), a.resource_count)
        right = (b.outcome.value, sorted(b.templates), b.resource_count)
        if left != right:
            found.append(f"{name}: CLI {left}, plumbline {right}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N apps")
    parser.add_argument("--quick", action="store_true", help="only the first 8 apps")
    parser.add_argument(
        "--defaults", action="store_true", help="also time ours at default settings"
    )
    args = parser.parse_args()
    cdk = find_cdk_cli()
    if cdk is None:
        print(f"the CDK CLI is missing: run `make cdk-cli` (aws-cdk@{CDK_CLI_VERSION})")
        return 2
    apps, source = load_apps(8 if args.quick and args.limit is None else args.limit)
    print(f"{len(apps)} apps from {source.relative_to(ROOT)}; CDK CLI {cdk}")

    started = time.monotonic()
    naive = []
    for index, (name, app) in enumerate(apps, 1):
        naive.append(synth_with_cli(app, cdk))
        print(f"  CLI {index}/{len(apps)} {name}: {naive[-1].outcome.value}", flush=True)
    naive_seconds = time.monotonic() - started
    load_naive = os.getloadavg()[0]
    print(f"CLI (cdk synth + cfn-lint, sequential): {naive_seconds:8.1f} s", flush=True)

    # One-time preparation per machine and library version, like the jsii package cache
    # (and the CLI's npm install): not part of the per-app work.
    prepared = time.monotonic()
    snapshot = ensure_validator_snapshot(ensure_jsii_cache())
    print(f"validator snapshot: {snapshot} ({time.monotonic() - prepared:.1f} s)", flush=True)
    same, same_seconds = run_ours(apps, builtin_validation=True)
    load_ours = os.getloadavg()[0]
    print(f"plumbline, built-in validator on (same work): {same_seconds:8.1f} s")
    if args.defaults:
        _, ours_seconds = run_ours(apps, builtin_validation=False)
        print(
            f"plumbline at defaults (validator off): {ours_seconds:8.1f} s, "
            f"{naive_seconds / ours_seconds:.2f}x the CLI (no target)"
        )
    ratio = naive_seconds / same_seconds
    verdict = "ok" if ratio >= TARGET else "MISSED"
    print(
        f"cdk synth + cfn-lint, same work: {ratio:.2f}x (target >= {TARGET:g}x) {verdict}"
        f"  [load average {load_naive:.1f} / {load_ours:.1f} on {os.cpu_count()} CPUs]"
    )
    print(f"outcomes: {dict(Counter(r.outcome.value for r in same))}")
    differing = disagreements(apps, naive, same)
    for line in differing:
        print(f"  disagreement: {line}")
    print(f"app-by-app agreement with the CLI: {len(apps) - len(differing)}/{len(apps)}")
    return 0 if ratio >= TARGET and not differing else 1


if __name__ == "__main__":
    sys.exit(main())
