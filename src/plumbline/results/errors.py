"""The one error of reading a result document: every problem as a `field: why` line."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError


class ResultDocumentError(ValueError):
    """A document that is not a result of its kind; `problems` are `field: why` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def validation_problems(error: ValidationError) -> list[str]:
    """The first 20 problems pydantic found, as `field: why` lines."""
    return [
        f"{'.'.join(str(part) for part in problem['loc']) or 'document'}: {problem['msg']}"
        for problem in error.errors()[:20]
    ]


def validated(model: type[BaseModel], document: Any) -> Any:
    """`document` as `model`; `ResultDocumentError` listing why it is not one."""
    try:
        return model.model_validate(document)
    except ValidationError as error:
        raise ResultDocumentError(validation_problems(error)) from None
