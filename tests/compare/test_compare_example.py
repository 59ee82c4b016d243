"""The bundled example is what its seeded script writes, and is as realistic as promised."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from plumbline.cli.records import record_line

ROOT = Path(__file__).parents[2]


def test_example_is_reproduced_by_its_script(example_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_example_agent_runs", ROOT / "scripts/make_example_agent_runs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = [record_line(record) for record in module.make_records()]
    assert example_path.read_text() == "\n".join(lines) + "\n"


def test_example_has_the_promised_blemishes(example_path: Path) -> None:
    records = [json.loads(line) for line in example_path.read_text().splitlines()]
    tasks = {r["task_id"] for r in records}
    assert len(tasks) >= 5
    assert {r["arm"] for r in records} == {"with_skelly", "without_skelly"}
    for task in tasks:
        for arm in ("with_skelly", "without_skelly"):
            assert len([r for r in records if (r["task_id"], r["arm"]) == (task, arm)]) >= 5
    assert 1 <= sum(r["total_cost_usd"] is None for r in records) <= 5
    assert sum(r["infra_failure"] for r in records) == 1
    assert sum(r["timed_out"] for r in records) == 1
