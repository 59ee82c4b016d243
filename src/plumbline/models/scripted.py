"""`scripted/oracle` and `scripted/weak`: offline, SCRIPTED Inspect models for SA Bench demos.

These are not language models. They recognise the SA Bench sample in the prompt (see
`plumbline.models.reference`) and answer by script (see `plumbline.models.policies`):

- `scripted/oracle` answers every sample from the reference data: the correct letters, the
  reference architecture answer, the reference CDK solution. It shows the ceiling the scorers
  allow, and that a perfect answer scores as expected.
- `scripted/weak` answers like a weak model, with seeded randomness: right about 55% of the time
  on the practice exam, a truncated reference on architecture tasks, and CDK apps that often fail
  to synthesize. Seeded from `GenerateConfig.seed` (default `DEFAULT_SEED`) and the prompt, so
  two runs with the same seed give the same answers, whatever order the samples run in.

Every output says it is scripted: the model name is `scripted/...`, and each `ModelOutput`'s
metadata carries `scripted: true`, the policy, the sample recognised and what the script did.
A prompt that is no SA Bench sample gets a reply saying so (which scores as a wrong answer).

    plumbline run sa-bench --model scripted/oracle --model scripted/weak
    inspect eval plumbline/suites/sa_bench/tasks.py@practice_exam --model scripted/weak
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from plumbline.models.policies import (
    Reply,
    oracle_architecture,
    oracle_cdk,
    oracle_exam,
    prompt_rng,
    weak_architecture,
    weak_cdk,
    weak_exam,
)
from plumbline.models.reference import (
    ArchitectureMatch,
    ExamMatch,
    Match,
    packaged_index,
    prompt_text,
)

PROVIDER = "scripted"
POLICIES = ("oracle", "weak")
DEFAULT_SEED = 42
"""The weak model's seed when the generation config sets none (plumbline's default seed)."""


def scripted_reply(policy: str, match: Match, seed: int, prompt: str) -> Reply:
    """The answer `policy` gives to the recognised sample."""
    if policy == "oracle":
        if isinstance(match, ExamMatch):
            return oracle_exam(match)
        if isinstance(match, ArchitectureMatch):
            return oracle_architecture(match)
        return oracle_cdk(match)
    rng = prompt_rng(seed, policy, prompt)
    if isinstance(match, ExamMatch):
        return weak_exam(match, rng)
    if isinstance(match, ArchitectureMatch):
        return weak_architecture(match, rng)
    return weak_cdk(match, rng)


def _approximate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedModelAPI(ModelAPI):
    """Inspect provider `scripted`: the SCRIPTED offline models `oracle` and `weak`.

    Answers only SA Bench prompts, from the packaged datasets; makes no network request and
    needs no API key. Token usage is an approximation (characters / 4), not a tokenizer count.
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's provider signature)
        **model_args: Any,
    ) -> None:
        if model_name not in POLICIES:
            names = ", ".join(f"{PROVIDER}/{policy}" for policy in POLICIES)
            raise ValueError(
                f"unknown scripted model {PROVIDER}/{model_name}; the scripted models are {names}"
            )
        if model_args:
            raise ValueError(
                f"{PROVIDER}/{model_name} takes no model arguments (got {', '.join(model_args)})"
            )
        super().__init__(model_name, base_url, api_key, [], config)
        self.policy = model_name

    def max_connections(self) -> int:
        # answers are computed locally in microseconds: no reason to throttle samples
        return 100

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        prompt = prompt_text(input)
        seed = config.seed if config.seed is not None else DEFAULT_SEED
        match = packaged_index().match(prompt)
        name = f"{PROVIDER}/{self.policy}"
        metadata: dict[str, Any] = {"scripted": True, "policy": self.policy}
        if match is None:
            content = (
                f"[{name} is a scripted model: this prompt is not an SA Bench sample, "
                "so it has no scripted answer.]"
            )
            metadata["sample"] = None
        else:
            reply = scripted_reply(self.policy, match, seed, prompt)
            content = reply.content
            metadata.update(sample=match.sample_id, behaviour=reply.behaviour)
            if self.policy != "oracle":
                metadata["seed"] = seed
        output = ModelOutput.from_content(model=name, content=content)
        output.metadata = metadata
        input_tokens = _approximate_tokens(prompt)
        output_tokens = _approximate_tokens(content)
        output.usage = ModelUsage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        )
        return output
