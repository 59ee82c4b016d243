"""The order `make test` hands the tests to its two workers in (`--dist loadgroup`).

pytest-xdist gives each worker the next unit of the collection as it runs low (a unit: the
tests of one `xdist_group`, or a single test), so the run ends when the unit taken last ends. In
collection order the longest units come late (a whole group: `plain_install`, `docs_site`,
`nightly_tutorial` are among the last files), and one worker ran the last of them while the
other idled. Longest first (the LPT rule of scheduling) leaves only short tests for the end,
which even out between the workers. Without timings, the classes stand in for length: the
groups (each an expensive shared fixture and its tests), then the modules holding a `slow` test
(end-to-end runs, simulations), then the rest. A module never splits (its module fixtures are
set up once per worker), and the collection order holds inside each class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """What the order needs of one collected test."""

    module: str  # the test file, as in the node id
    group: str | None  # its xdist group, if any
    slow: bool  # marked `slow`


#: The classes, first to last.
GROUP, SLOW_MODULE, REST = 0, 1, 2


def longest_first(tests: Sequence[Unit]) -> list[int]:
    """The indices of `tests` in the order to run them: the tests of every xdist group, then
    every module with a `slow` test, then the rest; a stable sort, so the collection order holds
    inside a class, a group's tests stay together, and a module's other tests stay together."""
    slow_modules = {test.module for test in tests if test.slow}
    # a key per test: its class, then where its group (or else its module) first appears
    first_seen: dict[str, int] = {}
    keys = []
    for index, test in enumerate(tests):
        if test.group is not None:
            rank, name = GROUP, f"group:{test.group}"
        else:
            rank = SLOW_MODULE if test.module in slow_modules else REST
            name = f"module:{test.module}"
        keys.append((rank, first_seen.setdefault(name, index)))
    return sorted(range(len(tests)), key=lambda index: keys[index])
