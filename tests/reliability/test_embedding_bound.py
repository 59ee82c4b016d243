"""Readers without bounds (issue 27): `reliability` on 100 MB responses peaked at about 6.5 GB,
tokenizing each whole response to embed its first 256 tokens. The embedder now cuts a text to
what the model can read first (the vectors are the model's own), and words are counted and
read one at a time instead of splitting a whole response into a list."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from plumbline.reliability.embeddings import CHARS_PER_TOKEN, Embedder
from plumbline.reliability.metrics import repetition_score, word_count


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


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "b", "c", " ", "\n", "\t", "\u00a0", "\x1c"])))
def test_word_statistics_read_word_by_word_equal_the_split_formulas(text: str) -> None:
    """The streaming word count and trigram repetition are CERT's `text.split()` formulas."""
    words = text.split()
    assert word_count(text) == len(words)
    if len(words) < 3:
        expected = 1.0
    else:
        counts = Counter(tuple(words[i : i + 3]) for i in range(len(words) - 2))
        expected = 1.0 - sum(1 for c in counts.values() if c > 1) / len(counts)
    assert repetition_score(text) == expected
