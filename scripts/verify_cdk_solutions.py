"""Prove that every cdk_synth reference solution synthesizes and its templates pass cfn-lint.

Each solution (the `solution` source of a cdk_synth.jsonl record) runs as its own process in a
fresh temporary directory, exactly as a user runs a CDK app (`python app.py` with CDK_OUTDIR
set), with dummy CDK_DEFAULT_ACCOUNT/REGION so nothing
reaches AWS. Every template written to the cloud assembly is then linted with cfn-lint; only
cfn-lint *errors* fail a solution (warnings and informational findings are counted and shown,
because cfn-lint exits non-zero for those too and they say nothing about synthesizability).

    .venv/bin/python scripts/verify_cdk_solutions.py            # all 40, two at a time
    .venv/bin/python scripts/verify_cdk_solutions.py cdk-07 cdk-31 --jobs 1

Exit status 0 when every selected solution passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[1] / "src/plumbline/suites/sa_bench/data"
DATASET = DATA_DIR / "cdk_synth.jsonl"
SYNTH_TIMEOUT_S = 180


@dataclass
class Outcome:
    id: str
    synth_ok: bool = False
    seconds: float = 0.0
    templates: int = 0
    lint_errors: list[str] = field(default_factory=list)
    lint_warnings: int = 0
    problem: str = ""

    @property
    def passed(self) -> bool:
        return self.synth_ok and self.templates > 0 and not self.lint_errors and not self.problem


def load_entries() -> list[tuple[str, str]]:
    entries = []
    for number, line in enumerate(DATASET.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record, dict) or "id" not in record or "solution" not in record:
            raise SystemExit(f"{DATASET}:{number}: record: needs 'id' and 'solution'")
        entries.append((str(record["id"]), str(record["solution"])))
    return entries


def cfn_lint(templates: list[Path]) -> tuple[list[str], int]:
    """Lint templates; return (error lines, number of warnings and informational findings)."""
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("cfn-lint")), "--format", "json", *map(str, templates)],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        matches = json.loads(completed.stdout or "[]")
    except json.JSONDecodeError:
        return [
            f"cfn-lint produced no JSON (exit {completed.returncode}): {completed.stderr[-300:]}"
        ], 0
    errors = [
        f"{m['Rule']['Id']} {Path(m['Filename']).name}: {m['Message']}"
        for m in matches
        if m.get("Level") == "Error"
    ]
    return errors, len(matches) - len(errors)


def verify(entry_id: str, solution: str) -> Outcome:
    outcome = Outcome(entry_id)
    with tempfile.TemporaryDirectory(prefix=f"{entry_id}-") as workdir:
        outdir = Path(workdir) / "cdk.out"
        env = {
            **os.environ,
            "CDK_DEFAULT_ACCOUNT": "123456789012",
            "CDK_DEFAULT_REGION": "us-east-1",
            "CDK_OUTDIR": str(outdir),
            "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1",
            "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "1",
        }
        app = Path(workdir) / "app.py"
        app.write_text(solution, encoding="utf-8")
        started = time.perf_counter()
        try:
            completed = subprocess.run(
                [sys.executable, str(app)],
                cwd=workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=SYNTH_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            outcome.problem = f"synth timed out after {SYNTH_TIMEOUT_S} s"
            return outcome
        finally:
            outcome.seconds = time.perf_counter() - started
        if completed.returncode != 0:
            tail = completed.stderr.strip().splitlines()[-3:]
            outcome.problem = f"synth exited {completed.returncode}: {' | '.join(tail)}"
            return outcome
        outcome.synth_ok = True
        templates = sorted(outdir.glob("*.template.json"))
        outcome.templates = len(templates)
        if not templates:
            outcome.problem = "synth wrote no template"
            return outcome
        outcome.lint_errors, outcome.lint_warnings = cfn_lint(templates)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="only these ids (default: every entry)")
    parser.add_argument("--jobs", type=int, default=2, help="solutions verified at once")
    args = parser.parse_args(argv)
    entries = load_entries()
    if args.ids:
        known = {entry_id for entry_id, _ in entries}
        unknown = sorted(set(args.ids) - known)
        if unknown:
            parser.error(f"unknown ids: {', '.join(unknown)}")
        entries = [entry for entry in entries if entry[0] in set(args.ids)]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda entry: verify(*entry), entries))

    print(f"{'id':<8} {'synth':<6} {'seconds':>7} {'templates':>9} {'lint E':>6} {'lint W/I':>8}")
    for o in outcomes:
        synth = "ok" if o.synth_ok else "FAIL"
        print(
            f"{o.id:<8} {synth:<6} {o.seconds:>7.1f} {o.templates:>9} "
            f"{len(o.lint_errors):>6} {o.lint_warnings:>8}"
        )
        for line in [o.problem, *o.lint_errors]:
            if line:
                print(f"         {line}")
    failed = [o.id for o in outcomes if not o.passed]
    print(f"\n{len(outcomes) - len(failed)}/{len(outcomes)} solutions synthesize and lint clean")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
