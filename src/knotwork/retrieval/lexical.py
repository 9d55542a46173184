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


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light suffix stripper: cause/caused/causes → caus, uses/using/used → us."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM.get(suffix, 2):
            return word[: -len(suffix)]
    return word


# irregular verb forms, so "Why did they choose X?" meets "we chose X" ("choos" ≠ "chose")
_IRREGULAR: dict[str, str] = {
    form: base for base, forms in {
        "choose": "chose chosen", "make": "made", "run": "ran", "take": "took taken",
        "write": "wrote written", "build": "built", "lead": "led", "buy": "bought",
        "sell": "sold", "go": "went gone", "begin": "began begun", "break": "broke broken",
        "give": "gave given", "hold": "held", "keep": "kept", "leave": "left", "lose": "lost",
        "meet": "met", "pay": "paid", "send": "sent", "spend": "spent", "tell": "told",
        "think": "thought", "find": "found", "grow": "grew grown", "know": "knew known",
        "see": "saw seen", "come": "came", "become": "became", "bring": "brought",
        "catch": "caught", "drive": "drove driven", "fall": "fell fallen", "feel": "felt",
        "fly": "flew flown", "forget": "forgot forgotten", "freeze": "froze frozen",
        "rise": "rose risen", "speak": "spoke spoken", "steal": "stole stolen",
        "strike": "struck", "teach": "taught", "throw": "threw thrown",
        "understand": "understood", "win": "won", "withdraw": "withdrew withdrawn",
        "draw": "drew drawn",
    }.items() for form in forms.split()}


@lru_cache(maxsize=65_536)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(stem(_IRREGULAR.get(w, w)) for w in _WORD.findall(text.lower())
                 if w not in STOPWORDS)


def terms(text: str) -> list[str]:
    return list(_terms(text))


def term_set(*texts: str) -> set[str]:
    """The terms of these texts together (as of the texts joined by spaces), memoised per text."""
    out: set[str] = set()
    for text in texts:
        out.update(_terms(text))
    return out


def bm25_scores(query: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    return bm25_term_scores(query, [_terms(t) for t in texts], k1, b)


def bm25_with_context(query: str, texts: Sequence[str], contexts: Sequence[str]
                      ) -> tuple[list[float], list[float]]:
    """``bm25_scores(query, texts)`` and ``bm25_scores(query, [f"{t} {c}" ...])`` from the
    memoised terms of each text and each context (a text joined to its context by a space
    has exactly the terms of both)."""
    docs = [_terms(t) for t in texts]
    with_context = [d + _terms(c) if c else d for d, c in zip(docs, contexts, strict=True)]
    return bm25_term_scores(query, docs), bm25_term_scores(query, with_context)


def bm25_term_scores(query: str, docs: Sequence[Sequence[str]], k1: float = 1.2,
                     b: float = 0.75) -> list[float]:
    """BM25 of ``query`` over documents given as their :func:`terms`, normalised: half the
    score relative to the best, half the share of the query terms a document has."""
    q = set(_terms(query))
    if not q or not docs:
        return [0.0] * len(docs)
    n = len(docs)
    avg = sum(len(d) for d in docs) / n or 1.0
    present = [q.intersection(d) for d in docs]
    df = Counter(w for p in present for w in p)
    raw: list[float] = []
    for d, shared in zip(docs, present, strict=True):
        score = 0.0
        if shared:
            tf = Counter(w for w in d if w in shared)
            for w in q:  # the order of the original sum (equal scores stay equal)
                if w not in shared:
                    continue
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                score += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avg))
        raw.append(score)
    top = max(raw)
    if top <= 0:
        return [0.0] * len(docs)
    return [0.5 * (s / top) + 0.5 * len(shared) / len(q) for s, shared in zip(raw, present, strict=True)]


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of two texts' terms."""
    ta, tb = set(_terms(a)), set(_terms(b))
    return len(ta & tb) / (len(ta | tb) or 1)
