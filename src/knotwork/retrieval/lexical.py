"""Small in-memory BM25 over candidate texts (scores normalised to [0, 1])."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "it", "its", "they", "them", "their", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "would", "could", "please", "tell", "know", "does"]
)


_SUFFIXES = ("ations", "ation", "ions", "ion", "ments", "ment", "ings", "ing", "ies", "ied", "ers",
             "er", "es", "ed", "ly", "s", "e")


# noun suffixes need a longer stem: "station" is not "st", "mention" not "m"
_MIN_STEM = {"ations": 3, "ation": 3, "ions": 3, "ion": 3, "ments": 3, "ment": 3}


def stem(word: str) -> str:
    """A light suffix stripper: cause/caused/causes → caus, uses/using/used → us."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM.get(suffix, 2):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=65_536)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def terms(text: str) -> list[str]:
    return list(_terms(text))


def bm25_scores(query: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    q = set(terms(query))
    docs = [terms(t) for t in texts]
    if not q or not docs:
        return [0.0] * len(texts)
    n = len(docs)
    avg = sum(len(d) for d in docs) / n or 1.0
    df = Counter(w for d in docs for w in set(d) if w in q)
    raw: list[float] = []
    for d in docs:
        tf = Counter(d)
        score = 0.0
        for w in q:
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                score += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avg))
        raw.append(score)
    top = max(raw)
    coverage = [len(q & set(d)) / len(q) for d in docs]
    if top <= 0:
        return [0.0] * len(texts)
    return [0.5 * (s / top) + 0.5 * c for s, c in zip(raw, coverage, strict=True)]
