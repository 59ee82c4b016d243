"""Batched decoding on the real model (`plumbline.models.batching`): concurrent requests get
the tokens each would get alone from transformers' `generate`, greedy or seeded sampling.

Kept small (three requests, a few tokens): the model makes a few tokens/s on two cores.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from plumbline.models import local
from plumbline.models.local import GenerationCancelled, LocalEngine, shared_engine

# one xdist worker runs every real-model test (`--dist loadgroup`): one model load
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]

# different lengths, so the batch is left-padded
PROMPTS = (
    "Name one AWS storage service.",
    "What is Amazon SQS? Answer in one short sentence, please.",
    "Hi",
)
TOKENS = 6


@pytest.fixture(scope="module")
def engine() -> LocalEngine:
    return shared_engine()


def alone(engine: LocalEngine, prompt: str, temperature: float | None, seed: int) -> list[int]:
    """The tokens of transformers' generate on one request, seeded as the engine seeds."""
    import torch

    ids = engine.prompt_ids([{"role": "user", "content": prompt}])
    sampling: dict[str, Any] = {"do_sample": False, "temperature": None, "top_p": None}
    if temperature:
        sampling = {"do_sample": True, "temperature": temperature}
    torch.manual_seed(seed)
    with torch.inference_mode():
        output = engine.model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=TOKENS,
            pad_token_id=engine.tokenizer.eos_token_id,
            top_k=50 if temperature else None,
            **sampling,
        )
    return [int(token) for token in output[0][ids.shape[1] :]]


def together(engine: LocalEngine, temperature: float | None) -> list[Any]:
    """The engine's generations of every prompt, requested at the same moment."""
    start = threading.Barrier(len(PROMPTS))

    def one(index: int) -> Any:
        start.wait(timeout=30)
        messages = [{"role": "user", "content": PROMPTS[index]}]
        return engine.generate(
            messages, max_new_tokens=TOKENS, temperature=temperature, seed=100 + index
        )

    with ThreadPoolExecutor(len(PROMPTS)) as pool:
        return list(pool.map(one, range(len(PROMPTS))))


@pytest.mark.parametrize("temperature", [None, 0.8], ids=["greedy", "seeded-sampling"])
def test_concurrent_requests_get_the_tokens_each_gets_alone(
    engine: LocalEngine, temperature: float | None
) -> None:
    results = together(engine, temperature)
    for index, (prompt, result) in enumerate(zip(PROMPTS, results, strict=True)):
        expected = alone(engine, prompt, temperature, 100 + index)
        text = engine.tokenizer.decode(expected, skip_special_tokens=True).strip()
        assert (result.text, result.output_tokens) == (text, len(expected)), prompt
        assert result.seed == 100 + index
    assert not local._LIVE


def test_a_cancelled_request_does_not_disturb_the_one_beside_it(engine: LocalEngine) -> None:
    cancel = threading.Event()
    cancel.set()
    messages = [{"role": "user", "content": PROMPTS[0]}]
    with ThreadPoolExecutor(2) as pool:
        cancelled = pool.submit(
            engine.generate, messages, max_new_tokens=TOKENS, seed=1, cancel=cancel
        )
        kept = pool.submit(engine.generate, messages, max_new_tokens=TOKENS, seed=1)
        with pytest.raises(GenerationCancelled):
            cancelled.result()
        assert kept.result().text == together(engine, None)[0].text
    assert not local._LIVE


def test_every_forward_pass_runs_on_the_one_torch_thread(engine: LocalEngine) -> None:
    from plumbline.core import torch_thread

    threads: set[threading.Thread] = set()
    hook = engine.model.register_forward_pre_hook(
        lambda *_: threads.add(threading.current_thread())
    )
    try:
        results = together(engine, None)  # three caller threads
    finally:
        hook.remove()
    assert all(result.output_tokens > 0 for result in results)
    assert len(threads) == 1
    (thread,) = threads
    assert thread is not threading.current_thread()
    assert torch_thread.run(threading.current_thread) is thread


def test_skinny_products_change_no_bits_when_off_and_no_tokens_when_on(
    engine: LocalEngine,
) -> None:
    import torch

    from plumbline.core import torch_thread

    rows = torch.cat([engine.prompt_ids([{"role": "user", "content": p}])[:, :8] for p in PROMPTS])

    def logits(active: bool) -> Any:
        with torch.inference_mode(), engine._batcher.products.on(active):
            return engine.model(input_ids=rows).logits[:, -1]

    plain = torch_thread.run(logits, False)
    again = torch_thread.run(logits, False)
    skinny = torch_thread.run(logits, True)
    assert torch.equal(plain, again)
    # the copies are the same weights: the same next tokens, logits equal to float rounding
    assert torch.equal(plain.argmax(-1), skinny.argmax(-1))
    assert torch.allclose(plain, skinny, atol=1e-3, rtol=1e-4)
    assert not engine._batcher.products.active


def test_generate_from_inside_torch_work_is_refused_not_deadlocked(engine: LocalEngine) -> None:
    from plumbline.core import torch_thread

    messages = [{"role": "user", "content": PROMPTS[0]}]
    with pytest.raises(RuntimeError, match="cannot be called from the torch thread"):
        torch_thread.run(engine.generate, messages, max_new_tokens=2, seed=1)
    assert engine.generate(messages, max_new_tokens=2, seed=1).output_tokens > 0
