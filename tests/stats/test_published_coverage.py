"""Coverage of what the leaderboard and compare documents publish (issue 15); the reliability
document's intervals are in tests/stats/test_reliability_coverage.py.

Drives `validation.coverage.run_cells`: at least 2,000 seeded datasets per cell, n ∈ {5, 10, 30,
100, 1000}, true p ∈ {0.02, 0.5, 0.98} and p ~ U(0.1, 0.9), 1–3 categories with unequal weights,
binary and rubric scoring, repeats clustered in questions (tasks). The leaderboard cells run
through the vectorised cores and, for their first datasets, through `score_model` /
`pairwise_difference` themselves (no mismatch allowed). Compare runs at n ≤ 30 here with 200
bootstrap resamples per dataset (scripts/coverage_table.py runs every n for docs/statistics.md).
"""

from __future__ import annotations

import pytest

from validation.coverage import BAND, DATASETS, SIZES, TRUTHS, CellResult, floor, run_cells

# One xdist group: the module's tests share one simulation (`cells`), which `--dist loadgroup`
# would otherwise run once in each worker that gets one of them.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("published_coverage")]


@pytest.fixture(scope="module")
def cells() -> list[CellResult]:
    return run_cells(SIZES, TRUTHS, compare_sizes=(5, 10, 30), compare_resamples=200)


def _describe(cell: CellResult) -> str:
    return (
        f"{cell.scenario.document}: {cell.scenario.number}, n = {cell.n}, p = {cell.truth_label}: "
        f"coverage {cell.coverage:.3f}, {cell.out_of_range} out of range, "
        f"{cell.mismatches}/{cell.checked} mismatches"
    )


def test_every_cell_has_the_full_grid_and_enough_datasets(cells: list[CellResult]) -> None:
    leaderboard = [c for c in cells if c.scenario.document == "leaderboard"]
    assert {c.n for c in leaderboard} == set(SIZES)
    assert {c.truth for c in leaderboard} == set(TRUTHS)
    assert {c.scenario.document for c in cells} == {"leaderboard", "compare"}
    assert all(c.datasets >= DATASETS for c in cells)


def test_no_bound_ever_leaves_its_range(cells: list[CellResult]) -> None:
    bad = [_describe(c) for c in cells if c.out_of_range]
    assert not bad, "\n".join(bad)


def test_the_documents_functions_publish_the_simulated_bounds(cells: list[CellResult]) -> None:
    checked = [c for c in cells if c.checked]
    assert checked and all(c.checked >= 20 for c in checked)
    bad = [_describe(c) for c in checked if c.mismatches]
    assert not bad, "\n".join(bad)


def test_coverage_holds_wherever_it_is_claimed(cells: list[CellResult]) -> None:
    bad = [_describe(c) for c in cells if not c.acceptable]
    assert not bad, "\n".join(bad)
    # the claim is not vacuous: most leaderboard cells are in the 95% band itself
    averaged = [c for c in cells if c.scenario.document == "leaderboard" and c.truth is None]
    assert sum(BAND[0] <= c.coverage <= BAND[1] for c in averaged) >= 0.75 * len(averaged)
    extremes = [c for c in cells if c.truth in (0.02, 0.98) and not c.approximate]
    assert all(c.coverage >= floor(c.datasets) for c in extremes)


def test_where_no_method_reaches_the_band_the_output_says_approximate(
    cells: list[CellResult],
) -> None:
    short = [c for c in cells if c.approximate]
    assert short, "compare's bootstrap at few tasks is known to fall short"
    assert all(c.scenario.document == "compare" for c in short)
