"""Run the demo on this tree and on a git commit, and compare what they write.

    python scripts/demo_compare.py --base 8a577ea [--base-output DIR] [--after-output DIR]

The JSON documents must agree field by field apart from what changes from run to run
(`demo_diff.normalise`: times, ids, paths, measured latencies); the Markdown and CSV files and
the demo's answers must agree line by line once times, paths and ids are masked, except the
lines `--allow PREFIX` names (the answers this change rewrites on purpose). A `--base-output`
or `--after-output` that holds a finished demo is reused instead of running it again. Exits 1
and prints each difference when they disagree.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_diff import VOLATILE_TEXT, differences, documents, normalise

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = (".md", ".csv")


def run_demo(source: Path, output: Path) -> Path:
    """Run `plumbline demo -o OUTPUT` with the package at `source/src` first on the path (niced);
    its stdout is kept in OUTPUT.stdout."""
    stdout = output.with_suffix(".stdout")
    if (output / "regression.json").is_file() and stdout.is_file():
        return stdout
    env = {**os.environ, "PYTHONPATH": f"{source / 'src'}{os.pathsep}{source}"}
    command = ["nice", "-n", "10", sys.executable, "-m", "plumbline", "demo", "-o", str(output)]
    with stdout.open("w", encoding="utf-8") as handle:
        subprocess.run(command, env=env, stdout=handle, check=True, cwd=source)
    return stdout


def export(commit: str, into: Path) -> Path:
    """The tree of `commit` (its src/) exported under `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def masked(text: str) -> list[str]:
    """The lines of `text` with times, paths and ids masked."""
    for pattern, placeholder in VOLATILE_TEXT:
        text = pattern.sub(placeholder, text)
    return text.splitlines()


def text_differences(name: str, before: str, after: str, allowed: tuple[str, ...]) -> list[str]:
    """`name: before != after` per differing line, lines starting with an allowed prefix
    passed over."""
    old, new = masked(before), masked(after)
    if len(old) != len(new):
        return [f"{name}: {len(old)} lines != {len(new)} lines"]
    return [
        f"{name}:{number}: {a!r:.160} != {b!r:.160}"
        for number, (a, b) in enumerate(zip(old, new, strict=True), start=1)
        if a != b and not (a.startswith(allowed) and b.startswith(allowed))
    ]


def text_files(root: Path) -> dict[str, Path]:
    return {
        str(path.relative_to(root)): path
        for path in root.rglob("*")
        if path.suffix in TEXT_SUFFIXES
        and not {"logs", "logs-smollm2", "site"} & set(path.relative_to(root).parts[:1])
    }


def compare(before: Path, after: Path, allowed: tuple[str, ...]) -> list[str]:
    """Every difference between two demo outputs (see the module)."""
    problems: list[str] = []
    for pick, read in ((documents, "json"), (text_files, "text")):
        old, new = pick(before), pick(after)
        problems += [f"{name}: only in one output" for name in sorted(set(old) ^ set(new))]
        for name in sorted(set(old) & set(new)):
            a, b = old[name].read_text(encoding="utf-8"), new[name].read_text(encoding="utf-8")
            if read == "json":
                import json

                found = differences(normalise(json.loads(a)), normalise(json.loads(b)))
                problems += [f"{name}: {difference}" for difference in found]
            else:
                problems += text_differences(name, a, b, allowed)
    return problems


def answers(stdout: Path) -> str:
    """The demo's answers: its stdout from the first answer line, the timing line left out."""
    lines = stdout.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Best model")), len(lines))
    return "\n".join(line for line in lines[start:] if not line.startswith("Demo finished"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="8a577ea", help="the commit to compare with")
    parser.add_argument("--base-output", type=Path, help="the base's demo output (reused)")
    parser.add_argument("--after-output", type=Path, help="this tree's demo output (reused)")
    parser.add_argument(
        "--allow",
        action="append",
        default=["Best model: ", "Reliability of "],
        help="a prefix of answer lines that may differ on purpose (repeatable)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="demo-compare-") as scratch:
        work = Path(scratch)
        base_output = args.base_output or work / "before"
        after_output = args.after_output or work / "after"
        base_stdout = run_demo(export(args.base, work / "base"), base_output)
        after_stdout = run_demo(ROOT, after_output)
        allowed = tuple(args.allow)
        problems = compare(base_output, after_output, allowed)
        problems += text_differences(
            "answers", answers(base_stdout), answers(after_stdout), allowed
        )
    print("\n".join(problems) if problems else "the demo's outputs agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
