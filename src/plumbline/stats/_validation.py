"""Input validation shared by the statistics functions: every error names the argument."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from plumbline.stats.arrays import FloatArray

#: What the statistics functions accept as data: a sequence of numbers or a numpy array.
ArrayLike = npt.ArrayLike


def as_float_vector(values: ArrayLike, name: str, *, min_size: int = 1) -> FloatArray:
    """A 1-D finite float array with at least `min_size` elements, or a ValueError naming `name`."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a sequence of numbers: {exc}") from None
    if array.ndim == 0:
        raise ValueError(f"{name} must be a sequence of numbers, got a scalar")
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size < min_size:
        raise ValueError(
            f"{name} needs at least {min_size} value{'s' if min_size != 1 else ''}, "
            f"got {array.size}"
        )
    if not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name}[{bad}] is {float(array[bad])}; remove missing or infinite values")
    return array


def as_paired_vectors(
    x: ArrayLike, y: ArrayLike, *, min_size: int = 1, names: tuple[str, str] = ("x", "y")
) -> tuple[FloatArray, FloatArray]:
    """Two finite 1-D arrays of equal length (one entry per pair)."""
    first = as_float_vector(x, names[0], min_size=min_size)
    second = as_float_vector(y, names[1], min_size=min_size)
    if first.size != second.size:
        raise ValueError(
            f"{names[0]} and {names[1]} must be paired (same length), "
            f"got {first.size} and {second.size}"
        )
    return first, second


def as_bool_vector(values: ArrayLike, name: str) -> npt.NDArray[np.bool_]:
    """A 1-D boolean array; accepts booleans or 0/1 numbers."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence of booleans")
    if array.dtype == np.bool_:
        return array
    numeric = as_float_vector(array, name, min_size=0)
    if not np.all((numeric == 0) | (numeric == 1)):
        bad = int(np.flatnonzero((numeric != 0) & (numeric != 1))[0])
        raise ValueError(f"{name}[{bad}] is {float(numeric[bad])}; expected a boolean (0 or 1)")
    return numeric.astype(np.bool_)


def check_count(value: Any, name: str, *, minimum: int = 0) -> int:
    """An integer count >= `minimum` (accepts integral floats such as 42.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not math.isfinite(float(value)) or float(value) != int(value):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    count = int(value)
    if count < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {count}")
    return count


def check_positive(value: Any, name: str) -> float:
    """A finite number > 0 (a bool is not a number here)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and value > 0)
    ):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def check_probability(value: Any, name: str, *, open_interval: bool = True) -> float:
    """A probability in (0, 1), or [0, 1] when `open_interval` is False."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    inside = 0 < number < 1 if open_interval else 0 <= number <= 1
    if not (math.isfinite(number) and inside):
        bounds = "strictly between 0 and 1" if open_interval else "between 0 and 1"
        raise ValueError(f"{name} must be {bounds}, got {value!r}")
    return number


@functools.lru_cache(maxsize=1024)
def z_critical(level: float) -> float:
    """The two-sided standard normal critical value `z_{1-(1-level)/2}` (1.959964 for 95%).

    Cached: a pure function of the level, called once per interval in simulations.
    """
    # isf of the upper tail, not ppf(0.5 + level / 2): a level within 1e-16 of 1 rounds
    # 0.5 + level / 2 to 1.0, whose ppf is infinite.
    return float(sps.norm.isf((1 - level) / 2))


@functools.lru_cache(maxsize=4096)
def t_critical(level: float, df: float) -> float:
    """The two-sided Student t critical value with `df` degrees of freedom."""
    return float(sps.t.isf((1 - level) / 2, df))


def level_label(level: float) -> str:
    """`0.95` -> `"95%"`, `0.999` -> `"99.9%"`; a level just below 1 never reads `100%`."""
    text = f"{level * 100:.10g}"
    if level < 1 and float(text) >= 100:
        text = f"{level * 100:.17g}"
    return f"{text}%"
