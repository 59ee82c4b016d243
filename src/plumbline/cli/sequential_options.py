"""The options of an anytime-valid sequential A/B, declared once for `compare --sequential`
and `agent run --until-decided`: the switch, the planned effect, the command's own planning
options, and the assumed correlation within a pair."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from plumbline.cli.output import FiniteFloatRange

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:  # click 8.5 types are generic; older clicks are not
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


def sequential_options(
    switch: str,
    switch_help: str,
    *,
    effect_type: _ParamType,
    effect_note: str,
    planning: Sequence[Callable[[Any], Any]] = (),
) -> Callable[[F], F]:
    """`switch` (a flag), `--effect`, the `planning` options and `--correlation`, in that
    order; the help of each dependent option starts with `switch:`."""
    options = [
        click.option(switch, is_flag=True, help=switch_help),
        click.option(
            "--effect",
            type=effect_type,
            help=f"{switch}: planned pass-rate difference ({effect_note})  [default: 0.10]",
        ),
        *planning,
        click.option(
            "--correlation",
            type=FiniteFloatRange(-1, 1, max_open=True),
            help=f"{switch}: assumed correlation of the two arms' outcomes within a pair, for "
            "planning (0, independent arms, needs the most pairs of any correlation >= 0)  "
            "[default: 0]",
        ),
    ]

    def decorate(function: F) -> F:
        decorated: Any = function
        for option in reversed(options):
            decorated = option(decorated)
        return cast(F, decorated)

    return decorate
