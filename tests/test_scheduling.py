"""The order `make test` gives its workers the tests in (tests/support/scheduling.py)."""

from __future__ import annotations

from tests.support.scheduling import Unit, longest_first


def _order(tests: list[Unit]) -> list[str]:
    return [f"{tests[i].module}:{i}" for i in longest_first(tests)]


def test_groups_then_slow_modules_then_the_rest_in_collection_order() -> None:
    tests = [
        Unit("a.py", None, False),
        Unit("b.py", None, False),
        Unit("b.py", None, True),  # one slow test makes all of b.py a slow module
        Unit("c.py", "late", False),
        Unit("d.py", None, False),
        Unit("e.py", "late", True),  # the group's tests stay together, from two files
        Unit("f.py", "early", False),
    ]
    assert _order(tests) == [
        "c.py:3",
        "e.py:5",
        "f.py:6",
        "b.py:1",
        "b.py:2",
        "a.py:0",
        "d.py:4",
    ]


def test_a_module_split_between_a_group_and_the_rest_keeps_each_part_together() -> None:
    tests = [
        Unit("a.py", None, False),
        Unit("m.py", "g", False),
        Unit("m.py", None, False),
        Unit("n.py", None, False),
        Unit("m.py", None, False),
    ]
    assert _order(tests) == ["m.py:1", "a.py:0", "m.py:2", "m.py:4", "n.py:3"]
    assert sorted(longest_first(tests)) == list(range(len(tests)))
    assert longest_first([]) == []
