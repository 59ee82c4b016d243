"""Objects released by `close()` that a `with` block closes when it ends."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self


class Closing(ABC):
    """A resource released by `close()`: `with resource:` gives the resource itself and closes
    it when the block ends (an exception raised in the block goes on)."""

    @abstractmethod
    def close(self) -> None:
        """Release what the object holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
