"""The answer guard (`models.answer_guard`) for the models an Inspect run creates itself.

`plumbline run` hands model names to Inspect's `eval_set`, which creates the models; this
Inspect hook puts the guard on the active model before its first call. It is registered when
this module is imported and does nothing until `enable_answer_guard()` (so importing plumbline
never changes another program's Inspect runs).
"""

from __future__ import annotations

from inspect_ai.hooks import BeforeModelGenerate, Hooks, hooks

from plumbline.core.answer_guard import install_answer_guard

_enabled = False


def enable_answer_guard() -> None:
    """Guard every model this process's Inspect runs call (from now on)."""
    global _enabled
    _enabled = True


@hooks(
    name="plumbline_answer_guard",
    description="A 200 answer that is not a chat completion becomes a provider error that "
    "keeps the provider's message (plumbline run).",
)
class AnswerGuardHooks(Hooks):
    """Installs the answer guard on the active model before it generates."""

    def enabled(self) -> bool:
        return _enabled

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        from inspect_ai.model import get_model

        try:
            model = get_model()
        except Exception:  # no active model here: nothing to guard
            return
        if str(model) == data.model_name:
            install_answer_guard(model)


__all__ = ["AnswerGuardHooks", "enable_answer_guard"]
