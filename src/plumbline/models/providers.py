"""plumbline's `inspect_ai` entry point: registers its model providers, and (through
`plumbline.inspect_registry`) its tasks, scorers and metrics under `plumbline/...`.

Kept import-light, like Inspect's own provider registry: implementations are imported only
when a `scripted/...` or `plumbline/...` model, a task or a scorer is created.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi

from plumbline import inspect_registry as inspect_registry  # tasks, scorers, metrics


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
