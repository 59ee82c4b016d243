"""The schedule: every unit once, seeded, arms interleaved in blocks, never one arm first."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.agent.schedule import build_schedule

TASKS = ["t1", "t2", "t3"]
ARMS = ["control", "treatment"]


def _first_run_of_each_arm_before_last_of_other(arms: list[str]) -> bool:
    """Not all of one arm's runs come before the other arm's first run."""
    for arm in set(arms):
        others = [i for i, a in enumerate(arms) if a != arm]
        mine = [i for i, a in enumerate(arms) if a == arm]
        if max(mine) < min(others):
            return False
    return True


@given(
    seed=st.integers(0, 2**32 - 1),
    repeats=st.integers(1, 6),
    tasks=st.integers(1, 4),
    arm_count=st.integers(2, 4),
)
def test_every_unit_once_and_arms_interleaved(
    seed: int, repeats: int, tasks: int, arm_count: int
) -> None:
    task_ids = [f"t{i}" for i in range(tasks)]
    arms = [f"a{i}" for i in range(arm_count)]
    schedule = build_schedule(task_ids, arms, repeats, seed=seed)
    assert [u.position for u in schedule] == list(range(len(schedule)))
    keys = Counter(u.key for u in schedule)
    assert len(keys) == tasks * arm_count * repeats and set(keys.values()) == {1}
    # Blocks: each consecutive group of len(arms) holds one (task, repeat) in every arm.
    for start in range(0, len(schedule), arm_count):
        block = schedule[start : start + arm_count]
        assert sorted(u.arm for u in block) == sorted(arms)
        assert len({(u.task_id, u.repeat) for u in block}) == 1
    if tasks * repeats >= 2:
        assert _first_run_of_each_arm_before_last_of_other([u.arm for u in schedule])


@given(
    seed=st.integers(0, 2**32 - 1),
    blocks=st.integers(1, 12),
    arm_count=st.integers(2, 4),
)
def test_each_arm_takes_each_place_in_its_block_equally_often(
    seed: int, blocks: int, arm_count: int
) -> None:
    arms = [f"a{i}" for i in range(arm_count)]
    schedule = build_schedule(["t"], arms, blocks, seed=seed)
    places = Counter((u.arm, u.position % arm_count) for u in schedule)
    # Blocks not divisible by the arm count leave each (arm, place) at most one apart.
    counts = [places[(arm, place)] for arm in arms for place in range(arm_count)]
    assert max(counts) - min(counts) <= 1
    assert sum(counts) == blocks * arm_count


def test_seeded_reproducible_and_seed_dependent() -> None:
    first = build_schedule(TASKS, ARMS, 5, seed=42)
    assert first == build_schedule(TASKS, ARMS, 5, seed=42)
    assert [u.key for u in first] != [u.key for u in build_schedule(TASKS, ARMS, 5, seed=43)]


def test_abba_alternates_arm_order_block_by_block() -> None:
    schedule = build_schedule(["t"], ARMS, 4, order="abba")
    assert [u.arm for u in schedule] == ["control", "treatment", "treatment", "control"] * 2
    assert [u.repeat for u in schedule] == [0, 0, 1, 1, 2, 2, 3, 3]


@pytest.mark.parametrize("tasks", [1, 2, 3, 4])
def test_abba_gives_every_task_each_arm_first_equally_often(tasks: int) -> None:
    task_ids = [f"t{i}" for i in range(tasks)]
    schedule = build_schedule(task_ids, ARMS, 4, order="abba")
    firsts = Counter(
        (unit.task_id, unit.arm)
        for unit in schedule[:: len(ARMS)]  # first unit of each block
    )
    assert all(firsts[(task, arm)] == 2 for task in task_ids for arm in ARMS)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least two arms"):
        build_schedule(TASKS, ["only"], 1)
    with pytest.raises(ValueError, match="repeats"):
        build_schedule(TASKS, ARMS, 0)
    with pytest.raises(ValueError, match="unknown order"):
        build_schedule(TASKS, ARMS, 1, order="alphabetical")  # type: ignore[arg-type]
