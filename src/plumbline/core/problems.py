"""The errors of an input that cannot be used, carrying every problem found in it."""

from __future__ import annotations

from collections.abc import Sequence


class ProblemsError(ValueError):
    """An input (a file, a result) that cannot be used; the message lists every problem as
    `source: field: problem`, one a line, and `problems` keeps them without the source."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {problem}" for problem in problems))


class ProblemLinesError(ValueError):
    """Inputs that cannot be used; `problems` are lines that each say where (`file:line:
    field: problem`), and the message is those lines."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))
