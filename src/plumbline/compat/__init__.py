"""The private names of plumbline's dependencies, one guarded adapter per dependency.

plumbline takes a few shortcuts through private parts of Inspect AI (`compat.inspect`), the
openai SDK (`compat.openai`), jsii (`compat.jsii`), Ray (`compat.ray`) and transformers
(`compat.transformers`): the probe's direct call, which saves most of the client CPU a trial
costs, the CDK worker's early stop of the jsii runtime, Ray's re-reading of its authentication
settings, and `generate`'s sampling defaults.
Nothing else in `src/` imports a private module of another package
(`tests/compat/test_private_imports.py` walks the source and fails on one).

Each adapter declares the versions of its distribution it was checked against and the private
names it needs, and probes them once per process (`Adapter.status`): when the version is
outside the checked range, a name is missing, or the environment asks for the public paths,
its callers take the public path instead (the probe through `Model.generate`, the CDK worker
without the early stop, Inspect's public task registry, Ray without the refresh, transformers'
documented defaults) and one debug line says why (logger ``plumbline.compat``). Trial records
name the path that sent them (`TrialRecord.call_path`).

``PLUMBLINE_COMPAT=public`` forces every adapter to its public path;
``PLUMBLINE_COMPAT=public:openai,jsii`` forces the named ones only. The public paths give the
same records apart from timings (`tests/compat/test_public_paths.py`).

This module uses the standard library only.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: The environment variable that forces adapters to their public paths (see the docstring).
ENVIRONMENT = "PLUMBLINE_COMPAT"
#: The adapters there are, by name.
ADAPTERS = ("inspect", "openai", "jsii", "ray", "transformers")

logger = logging.getLogger("plumbline.compat")


def forced_public(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The adapters ``PLUMBLINE_COMPAT`` forces to their public paths.

    Raises ValueError naming the variable for a value that is not ``public`` or
    ``public:NAME[,NAME...]`` with known adapter names (empty or unset: none is forced).
    """
    value = (os.environ if environ is None else environ).get(ENVIRONMENT, "").strip()
    if not value:
        return frozenset()
    if value == "public":
        return frozenset(ADAPTERS)
    kind, colon, names = value.partition(":")
    chosen = {name.strip() for name in names.split(",") if name.strip()}
    if kind.strip() != "public" or not colon or not chosen or not chosen <= set(ADAPTERS):
        raise ValueError(
            f"{ENVIRONMENT}: {value!r} is neither 'public' nor 'public:NAME,...' "
            f"with NAME one of {', '.join(ADAPTERS)}"
        )
    return frozenset(chosen)


def version_tuple(version: str) -> tuple[int, ...]:
    """The release numbers of a version (``0.3.285`` -> (0, 3, 285); ``3.57.0rc1`` -> (3, 57, 0));
    pre- and post-release tags are ignored, which is what a checked range of releases needs."""
    numbers = []
    for part in version.split("+", 1)[0].split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)


@dataclass(frozen=True)
class CheckedRange:
    """Releases from `low` (inclusive) up to `high` (exclusive)."""

    low: str
    high: str

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, str):
            return False
        found = version_tuple(version)
        return version_tuple(self.low) <= found < version_tuple(self.high)

    def __str__(self) -> str:
        return f">={self.low},<{self.high}"


@dataclass(frozen=True)
class Status:
    """What one adapter's probe found: whether its fast path is open, and why not."""

    adapter: str
    distribution: str
    version: str | None
    checked: CheckedRange
    fast: bool
    reason: str  # empty when fast

    def describe(self) -> str:
        if self.fast:
            return f"{self.adapter}: fast path ({self.distribution} {self.version})"
        return f"{self.adapter}: public path: {self.reason}"


def resolve(dotted: str) -> object:
    """The object a name like ``package.module:Attr.attr`` names (ImportError or
    AttributeError when it is not there)."""
    module_name, _, attributes = dotted.partition(":")
    found: object = importlib.import_module(module_name)
    for attribute in filter(None, attributes.split(".")):
        found = getattr(found, attribute)
    return found


@dataclass(frozen=True)
class Adapter:
    """One dependency's private names, the releases they were checked against, and a probe.

    `names` are ``module:attribute.attribute`` strings resolved by the probe.
    """

    name: str
    distribution: str
    checked: CheckedRange
    names: Sequence[str]

    def status(self) -> Status:
        """The probe's finding (probed once per process and value of ``PLUMBLINE_COMPAT``)."""
        return _probe(self, os.environ.get(ENVIRONMENT, ""))

    @property
    def fast(self) -> bool:
        return self.status().fast


@functools.cache
def _probe(adapter: Adapter, environment: str) -> Status:
    version: str | None
    try:
        version = importlib.metadata.version(adapter.distribution)
    except importlib.metadata.PackageNotFoundError:
        version = None
    reason = _problem(adapter, version, environment)
    status = Status(
        adapter.name, adapter.distribution, version, adapter.checked, not reason, reason
    )
    if reason:
        logger.debug("plumbline.compat: %s", status.describe())
    return status


def _problem(adapter: Adapter, version: str | None, environment: str) -> str:
    if adapter.name in forced_public({ENVIRONMENT: environment}):
        return f"{ENVIRONMENT}={environment}"
    if version is None:
        return f"{adapter.distribution} is not installed"
    if version not in adapter.checked:
        return f"{adapter.distribution} {version} is outside the checked range {adapter.checked}"
    for dotted in adapter.names:
        try:
            resolve(dotted)
        except Exception as error:  # any failure to import or find it closes the fast path
            return f"{adapter.distribution} {version}: {dotted} not found ({error!r})"
    return ""


__all__ = [
    "ADAPTERS",
    "ENVIRONMENT",
    "Adapter",
    "CheckedRange",
    "Status",
    "forced_public",
    "resolve",
    "version_tuple",
]
