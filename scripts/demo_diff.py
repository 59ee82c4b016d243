"""Diff two demo output directories: their JSON documents must agree apart from what changes
from run to run (timestamps, run ids, paths, measured times and the embedded model's timings).

    python scripts/demo_diff.py demo-before/ demo-after/

Exits 1 and prints each differing field (file: path: before != after) when they disagree. A
restructuring that is behaviour-neutral leaves nothing to print.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

#: Keys whose values differ between two runs of the same demo.
VOLATILE_KEY = re.compile(
    r"(^|_)(generated_at|started_at|ended_at|created|completed_at|run_id|eval_id|task_id_hash"
    r"|timestamp|time|times|seconds|latency|latencies|ttft|duration|durations|elapsed"
    r"|working_time|total_time|path|file|files|log|logs|location|locations|sources|output)(_|$)"
    r"|_utc$|_ms$|_s$"
)
#: The fields that name what a comparison of measured times compares.
IDENTITY = frozenset({"model_a", "model_b", "metric", "label", "note"})
#: Text that embeds a path, a date or a random id.
VOLATILE_TEXT = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(\.\d+)?(Z|[+-]\d\d[:-]?\d\d)?"), "<time>"),
    (re.compile(r"(/[\w.+-]+)+/?"), "<path>"),
    (re.compile(r"\b[A-Za-z0-9]{22}\b"), "<id>"),
]


def normalise(value: Any, key: str = "") -> Any:
    """The value with every run-to-run difference replaced by a placeholder."""
    if key and VOLATILE_KEY.search(key):
        return "<volatile>"
    if isinstance(value, dict):
        if VOLATILE_KEY.search(str(value.get("metric", ""))):
            # a comparison of measured times (the embedded model's latencies): only its names
            return {k: v if k in IDENTITY else "<volatile>" for k, v in value.items()}
        return {k: normalise(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(item) for item in value]
    if isinstance(value, str):
        for pattern, placeholder in VOLATILE_TEXT:
            value = pattern.sub(placeholder, value)
    return value


def differences(before: Any, after: Any, where: str = "") -> list[str]:
    """Every `where: before != after` between two normalised documents."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            if key not in before or key not in after:
                found.append(f"{where}.{key}: only in {'after' if key in after else 'before'}")
            else:
                found += differences(before[key], after[key], f"{where}.{key}")
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            d
            for i, pair in enumerate(zip(before, after, strict=True))
            for d in differences(*pair, f"{where}[{i}]")
        ]
    return [] if before == after else [f"{where or '.'}: {before!r:.120} != {after!r:.120}"]


def documents(root: Path) -> dict[str, Path]:
    """The demo's JSON documents by path under `root` (Inspect logs and site pages left out)."""
    return {
        str(path.relative_to(root)): path
        for path in root.rglob("*.json")
        if not {"logs", "logs-smollm2"} & set(path.relative_to(root).parts[:1])
        and "site" not in path.relative_to(root).parts[:1]
    }


def main(argv: list[str]) -> int:
    before_root, after_root = (Path(arg) for arg in argv)
    before, after = documents(before_root), documents(after_root)
    problems = [f"{name}: only in {before_root}" for name in sorted(set(before) - set(after))]
    problems += [f"{name}: only in {after_root}" for name in sorted(set(after) - set(before))]
    for name in sorted(set(before) & set(after)):
        old = normalise(json.loads(before[name].read_text(encoding="utf-8")))
        new = normalise(json.loads(after[name].read_text(encoding="utf-8")))
        problems += [f"{name}: {difference}" for difference in differences(old, new)]
    print("\n".join(problems) if problems else f"{len(before)} documents agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
