"""The order trials run in: arms interleaved, so time never stands in for the arm.

Every (task, repeat) is a block holding one run of each arm. `random` shuffles the blocks with a
seeded generator and orders the arms inside each block by a rotation of one random arm order,
the rotations dealt out evenly and shuffled (a randomised complete block design in which each
arm runs first, second, ... equally often, so a slow start or a warming cache favours no arm);
`abba` walks the blocks repeat by repeat and alternates the arm order (A B, B A, A B, ...)
from one repeat of a task to the next and from one task to the next.
Either way each arm's runs are spread over the whole run, never all of one arm first.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

Order = Literal["random", "abba"]


@dataclass(frozen=True)
class Unit:
    """One scheduled run: a task in an arm, one repeat, at a position of the schedule."""

    position: int
    task_id: str
    arm: str
    repeat: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.arm, self.repeat)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def build_schedule(
    task_ids: list[str], arms: list[str], repeats: int, *, seed: int = 0, order: Order = "random"
) -> list[Unit]:
    """Every (task, arm, repeat) once, in the order they run."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if len(arms) < 2:
        raise ValueError("a comparison needs at least two arms")
    blocks = [(task, repeat) for repeat in range(repeats) for task in task_ids]
    ordered: list[tuple[str, str, int]] = []
    if order == "random":
        rng = np.random.default_rng(seed)
        base = [arms[i] for i in rng.permutation(len(arms)).tolist()]
        rotations = rng.permutation([n % len(arms) for n in range(len(blocks))]).tolist()
        for index, rotation in zip(rng.permutation(len(blocks)).tolist(), rotations, strict=True):
            task, repeat = blocks[index]
            sequence = base[rotation:] + base[:rotation]
            ordered.extend((task, arm, repeat) for arm in sequence)
    elif order == "abba":
        # Alternate by repeat within each task (and between neighbouring tasks), so every task
        # has each arm first equally often whatever the number of tasks.
        index = {task: number for number, task in enumerate(task_ids)}
        for task, repeat in blocks:
            sequence = arms if (repeat + index[task]) % 2 == 0 else arms[::-1]
            ordered.extend((task, arm, repeat) for arm in sequence)
    else:
        raise ValueError(f"unknown order {order!r}: use random or abba")
    return [Unit(position, *unit) for position, unit in enumerate(ordered)]


__all__ = ["Order", "Unit", "build_schedule"]
