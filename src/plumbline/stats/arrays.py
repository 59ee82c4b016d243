"""The numpy array types the typed code is annotated with, named once for every package."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: Floating-point values (scores, costs, rates).
FloatArray = npt.NDArray[np.float64]
#: Integer values stored as int64 (question codes, counts read from logs).
IntArray = npt.NDArray[np.int64]
#: Positions and sizes in numpy's own index type (what `argsort`, `bincount` and `take` use).
IndexArray = npt.NDArray[np.intp]
#: Masks.
BoolArray = npt.NDArray[np.bool_]
