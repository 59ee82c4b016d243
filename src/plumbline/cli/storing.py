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

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from plumbline.cli.output import EXIT_INFRA, warn

if TYPE_CHECKING:
    from plumbline.results.stored import ResultDocument
    from plumbline.store.store import Store

F = TypeVar("F", bound=Callable[..., Any])

_LABEL_KEY = re.compile(r"^[A-Za-z0-9_.:/-]{1,100}$")
MAX_LABEL_VALUE = 500


@dataclass(frozen=True)
class StoreOptions:
    """Where to store a command's result (None: nowhere), with which labels."""

    url: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    required: bool = False

    def as_arguments(self, *, shown: bool = False) -> tuple[str, ...]:
        """These options on a command line (the demo passes them to each step); `shown`:
        as they may be printed, the store's password hidden."""
        if self.url is None:
            return ()
        from plumbline.store.url import shown_url

        arguments = ["--store", shown_url(self.url) if shown else self.url]
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


def labels_callback(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
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
    callback=labels_callback,
    help="A label to store the result with (repeatable), e.g. --label commit=abc123.",
)


class StoreLocation(click.types.StringParamType):
    """A store URL, as given; `local_path` names its file when it is a SQLite store, so the
    output layer refuses an output that would overwrite it."""

    name = "url"

    def local_path(self, value: str) -> str | None:
        from plumbline.store.url import sqlite_path

        path = sqlite_path(value)
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
    """Record `document` (a result model or its JSON, read as a stored file is) in the store
    `store` names; return its id (None: not stored). Every failure is one warning line (exit 3
    with --store-required), the store's password hidden."""
    from plumbline.cli.output import to_jsonable
    from plumbline.results.stored import read_result

    return store_step(store, inputs=inputs, source=source)(
        lambda: read_result(to_jsonable(document))
    )


def store_step(
    store: StoreOptions, *, inputs: Sequence[Path | str] = (), source: str | None = None
) -> Callable[[Callable[[], ResultDocument]], int | None]:
    """What `app.publish.Outputs.store` runs: add the stored form of a result (made when it is
    needed) to the store `store` names, with these inputs' digests; return its id (None: not
    stored). Every failure is one warning line (exit 3 with --store-required)."""

    def add(stored: Callable[[], ResultDocument]) -> int | None:
        if store.url is None:
            return None
        import logging

        from plumbline.results.stored import ResultDocumentError
        from plumbline.store.migrate import StoreError
        from plumbline.store.store import Store
        from plumbline.store.url import StoreUrlError, shown_url

        shown = shown_url(store.url)
        try:
            result = stored()
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
            _not_stored(f"{shown}: the result was refused: {error}", store)
            return None
        except OSError as error:
            _not_stored(f"{shown}: {error.strerror or error}", store)
            return None
        what = "stored" if added.created else "already stored"
        logging.getLogger("plumbline").info("%s as result %d in %s", what, added.id, shown)
        return added.id

    return add


@contextlib.contextmanager
def opened_store(url: str | None, *, create: bool) -> Iterator[Store]:
    """The store `--store` (or PLUMBLINE_STORE) names, open for the block: exit 2 without one
    or for a URL that cannot name a store or (not `create`: reading commands) one that does
    not exist; exit 3, one line, for any other store error in the block."""
    from plumbline.store.migrate import StoreError
    from plumbline.store.store import Store
    from plumbline.store.url import StoreUrlError

    if not url:
        raise click.UsageError("name the results store: --store URL (or PLUMBLINE_STORE)")
    try:
        store = Store.open(url, create=create)
    except StoreUrlError as error:
        raise click.BadParameter(str(error), param_hint="--store") from None
    except StoreError as error:
        raise _store_failure(error) from None
    try:
        with store:
            yield store
    except StoreError as error:
        raise _store_failure(error) from None


def _store_failure(error: Exception) -> click.ClickException:
    from plumbline.cli.output import InfraError, InputError
    from plumbline.store.migrate import StoreError

    message = " ".join(str(error).split())
    if isinstance(error, StoreError) and error.kind == "missing":
        return InputError(message)
    return InfraError(message)


def _not_stored(message: str, store: StoreOptions) -> None:
    warn("result not stored: %s", " ".join(message.split()))
    if store.required:
        raise SystemExit(EXIT_INFRA)


def _command_line() -> str:
    """`plumbline CMD ...` of this invocation (what the result was stored from)."""
    ctx = click.get_current_context(silent=True)
    return f"plumbline {ctx.command_path.split(' ', 1)[-1]}" if ctx else "plumbline"
