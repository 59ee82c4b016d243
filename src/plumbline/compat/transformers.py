"""transformers' private names plumbline uses: the sampling defaults `generate` applies.

The embedded model (`models.local`) samples as `model.generate` would, so it resolves top-k and
top-p the way `generate` does: the model's generation config, else transformers' defaults for
unset values, which transformers keeps in a private static method. When `ADAPTER` is not fast,
the defaults its documentation gives (top-k 50, top-p 1.0) stand in.
"""

from __future__ import annotations

from typing import Any

from plumbline.compat import Adapter, CheckedRange

#: `GenerationConfig`'s documented defaults of the sampling settings plumbline resolves.
DOCUMENTED_DEFAULTS: dict[str, Any] = {"top_k": 50, "top_p": 1.0}

ADAPTER = Adapter(
    name="transformers",
    distribution="transformers",
    checked=CheckedRange("5.24.0", "6"),
    names=("transformers:GenerationConfig._get_default_generation_params",),
)


def generation_defaults() -> dict[str, Any]:
    """The values `generate` uses for settings neither the model nor the caller set."""
    if not ADAPTER.fast:
        return dict(DOCUMENTED_DEFAULTS)
    from transformers import GenerationConfig

    defaults: dict[str, Any] = GenerationConfig._get_default_generation_params()
    return defaults


__all__ = ["ADAPTER", "DOCUMENTED_DEFAULTS", "generation_defaults"]
