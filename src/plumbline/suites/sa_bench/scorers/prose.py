"""Words, stems and reasoning sentences of an answer's prose (the heuristic scorer's measures)."""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "either",
        "else",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "via",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "you",
        "your",
        "yours",
        "one",
        "two",
        "three",
        "use",
        "used",
        "uses",
        "using",
        "need",
        "needs",
        "each",
        "per",
        "may",
        "might",
        "must",
        "shall",
    ]
)


_WORD = re.compile(r"[a-z0-9]+")


_SUFFIXES = ("ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "s", "ly", "er")


def stem(word: str) -> str:
    """A light suffix-stripping stem ("stores", "stored", "storing" -> "stor")."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words of `text`."""
    return _WORD.findall(text.lower())


def content_stems(text: str) -> set[str]:
    """Stems of the words of `text` that are not stopwords."""
    return {stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1}


_DEFINITION = re.compile(
    r"^[\s>*#•\-\d.)]*(?P<head>[^:–—\n]{2,60}?)\*{0,2}\s*(?::|\s[-–—]\s|—|–)\s*(?P<body>\S.*)$"
)


def is_reasoning_sentence(sentence: str) -> bool:
    """A sentence that reads as prose, or a definition line, rather than a list of keywords.

    Prose: at least 5 words, at least two of them function words, making up at least 15%.
    Definition line: `- **Amazon S3**: stores the uploaded images`, a head of at most 60
    characters, a separator (colon or spaced dash) and an explanation of at least 3 words.
    """
    tokens = words(sentence)
    function_words = sum(1 for t in tokens if t in STOPWORDS)
    if len(tokens) >= 5 and function_words >= 2 and function_words / len(tokens) >= 0.15:
        return True
    definition = _DEFINITION.match(sentence.strip())
    return definition is not None and len(words(definition.group("body"))) >= 3
