"""Inspect AI's private names plumbline uses: the probe's direct provider call, and its loader.

`Model.generate` around a provider records a transcript event, merges and copies the config,
wraps the call in a retry loop and a concurrency limiter, and checks sample limits and hooks:
several milliseconds of client CPU a trial that a probe does not use. The probe's direct call
(`probe.direct_call`) calls the `openai-api` provider (`OpenAICompatibleAPI`) itself, with the
config `Model` resolves, reads the answer with Inspect's own functions and raises a failure as
`Model.generate` raises it; everything it needs of Inspect's private modules is here.

When `ADAPTER` is not fast, the probe calls `Model.generate` (with its whole config on every
call, so an eval run earlier in the process cannot lend it retries), Inspect's rich tracebacks
stay, and `load_tasks` finds a user task through Inspect's public registry.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from plumbline.compat import Adapter, CheckedRange

ADAPTER = Adapter(
    name="inspect",
    distribution="inspect-ai",
    # the releases this module was run against by the tests; Inspect moves private modules
    # between minor releases, so the probe of the names below decides within the range
    checked=CheckedRange("0.3.285", "0.4"),
    names=(
        "inspect_ai.model._model:ModelGenerateError",
        "inspect_ai.model._model:Model._resolve_config",
        "inspect_ai.model._model:format_traceback",
        "inspect_ai.model._providers.openai_compatible:OpenAICompatibleAPI.generate",
        "inspect_ai.model._providers.openai_compatible:OpenAICompatibleAPI.completion_params",
        "inspect_ai.model._providers.openai_compatible:OpenAICompatibleAPI.max_tokens_for_config",
        "inspect_ai.model._providers.openai_compatible:OpenAICompatibleAPI.request_headers",
        "inspect_ai.model._providers.openai_compatible:"
        "OpenAICompatibleAPI.chat_choices_from_completion",
        "inspect_ai.model._providers.openai_compatible:OpenAICompatibleAPI.handle_bad_request",
        "inspect_ai.model._providers.openai_compatible:OpenAICompatibleAPI.handle_stream_error",
        "inspect_ai.model._model_output:as_stop_reason",
        "inspect_ai.model._openai:OpenAIResponseError",
        "inspect_ai.model._openai:model_output_from_openai",
        "inspect_ai._util.http:status_code_of",
        "inspect_ai.model._generate_config:active_generate_config_context_var",
        "inspect_ai._eval.loader:load_tasks",
    ),
)


def direct_provider(model: Any) -> Any | None:
    """The provider of `model` when the probe may call it directly: exactly Inspect's
    `OpenAICompatibleAPI` (subclasses may rely on the `Model` layer) on chat completions, and
    the adapter fast; None otherwise."""
    if not ADAPTER.fast:
        return None
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

    api = getattr(model, "api", None)
    if type(api) is not OpenAICompatibleAPI or api.responses_api:
        return None
    return api


def resolved_config(model: Any) -> Any:
    """The config `Model.generate` would call its provider with (no config given)."""
    return model._resolve_config(None)


def stop_reason(finish_reason: str | None) -> Any:
    """Inspect's stop reason for a chat completion's `finish_reason`."""
    from inspect_ai.model._model_output import as_stop_reason

    return as_stop_reason(finish_reason)


def output_from_completion(api: Any, completion: Any) -> Any:
    """Inspect's `ModelOutput` of a chat completion, as `OpenAICompatibleAPI.generate` builds it
    (an answer that is not a `ChatCompletion` raises Inspect's own error)."""
    from inspect_ai.model._openai import OpenAIResponseError, model_output_from_openai
    from openai.types.chat import ChatCompletion

    if not isinstance(completion, ChatCompletion):
        raise OpenAIResponseError(
            "server_error", f"Unexpected non-ChatCompletion response: {completion!r}"
        )
    choices = api.chat_choices_from_completion(completion, [])
    return model_output_from_openai(completion, choices)


def generate_error(output: Exception, request_text: str) -> Exception:
    """The error `Model.generate` raises for a provider error it was returned
    (inspect_ai/model/_model.py)."""
    from inspect_ai._util.http import status_code_of
    from inspect_ai.model._model import ModelGenerateError

    return ModelGenerateError(
        f"\nRequest:\n{request_text}\n\n{output!r}",
        status_code=status_code_of(output),
        provider_message=str(output),
    )


@contextlib.contextmanager
def outside_any_eval() -> Iterator[None]:
    """Inspect's model calls made outside an eval take the retries, timeout, connection limit
    and cache of the last eval run in the same context (`Model._resolve_config` merges the
    active generate config, which `eval_set` leaves set behind it); inside this block they
    take only their own. On the public path it does nothing: the probe then passes its whole
    config with every `Model.generate` call, which is merged last."""
    if not ADAPTER.fast:
        yield
        return
    from inspect_ai.model import GenerateConfig
    from inspect_ai.model._generate_config import active_generate_config_context_var

    token = active_generate_config_context_var.set(GenerateConfig())
    try:
        yield
    finally:
        active_generate_config_context_var.reset(token)


def use_plain_tracebacks(render: Callable[..., tuple[str, str]]) -> bool:
    """Make Inspect render a failed call's traceback for its transcript with `render`
    (Inspect's rich rendering costs about a second of CPU per failure, on the event loop);
    False when the adapter is not fast."""
    if not ADAPTER.fast:
        return False
    module = sys.modules.get("inspect_ai.model._model")
    if module is None or not hasattr(module, "format_traceback"):
        return False
    setattr(module, "format_traceback", render)  # noqa: B010
    return True


def load_tasks(spec: str) -> list[Any]:
    """The tasks of `spec` (``file.py``, ``file.py@name`` or a registered name), as
    `inspect eval SPEC` loads them; through Inspect's public registry when the adapter is not
    fast. Raises what the task's own code raises."""
    if ADAPTER.fast:
        from inspect_ai._eval.loader import load_tasks as inspect_load_tasks

        tasks: list[Any] = inspect_load_tasks([spec])
        return tasks
    return _load_tasks_publicly(spec)


def _load_tasks_publicly(spec: str) -> list[Any]:
    from inspect_ai import list_tasks
    from inspect_ai.util import registry_create

    file, _, name = spec.partition("@")
    path = Path(file)
    if not (path.suffix == ".py" and path.is_file()):
        return [registry_create("task", spec)]
    folder = path.resolve().parent
    # the folder given: list_tasks's default is the working directory when Inspect was imported
    names = [name] if name else [info.name for info in list_tasks(path.name, root_dir=folder)]
    module_name = f"plumbline_user_task_{abs(hash(path.resolve()))}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(folder))  # as Inspect loads it: its siblings import
    try:
        module_spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    if not names:
        raise ValueError(f"{path}: no @task function found")
    by_name = _registered_tasks(module)
    tasks: list[Any] = []
    for task_name in names:
        function = by_name.get(task_name)
        if function is None:
            raise ValueError(f"{path}: no task named {task_name!r}")
        tasks.append(function())
    return tasks


def _registered_tasks(module: Any) -> dict[str, Callable[[], Any]]:
    """The module's `@task` functions by their registered name (``@task(name=...)`` renames)."""
    from inspect_ai.util import registry_info

    found: dict[str, Callable[[], Any]] = {}
    for value in vars(module).values():
        if not callable(value):
            continue
        try:
            info = registry_info(value)
        except ValueError:  # not a registered object
            continue
        if info.type == "task":
            found[info.name] = value
    return found


__all__ = [
    "ADAPTER",
    "direct_provider",
    "generate_error",
    "load_tasks",
    "output_from_completion",
    "outside_any_eval",
    "resolved_config",
    "stop_reason",
    "use_plain_tracebacks",
]
