"""The table of result kinds, and the registry their definitions join (`@result_kind`).

A kind is declared by one row of `KIND_TABLE` (its name, the module that defines it, whether
the results store keeps it) and defined by one class of that module, decorated as Inspect AI
registers tasks:

    @result_kind("compare")
    class Compare(ResultKind[CompareReport]):
        model = CompareReport
        ...

The table is read without importing any job package (`plumbline history --help` lists the
stored kinds from it); a kind's module is imported when the kind is first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from plumbline.results.rows import MetricRow

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class KindRow:
    """One row of the table: a kind's name, its defining module, and whether it is stored."""

    name: str
    module: str
    stored: bool


#: Every kind of result, once.
KIND_TABLE: tuple[KindRow, ...] = (
    KindRow("leaderboard", "plumbline.results.leaderboard", stored=True),
    KindRow("compare", "plumbline.results.compare", stored=True),
    KindRow("reliability", "plumbline.results.reliability", stored=True),
    KindRow("agent_run", "plumbline.results.agent_run", stored=True),
    KindRow("history", "plumbline.results.history", stored=False),
)

#: The kinds of result the results store keeps.
STORED_KINDS: tuple[str, ...] = tuple(row.name for row in KIND_TABLE if row.stored)
#: Every kind's name.
KIND_NAMES: tuple[str, ...] = tuple(row.name for row in KIND_TABLE)

R = TypeVar("R", bound="BaseModel")


class ResultKind(Generic[R]):
    """A kind of result: its document model and how it is read, checked, keyed and measured.

    Subclasses set `model`, and override what differs from these defaults."""

    #: The kind's name (set by `@result_kind`).
    name: ClassVar[str] = ""
    #: The typed document of the kind.
    model: ClassVar[type[BaseModel]]
    #: The record files that feed it in a site (`inspect_logs`, `run_records`, `trial_records`).
    sources: ClassVar[tuple[str, ...]] = ()
    #: The command that makes a document of the kind (said when only its sources are given).
    made_by: ClassVar[str] = ""

    def read(self, document: Any) -> R:
        """The typed document of a JSON value (older versions upgraded, validated, checked);
        `ResultDocumentError` listing every problem as `field: why`."""
        from plumbline.results.errors import validated

        result: R = validated(self.model, document)
        return result

    def check(self, result: R) -> list[str]:
        """The rules the schema cannot say, broken by an in-process result (empty: none)."""
        return []

    def review(self, result: R, problems: list[str]) -> Any:
        """What its page shows of its own check, from the problems `check` found (None: the
        page needs nothing, or the site reviews it)."""
        return None

    def to_json(self, result: R) -> dict[str, Any]:
        """The result's JSON document, as every output writes it."""
        data: dict[str, Any] = result.model_dump(mode="json")
        return data

    def subjects(self, result: R) -> tuple[str, ...]:
        """What the result measures: its models, pairs of arms or arms."""
        return ()

    def suite(self, result: R) -> str | None:
        """The suite it ran (None: it records none)."""
        return None

    def created_at(self, result: R) -> str | None:
        """The time it records itself made at (None: it records none)."""
        return None

    def metrics(self, result: R) -> list[MetricRow]:
        """Its published metrics, one row per subject and metric."""
        return []


_REGISTRY: dict[str, ResultKind[Any]] = {}

K = TypeVar("K", bound=type[ResultKind[Any]])


def result_kind(name: str) -> Callable[[K], K]:
    """Register the decorated class as the definition of the kind `name` (a row of
    `KIND_TABLE`)."""

    def register(cls: K) -> K:
        if name not in KIND_NAMES:
            raise ValueError(f"{name!r} is not a kind of KIND_TABLE ({', '.join(KIND_NAMES)})")
        cls.name = name
        _REGISTRY[name] = cls()
        return cls

    return register


def kind(name: str) -> ResultKind[Any]:
    """The definition of the kind `name` (its module imported on first use); `KeyError` for a
    name not in `KIND_TABLE`."""
    if name not in _REGISTRY:
        row = next((row for row in KIND_TABLE if row.name == name), None)
        if row is None:
            raise KeyError(name)
        importlib.import_module(row.module)
    return _REGISTRY[name]


def kind_of(result: BaseModel) -> ResultKind[Any]:
    """The kind whose document `result` is (by its model's type)."""
    for row in KIND_TABLE:
        definition = kind(row.name)
        if isinstance(result, definition.model):
            return definition
    raise TypeError(f"{type(result).__name__} is not the document of a result kind")


def detect(document: Any) -> str | None:
    """The kind of a JSON document from its `schema_version` alone (older leaderboards, which
    predate the string, included); None when it is no plumbline result."""
    from plumbline.core.result import document_kind
    from plumbline.leaderboard.upgrade import is_older_leaderboard

    name = document_kind(document)
    if name in KIND_NAMES:
        return name
    if name is None and is_older_leaderboard(document):
        return "leaderboard"
    return None
