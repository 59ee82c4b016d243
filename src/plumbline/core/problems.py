"""The error of an input that cannot be used, carrying every problem found in it."""

from __future__ import annotations


class ProblemsError(ValueError):
    """An input (a file, a result) that cannot be used; the message lists every problem as
    `source: field: problem`, one a line, and `problems` keeps them without the source."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {problem}" for problem in problems))
