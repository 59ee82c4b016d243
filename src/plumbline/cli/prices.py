"""`--prices FILE`: the price table every command that reports cost reads (the shipped one by
default; see `plumbline.core.prices` for the file's format)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from plumbline.cli.output import InputError

if TYPE_CHECKING:
    from plumbline.core.prices import PriceTable

F = TypeVar("F", bound=Callable[..., Any])

PRICES_HELP = (
    "A price table (TOML or JSON: a version, and per model USD per million input, output, cache "
    "read/write and reasoning tokens, with a source and date) that replaces the shipped one."
)


def prices_option(function: F) -> F:
    """The `--prices FILE` option (parameter `prices_path`)."""
    decorate = click.option(
        "--prices",
        "prices_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help=PRICES_HELP,
    )
    return decorate(function)


def load_price_table(path: Path | None) -> PriceTable:
    """The price table of `--prices` (the shipped one when None); a bad file is an
    `InputError` with one `file:line: field: problem` line per problem."""
    from plumbline.core.prices import PriceFileError, load_prices

    try:
        return load_prices(path)
    except PriceFileError as error:
        raise InputError(str(error)) from None
