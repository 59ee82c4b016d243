"""The adapters of `plumbline.compat`: the probe of private names, the checked ranges, the
environment variable that forces the public paths, and the public paths' own results."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from plumbline import compat
from plumbline.compat import Adapter, CheckedRange, forced_public, version_tuple
from plumbline.compat import inspect as inspect_compat
from plumbline.compat import jsii as jsii_compat
from plumbline.compat import openai as openai_compat
from plumbline.compat import ray as ray_compat
from plumbline.compat import transformers as transformers_compat

REAL = {
    "inspect": inspect_compat.ADAPTER,
    "openai": openai_compat.ADAPTER,
    "jsii": jsii_compat.ADAPTER,
    "ray": ray_compat.ADAPTER,
    "transformers": transformers_compat.ADAPTER,
}


@pytest.fixture(autouse=True)
def _own_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests set ``PLUMBLINE_COMPAT`` themselves (the suite may run with it set)."""
    monkeypatch.delenv(compat.ENVIRONMENT, raising=False)


def test_every_adapter_is_named_in_the_list_of_adapters() -> None:
    assert set(REAL) == set(compat.ADAPTERS)
    assert all(adapter.name == name for name, adapter in REAL.items())


@pytest.mark.parametrize("name", sorted(REAL))
def test_each_adapter_finds_its_private_names_in_the_installed_release(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails, naming the adapter and what it misses, when an installed release (the lock's,
    or the newest the ranges allow in `test_plain_install.py`) moved a private name or is
    outside the range the adapter was checked against: then that release needs checking, and
    the adapter's names or range updating."""
    monkeypatch.delenv(compat.ENVIRONMENT, raising=False)
    status = REAL[name].status()
    assert status.fast, status.describe()


def test_the_environment_forces_all_or_named_adapters_to_their_public_paths() -> None:
    assert forced_public({}) == frozenset()
    assert forced_public({"PLUMBLINE_COMPAT": ""}) == frozenset()
    assert forced_public({"PLUMBLINE_COMPAT": "public"}) == frozenset(compat.ADAPTERS)
    assert forced_public({"PLUMBLINE_COMPAT": "public:openai, jsii"}) == {"openai", "jsii"}
    for wrong in ("fast", "public:", "public:numpy", "private:openai"):
        with pytest.raises(ValueError, match=r"PLUMBLINE_COMPAT: .* neither 'public'"):
            forced_public({"PLUMBLINE_COMPAT": wrong})


def test_forcing_one_adapter_leaves_the_others_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compat.ENVIRONMENT, "public:openai")
    assert not openai_compat.ADAPTER.fast
    assert openai_compat.ADAPTER.status().reason == "PLUMBLINE_COMPAT=public:openai"
    assert inspect_compat.ADAPTER.fast and jsii_compat.ADAPTER.fast
    monkeypatch.setenv(compat.ENVIRONMENT, "public")
    assert not any(adapter.fast for adapter in REAL.values())


def test_versions_compare_by_their_release_numbers() -> None:
    assert version_tuple("0.3.285") == (0, 3, 285)
    assert version_tuple("3.57.0rc1") == (3, 57, 0)
    assert version_tuple("2.13.0+cpu") == (2, 13, 0)
    checked = CheckedRange("0.3.285", "0.4")
    assert "0.3.285" in checked and "0.3.999" in checked
    assert "0.3.284" not in checked and "0.4.0" not in checked and "0.10.1" not in checked
    assert str(checked) == ">=0.3.285,<0.4"


def _debug_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "plumbline.compat"]


def test_a_missing_private_name_takes_the_public_path_with_one_debug_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = Adapter(
        "inspect",
        "inspect-ai",
        CheckedRange("0", "99"),
        ("inspect_ai.model._model:Model.generate", "inspect_ai.model._model:Model._gone"),
    )
    with caplog.at_level(logging.DEBUG, logger="plumbline.compat"):
        first, second = adapter.status(), adapter.status()
    assert first is second and not first.fast
    assert "inspect_ai.model._model:Model._gone not found" in first.reason
    # probed once: one debug line, however often the callers ask
    assert _debug_lines(caplog) == [f"plumbline.compat: {first.describe()}"]


def test_a_release_outside_the_checked_range_takes_the_public_path(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = Adapter("openai", "openai", CheckedRange("0.1", "0.2"), ("openai:AsyncOpenAI",))
    with caplog.at_level(logging.DEBUG, logger="plumbline.compat"):
        status = adapter.status()
    assert not status.fast
    assert status.reason.startswith("openai ") and "outside the checked range >=0.1,<0.2" in (
        status.reason
    )
    assert len(_debug_lines(caplog)) == 1
    missing = Adapter("x", "no-such-distribution-plumbline", CheckedRange("0", "1"), ())
    assert missing.status().reason == "no-such-distribution-plumbline is not installed"


_TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample


@task
def first():
    return Task(dataset=[Sample(input="a", target="b")], name="first")


@task
def second(count: int = 2):
    return Task(dataset=[Sample(input=str(i)) for i in range(count)])
"""


@pytest.mark.parametrize("suffix", ["@second", ""])
def test_a_user_task_loads_the_same_through_inspects_public_registry(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tasks.py").write_text(_TASKS)
    monkeypatch.chdir(tmp_path)  # Inspect's loader takes a file's tasks by a relative path
    monkeypatch.delenv(compat.ENVIRONMENT, raising=False)
    fast = inspect_compat.load_tasks(f"tasks.py{suffix}")
    monkeypatch.setenv(compat.ENVIRONMENT, "public:inspect")
    public = inspect_compat.load_tasks(f"tasks.py{suffix}")

    def seen(tasks: list[object]) -> list[tuple[str, list[object]]]:
        return [
            (task.name, [sample.input for sample in task.dataset])  # type: ignore[attr-defined]
            for task in tasks
        ]

    assert seen(public) == seen(fast)
    assert len(fast) == (1 if suffix else 2)


def test_the_cdk_worker_is_told_of_the_early_stop_only_on_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(compat.ENVIRONMENT, raising=False)
    assert jsii_compat.worker_environment("/x/jsii_runtime.py") == {
        "PLUMBLINE_JSII_ADAPTER": "/x/jsii_runtime.py"
    }
    monkeypatch.setenv(compat.ENVIRONMENT, "public:jsii")
    assert jsii_compat.worker_environment("/x/jsii_runtime.py") == {}


def test_the_worker_side_stop_uses_the_standard_library_only() -> None:
    """It runs inside the sandbox by path, where plumbline is not importable."""
    import ast

    tree = ast.parse(jsii_compat.RUNTIME_SCRIPT.read_text(encoding="utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported == {"__future__", "jsii._runtime"}


def test_the_documented_sampling_defaults_are_the_ones_transformers_applies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(compat.ENVIRONMENT, raising=False)
    applied = transformers_compat.generation_defaults()
    monkeypatch.setenv(compat.ENVIRONMENT, "public:transformers")
    documented = transformers_compat.generation_defaults()
    assert documented == transformers_compat.DOCUMENTED_DEFAULTS
    assert {k: applied[k] for k in documented} == documented
