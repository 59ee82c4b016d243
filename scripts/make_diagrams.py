#!/usr/bin/env python3
"""Render the SA Bench architecture diagrams: every Graphviz source to a PNG beside it.

The sources (`*.dot`) in src/plumbline/suites/sa_bench/data/diagrams/ are the truth; the PNGs
are generated from them with Graphviz's `dot` and committed, so running the suite never needs
Graphviz. Run this after editing a source:

    python scripts/make_diagrams.py            # render every source whose PNG is missing or stale
    python scripts/make_diagrams.py --all      # re-render every source
    python scripts/make_diagrams.py --check    # exit 1 if a PNG is missing or too large

Needs Graphviz (`apt-get install graphviz`). PNGs are kept under MAX_BYTES so the dataset stays
small and the images stay cheap to send to a model.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

DIAGRAM_DIR = (
    Path(__file__).resolve().parents[1] / "src" / "plumbline" / "suites" / "sa_bench" / "data"
) / "diagrams"
MAX_BYTES = 150_000
DPI = 96


def render(source: Path, dot: str) -> Path:
    """Render one source to `<stem>.png`, written via a temporary file and renamed."""
    target = source.with_suffix(".png")
    temporary = target.with_name(f".{target.name}.tmp")
    subprocess.run(
        [dot, "-Tpng", f"-Gdpi={DPI}", "-o", str(temporary), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    temporary.replace(target)
    return target


def problems(source: Path, *, stale: bool = True) -> list[str]:
    """What is wrong with a source's PNG. Staleness is judged by modification time, which a
    fresh clone does not preserve, so `--check` leaves it out."""
    target = source.with_suffix(".png")
    if not target.is_file():
        return [f"{target}: missing (render it from {source.name})"]
    found = []
    if stale and target.stat().st_mtime < source.stat().st_mtime:
        found.append(f"{target}: older than {source.name}; re-render it")
    if target.stat().st_size > MAX_BYTES:
        found.append(f"{target}: {target.stat().st_size} bytes, over the {MAX_BYTES} limit")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="re-render every source")
    parser.add_argument("--check", action="store_true", help="only report problems")
    parser.add_argument("--dir", type=Path, default=DIAGRAM_DIR, help="diagram directory")
    args = parser.parse_args(argv)
    sources = sorted(args.dir.glob("*.dot"))
    if not sources:
        print(f"no *.dot sources in {args.dir}", file=sys.stderr)
        return 1
    if args.check:
        found = [problem for source in sources for problem in problems(source, stale=False)]
        for problem in found:
            print(problem, file=sys.stderr)
        print(f"{len(sources)} diagrams checked, {len(found)} problem(s)")
        return 1 if found else 0
    dot = shutil.which("dot")
    if dot is None:
        print("Graphviz `dot` not found: install it (apt-get install graphviz)", file=sys.stderr)
        return 1
    rendered = 0
    for source in sources:
        target = source.with_suffix(".png")
        if args.all or problems(source):
            try:
                render(source, dot)
            except subprocess.CalledProcessError as error:
                print(f"{source}: dot failed: {error.stderr.strip()}", file=sys.stderr)
                return 1
            rendered += 1
            size = target.stat().st_size
            print(f"{target.name}: {size} bytes")
            if size > MAX_BYTES:
                print(f"{target}: over the {MAX_BYTES}-byte limit; simplify it", file=sys.stderr)
                return 1
    print(f"{rendered} of {len(sources)} diagrams rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
