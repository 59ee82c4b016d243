"""Registers plumbline's Inspect model providers (loaded through the `inspect_ai` entry point).

Kept import-light, like Inspect's own provider registry: the implementation is imported only
when a `scripted/...` model is created.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="scripted")
def scripted() -> type[ModelAPI]:
    """The SCRIPTED offline models `scripted/oracle` and `scripted/weak` (not language models)."""
    from plumbline.models.scripted import ScriptedModelAPI

    return ScriptedModelAPI
