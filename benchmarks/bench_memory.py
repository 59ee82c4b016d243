"""Peak memory of reading a trials journal with huge responses: ours against the whole-file
reader it replaced, in one run (issue 27: "100 MB responses peak at about 6.5 GB").

The journal: `--file-mb` MB of JSONL trial records whose responses are `--response-mb` MB each
(default 200 MB of 100 MB responses: two records). Then `plumbline reliability` on it, the
command that read, embedded and scored such responses (the 6.5 GB of the issue: tokenizing a
whole response to embed its first 256 tokens). Each reader runs in a fresh child process
(`read_trial_records`, ours: records read as a stream, a record at a time, every line
bounded; the baseline: the reader of commit e8186bc, which read the whole file, decoded it
whole and parsed records out of one string) and reports its peak resident memory (ru_maxrss).
The target: ours under 1.5 GB at the default size.

    .venv/bin/python benchmarks/bench_memory.py [--file-mb 200] [--response-mb 100]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_BYTES = 1.5 * 1024**3

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
path = Path(sys.argv[2])
started = time.perf_counter()
if sys.argv[1] == "ours":
    from plumbline.records.trial_record import read_trial_records
    result = read_trial_records([path])
    count, errors = len(result.records), len(result.errors)
else:  # the whole-file reader of commit e8186bc (records/io.py), reduced to its memory path
    from plumbline.records.io import _DECODER, _skip_whitespace, decode_utf8
    from plumbline.records.trial_record import TrialRecord
    text, _bad = decode_utf8(path.read_bytes())
    records, pos = [], _skip_whitespace(text, 0)
    while pos < len(text):
        value, end = _DECODER.raw_decode(text, pos)
        records.append(TrialRecord.model_validate(value))
        pos = _skip_whitespace(text, end)
    count, errors = len(records), 0
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"records": count, "errors": errors, "peak": peak, "seconds": seconds}))
"""


def write_journal(path: Path, file_mb: int, response_mb: int) -> int:
    """Trial records with responses of `response_mb` MB until the file holds `file_mb` MB."""
    response = ("All work and no play makes a long answer. " * 1)[:40]
    body = (response * (response_mb * 1024 * 1024 // len(response) + 1))[: response_mb * 1024**2]
    count = max(1, file_mb // max(1, response_mb))
    with path.open("w", encoding="utf-8") as out:
        for trial in range(count):
            record = {
                "model": "local/big",
                "provider": "local",
                "prompt_id": "p-big",
                "prompt": "Write at length.",
                "trial": trial,
                "response": body,
                "latency_seconds": 1.0,
                "timestamp": "2026-01-01T00:00:00Z",
                "attempts": 1,
                "config": {"temperature": 0.7, "seed": 42 + trial},
            }
            out.write(json.dumps(record) + "\n")
    return count


def measure(reader: str, path: Path) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, reader, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"{reader} failed:\n{completed.stderr[-3000:]}")
    result: dict[str, float] = json.loads(completed.stdout)
    return result


def measure_command(arguments: list[str]) -> tuple[float, float]:
    """Peak resident bytes and wall seconds of `python -m plumbline ARGUMENTS` (its own rusage,
    from wait4)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "plumbline", *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise SystemExit(f"plumbline {' '.join(arguments)} failed:\n{error[-3000:]}")
    return usage.ru_maxrss * 1024.0, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--file-mb", type=int, default=200)
    parser.add_argument("--response-mb", type=int, default=100)
    parser.add_argument("--no-baseline", action="store_true", help="measure ours only")
    parser.add_argument(
        "--no-reliability", action="store_true", help="skip `plumbline reliability` on the file"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "trials.jsonl"
        started = time.perf_counter()
        count = write_journal(path, args.file_mb, args.response_mb)
        size = path.stat().st_size
        print(
            f"journal: {count} trial records, {size / 1024**2:.0f} MB, responses of "
            f"{args.response_mb} MB (written in {time.perf_counter() - started:.1f} s)"
        )
        ours = measure("ours", path)
        print(
            f"ours (streaming, bounded lines): peak {ours['peak'] / 1024**3:.2f} GB, "
            f"{ours['seconds']:.1f} s, {ours['records']:.0f} records, {ours['errors']:.0f} errors"
        )
        if not args.no_baseline:
            whole = measure("whole-file", path)
            print(
                f"baseline (whole-file reader of e8186bc): peak {whole['peak'] / 1024**3:.2f} "
                f"GB, {whole['seconds']:.1f} s; ratio baseline/ours: "
                f"{whole['peak'] / ours['peak']:.2f}"
            )
        peaks = {"reader": ours["peak"]}
        if not args.no_reliability:
            report = Path(directory) / "reliability.json"
            peak, seconds = measure_command(["reliability", str(path), "--json", str(report)])
            peaks["plumbline reliability"] = peak
            print(
                f"plumbline reliability (reads, embeds, scores every trial): peak "
                f"{peak / 1024**3:.2f} GB, {seconds:.1f} s"
            )
        print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        over = [name for name, peak in peaks.items() if peak >= TARGET_BYTES]
        verdict = f"OVER: {', '.join(over)}" if over else "every peak under"
        print(f"target {TARGET_BYTES / 1024**3:.1f} GB: {verdict}")
        if over:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
