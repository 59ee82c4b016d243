"""Named plugins, registered by decorator or declared as entry points (as Inspect registers
model providers and sandboxes), so the code that uses a kind of plugin never imports the
packages that provide one.

    TRIAL_EXECUTORS: Registry[ExecutorFactory] = Registry(
        "trial executor", "plumbline.trial_executors"
    )

    @TRIAL_EXECUTORS.register("local")
    def local_executor(harness): ...

    factory = TRIAL_EXECUTORS.get("ray")  # loads the "ray" entry point of plumbline.trial_executors

A package registers an entry point in its `pyproject.toml`:

    [project.entry-points."plumbline.trial_executors"]
    ray = "plumbline.cluster.trials:RayExecutor"
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistryError(LookupError):
    """No plugin of that name: the message lists the names there are."""


class Registry(Generic[T]):
    """Plugins of one kind by name: registered in process, else loaded from the entry-point
    `group` the first time they are asked for."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._plugins: dict[str, T] = {}
        self._lock = threading.Lock()

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated object under `name`."""

        def add(plugin: T) -> T:
            with self._lock:
                self._plugins[name] = plugin
            return plugin

        return add

    def names(self) -> list[str]:
        """Every name registered or declared as an entry point, sorted."""
        declared = {point.name for point in entry_points(group=self.group)}
        return sorted(set(self._plugins) | declared)

    def get(self, name: str) -> T:
        """The plugin named `name`; a `RegistryError` naming the known ones when none is."""
        with self._lock:
            if name in self._plugins:
                return self._plugins[name]
        for point in entry_points(group=self.group, name=name):
            plugin: T = point.load()
            with self._lock:
                self._plugins.setdefault(name, plugin)
                return self._plugins[name]
        raise RegistryError(
            f"no {self.kind} named {name!r} (known: {', '.join(self.names()) or 'none'}); "
            f"a plugin registers itself in the {self.group!r} entry-point group"
        )


__all__ = ["Registry", "RegistryError"]
