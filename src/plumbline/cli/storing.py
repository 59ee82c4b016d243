"""`--store URL`, `--label KEY=VALUE` and `--store-required` on every command that produces a
result (`run`, `leaderboard`, `compare`, `reliability`, `agent run`, `demo`).

    @store_options
    def compare(..., store: StoreOptions) -> None:
        ...write the result files...
        store_result(report, store, inputs=records)

The result is stored after its files are written, so a store never costs the result: a store
that cannot be reached (or refuses the result) is one warning line on stderr, and the command
goes on; only with `--store-required` does it then exit 3. `PLUMBLINE_STORE` names the store
when `--store` is not given.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from plumbline.cli.output import EXIT_INFRA, warn

F = TypeVar("F", bound=Callable[..., Any])

_LABEL_KEY = re.compile(r"^[A-Za-z0-9_.:/-]{1,100}$")
MAX_LABEL_VALUE = 500


@dataclass(frozen=True)
class StoreOptions:
    """Where to store a command's result (None: nowhere), with which labels."""

    url: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    required: bool = False

    def as_arguments(self) -> tuple[str, ...]:
        """These options on a command line (the demo passes them to each step)."""
        if self.url is None:
            return ()
        arguments = ["--store", self.url]
        for key, value in self.labels:
            arguments += ["--label", f"{key}={value}"]
        if self.required:
            arguments.append("--store-required")
        return tuple(arguments)


def parse_label(text: str) -> tuple[str, str]:
    """`KEY=VALUE` as a pair; `ValueError` saying what is wrong."""
    key, separator, value = text.partition("=")
    if not separator:
        raise ValueError(f"{text!r}: expected KEY=VALUE (e.g. commit=abc123)")
    if not _LABEL_KEY.match(key):
        raise ValueError(
            f"{text!r}: a label key is 1 to 100 letters, digits or _ . : / - (got {key!r})"
        )
    if not value or len(value) > MAX_LABEL_VALUE or not value.isprintable():
        raise ValueError(f"{text!r}: a label value is 1 to {MAX_LABEL_VALUE} printable characters")
    return key, value


def _labels(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    parsed: dict[str, str] = {}
    for text in values:
        try:
            key, value = parse_label(text)
        except ValueError as error:
            raise click.BadParameter(str(error), ctx, param) from None
        parsed[key] = value  # the last value given for a key wins
    return tuple(parsed.items())


label_option = click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    callback=_labels,
    help="A label to store the result with (repeatable), e.g. --label commit=abc123.",
)


class StoreLocation(click.types.StringParamType):
    """A store URL, as given; `local_path` names its file when it is a SQLite store, so the
    output layer refuses an output that would overwrite it."""

    name = "url"

    def local_path(self, value: str) -> str | None:
        from plumbline.store.url import StoreUrlError, sqlite_path, store_url

        try:
            path = sqlite_path(store_url(value))
        except StoreUrlError:
            return None
        return str(path) if path is not None else None


def store_url_option(help: str) -> Callable[[F], F]:
    return click.option(
        "--store",
        "store_url",
        type=StoreLocation(),
        metavar="URL",
        envvar="PLUMBLINE_STORE",
        show_envvar=True,
        help=help,
    )


def store_options(function: F) -> F:
    """`--store URL`, `--label KEY=VALUE` and `--store-required`, given to the command as one
    `store: StoreOptions` argument."""

    @functools.wraps(function)
    def wrapper(
        *args: Any,
        store_url: str | None,
        labels: tuple[tuple[str, str], ...],
        store_required: bool,
        **kwargs: Any,
    ) -> Any:
        if store_required and not store_url:
            raise click.UsageError("--store-required needs --store URL (or PLUMBLINE_STORE)")
        if labels and not store_url:
            raise click.UsageError("--label labels a stored result: add --store URL")
        store = StoreOptions(url=store_url or None, labels=labels, required=store_required)
        return function(*args, store=store, **kwargs)

    decorated = click.option(
        "--store-required",
        is_flag=True,
        help="Exit 3 when the result cannot be stored (by default: a warning, exit as usual).",
    )(wrapper)
    decorated = label_option(decorated)
    decorated = store_url_option(
        "Also record the result in this results store: a path or sqlite:///PATH (SQLite), or "
        "postgresql://user@host/db (see `plumbline history`)."
    )(decorated)
    return cast(F, decorated)


def input_digests(paths: Sequence[Path]) -> list[dict[str, str]]:
    """`{path, sha256}` of each local input file (unreadable ones left out)."""
    from plumbline.store.store import file_digest

    digests: list[dict[str, str]] = []
    for path in paths:
        try:
            if path.is_file():
                digests.append({"path": str(path), "sha256": file_digest(path)})
        except OSError:
            continue
    return digests


def store_result(
    document: Any,
    store: StoreOptions,
    *,
    inputs: Sequence[Path | str] = (),
    source: str | None = None,
) -> int | None:
    """Record `document` (a result model or its JSON) in the store `store` names; return its
    id (None: not stored). Every failure is one warning line (exit 3 with --store-required)."""
    if store.url is None:
        return None
    import logging

    from plumbline.cli.output import to_jsonable
    from plumbline.store.documents import ResultDocumentError, read_result
    from plumbline.store.migrate import StoreError
    from plumbline.store.store import Store
    from plumbline.store.url import StoreUrlError, shown_url

    try:
        result = read_result(to_jsonable(document))
        with Store.open(store.url) as opened:
            added = opened.add(
                result,
                labels=dict(store.labels),
                source=source or _command_line(),
                inputs=input_digests([Path(str(path)) for path in inputs]),
            )
    except (StoreError, StoreUrlError) as error:
        _not_stored(str(error), store)
        return None
    except ResultDocumentError as error:
        _not_stored(f"{shown_url(store.url)}: the result was refused: {error}", store)
        return None
    what = "stored" if added.created else "already stored"
    logging.getLogger("plumbline").info(
        "%s as result %d in %s", what, added.id, shown_url(store.url)
    )
    return added.id


def _not_stored(message: str, store: StoreOptions) -> None:
    warn("result not stored: %s", " ".join(message.split()))
    if store.required:
        raise SystemExit(EXIT_INFRA)


def _command_line() -> str:
    """`plumbline CMD ...` of this invocation (what the result was stored from)."""
    ctx = click.get_current_context(silent=True)
    return f"plumbline {ctx.command_path.split(' ', 1)[-1]}" if ctx else "plumbline"
