"""Readers without bounds (issue 27): `reliability` on 100 MB responses peaked at about 6.5 GB,
tokenizing each whole response to embed its first 256 tokens. The embedder now cuts a text to
what the model can read first; the vectors are the model's own."""

from __future__ import annotations

import numpy as np

from plumbline.reliability.embeddings import CHARS_PER_TOKEN, Embedder


def test_a_long_text_is_cut_to_what_the_model_reads_with_the_same_vector() -> None:
    embedder = Embedder()
    window = embedder.model.max_seq_length
    words = " ".join(f"word{i % 97} and more text" for i in range(2_000))
    assert len(words) > window * CHARS_PER_TOKEN
    cut = embedder.readable_part(words)
    assert len(cut) == window * CHARS_PER_TOKEN and words.startswith(cut)
    ours = embedder.encode([words])
    theirs = embedder.model.encode([words], convert_to_numpy=True, show_progress_bar=False)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    short = "a short answer."
    assert embedder.readable_part(short) == short
