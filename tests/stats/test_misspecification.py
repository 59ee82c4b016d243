"""A small seeded run of the misspecification grid (`validation.misspecification`; the full run,
≥ 1,000 datasets per cell, is benchmarks/bench_misspecification.py and its table is in
docs/statistics.md): every claim holds, and the reference cells show what the grid guards
against (a plan at the old correlation, pairs in time order)."""

from __future__ import annotations

import pytest

from validation.misspecification import Cell, failures, run_grid

# one xdist group: the module's tests read one simulation (`cells`), run once, not once per worker
pytestmark = pytest.mark.xdist_group("misspecification")


@pytest.fixture(scope="module")
def cells() -> list[Cell]:
    return run_grid(150, seed=37, bias_replicates=4_000)


def test_every_claim_holds(cells: list[Cell]) -> None:
    assert not failures(cells), [
        (c.group, c.scenario, c.order, c.rate, c.claim) for c in failures(cells)
    ]
    groups = {cell.group for cell in cells}
    assert groups == {"correlation", "heterogeneity", "coverage", "ppi_bias", "selection"}


def test_power_holds_at_every_correlation(cells: list[Cell]) -> None:
    powers = [c for c in cells if c.group == "correlation" and c.passed is not None]
    assert len(powers) == 5 and all(c.rate >= 0.72 for c in powers)


def test_the_reference_cells_fail_as_issue_37_measured(cells: list[Cell]) -> None:
    old = next(c for c in cells if c.group == "correlation" and c.passed is None)
    assert old.rate < 0.6  # the plan at correlation 0.5 on independent arms
    timed = [c for c in cells if c.order == "grouped (time order)"]
    assert timed and all(c.rate > 0.3 for c in timed)  # tasks decided for the suite
    drawn = [c for c in cells if c.group == "heterogeneity" and c.passed is not None]
    assert {c.order for c in drawn} == {"compare", "harness"}


def test_hand_picked_labels_are_seen(cells: list[Cell]) -> None:
    only_yes = [c for c in cells if c.group == "selection" and "only the judge's yes" in c.scenario]
    assert only_yes and all(c.rate > 0.95 for c in only_yes)
