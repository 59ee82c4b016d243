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


if TYPE_CHECKING:  # click 8.5 types are generic; older clicks are not
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


class PriceTableType(_ParamType):
    """A price file read and checked while the command line is parsed, so that a bad file
    stops a command before it runs anything (a usage error naming `file:line: field`)."""

    name = "FILE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from plumbline.core.prices import PriceFileError, PriceTable, load_prices

        if isinstance(value, PriceTable):
            return value
        try:
            return load_prices(Path(value))
        except PriceFileError as error:
            self.fail(str(error), param, ctx)


def price_table_option(function: F) -> F:
    """`--prices FILE` loaded at parse time (parameter `prices`: a `PriceTable` or None)."""
    decorate = click.option("--prices", "prices", type=PriceTableType(), help=PRICES_HELP)
    return decorate(function)


def load_price_table(path: Path | None) -> PriceTable:
    """The price table of `--prices` (the shipped one when None); a bad file is an
    `InputError` with one `file:line: field: problem` line per problem."""
    from plumbline.core.prices import PriceFileError, load_prices

    try:
        return load_prices(path)
    except PriceFileError as error:
        raise InputError(str(error)) from None
