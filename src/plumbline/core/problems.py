"""The errors of an input that cannot be used, carrying every problem found in it."""

from __future__ import annotations

from collections.abc import Sequence


class ProblemsError(ValueError):
    """An input (a file, a result) that cannot be used; the message lists every problem as
    `source: field: problem`, one a line, and `problems` keeps them without the source (the
    lines as given when there is no one `source`: each says where itself)."""

    def __init__(self, source: str | None, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        prefix = "" if source is None else f"{source}: "
        super().__init__("\n".join(f"{prefix}{problem}" for problem in self.problems))


class ProblemLinesError(ProblemsError):
    """Inputs that cannot be used; `problems` are lines that each say where (`file:line:
    field: problem`), and the message is those lines."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(None, problems)
