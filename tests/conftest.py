"""Hooks for the whole suite."""

from __future__ import annotations

import pytest
from tests.support.scheduling import Unit, longest_first


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` (`make test`) with pytest 9: pytest-xdist 3.8 puts a test in its
    `xdist_group` by appending `@GROUP` to the test's node id through `item._nodeid`, which
    pytest 9 no longer reads (the id is `item._id`, a `NodeId`). Without this hook every test
    is scheduled alone: the groups' tests spread over the workers and a module fixture they
    share is computed in each. Here, in each worker, the suffix is put where pytest 9 reads it;
    once pytest-xdist does it itself, ids already hold the suffix and nothing changes.
    Then the tests are put longest first (tests/support/scheduling.py)."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import coerce_node_id  # pytest 9's node ids (no public setter)
    except ImportError:  # another pytest: xdist's own suffix applies
        coerce_node_id = None
    units = []
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        group = "_".join(sorted(names)) if names else None
        slow = item.get_closest_marker("slow") is not None
        units.append(Unit(item.nodeid.split("::", 1)[0], group, slow))
        if coerce_node_id is None or not names or "@" in item.nodeid or not hasattr(item, "_id"):
            continue
        item._id = coerce_node_id(f"{item.nodeid}@{group}")
    # longest first, so that neither worker is left running a long unit alone at the end
    items[:] = [items[index] for index in longest_first(units)]
