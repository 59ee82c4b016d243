"""Registers plumbline's Inspect model providers (loaded through the `inspect_ai` entry point).

Kept import-light, like Inspect's own provider registry: the implementation is imported only
when a `scripted/...` or `plumbline/...` model is created.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="scripted")
def scripted() -> type[ModelAPI]:
    """The SCRIPTED offline models `scripted/oracle` and `scripted/weak` (not language models)."""
    from plumbline.models.scripted import ScriptedModelAPI

    return ScriptedModelAPI


@modelapi(name="plumbline")
def plumbline() -> type[ModelAPI]:
    """The embedded real model `plumbline/smollm2` (SmolLM2-135M-Instruct, in process, CPU)."""
    from plumbline.models.smollm2 import SmolLM2API

    return SmolLM2API
