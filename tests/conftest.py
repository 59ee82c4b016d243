"""Hooks for the whole suite."""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` (`make test`) with pytest 9: pytest-xdist 3.8 puts a test in its
    `xdist_group` by appending `@GROUP` to the test's node id through `item._nodeid`, which
    pytest 9 no longer reads (the id is `item._id`, a `NodeId`). Without this hook every test
    is scheduled alone: the groups' tests spread over the workers and a module fixture they
    share is computed in each. Here, in each worker, the suffix is put where pytest 9 reads it;
    once pytest-xdist does it itself, ids already hold the suffix and nothing changes."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import coerce_node_id  # pytest 9's node ids (no public setter)
    except ImportError:  # another pytest: xdist's own suffix applies
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        if not names or "@" in item.nodeid or not hasattr(item, "_id"):
            continue
        item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(names))}")
