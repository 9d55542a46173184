"""The global answer's composition: a dense list of distinct key points, not generic prose.

A corpus-wide answer is read from the top: its first lines should carry the entities,
decisions, figures and dates that answer the question, each once. The question-wide pool
(:mod:`knotwork.retrieval.global_pool`) gives ranked key points; :func:`compose` picks from
it greedily, weighing each point's relevance by the *new* specifics it adds (names, codes,
numbers, dates not yet said and not merely repeating the question) per word, so a sentence
that restates what an earlier point or the question already said, or a long sentence with
one fact, yields its place to a short one with three. No LLM: the specifics are surface features (capitalised words inside a sentence,
digits), which is what a reader scans an overview for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from knotwork.retrieval.global_rank import Candidate
from knotwork.retrieval.lexical import STOPWORDS

# a number, a date or a code (19.02.2024, 1,140, 3.1%, RFC-0042, Q4/2024, v2)
_FIGURE = re.compile(r"(?<![\w])(?:[A-Za-z]{1,6}[-/])?\d[\d.,:/%-]*[A-Za-z]{0,3}(?![\w])")
# a capitalised word or an acronym (not the first word of the sentence: capitalised anyway)
_NAME = re.compile(r"(?<![\w'’-])[A-Z][\w'’&-]*[A-Za-z0-9]")
_WORD = re.compile(r"\S+")
_SPEAKER = re.compile(r"^[A-Z][\w'’.-]*(?:\s[A-Z][\w'’.-]*){0,2}:\s+")

QUESTION_TOKEN_WEIGHT = 0.3  # a specific the question already names tells the reader little
MIN_WORDS = 4


def specifics(text: str) -> set[str]:
    """The specifics of a text: capitalised words (but its first word) and figures, lowered."""
    body = _SPEAKER.sub("", text.strip())
    out = {m.group(0).lower().rstrip(".,") for m in _FIGURE.finditer(body)}
    names = list(_NAME.finditer(body))
    for m in names:
        if m.start() == 0 and m.group(0).lower() in STOPWORDS:
            continue  # "The", "After" opening the sentence
        word = m.group(0).lower()
        if word not in STOPWORDS:
            out.add(word)
    return out


def words(text: str) -> int:
    return len(_WORD.findall(text))


def gain(point: Candidate, said: set[str], asked: set[str]) -> float:
    """The new specifics a point adds, per square root of its length in words."""
    new = specifics(point.text) - said
    weight = sum(QUESTION_TOKEN_WEIGHT if s in asked else 1.0 for s in new)
    return weight / math.sqrt(max(words(point.text), MIN_WORDS))


def compose(pool: Sequence[Candidate], question: str, budget_words: int, max_points: int,
            density_weight: float = 0.5) -> list[Candidate]:
    """The key points in answer order: greedily the point with the best relevance times
    (1 + ``density_weight`` × new specifics per √word), until ``budget_words`` are used
    (then up to ``max_points`` in all, in relevance order, for the reader who reads on).
    A point adding no new specific and no new word is never picked."""
    asked = specifics(question) | {w.lower() for w in re.findall(r"[A-Za-z0-9][\w-]+", question)}
    said: set[str] = set()
    chosen: list[Candidate] = []
    left = [p for p in pool if words(p.text) >= MIN_WORDS]
    used = 0
    while left and len(chosen) < max_points and used < budget_words:
        best = max(left, key=lambda p: (p.score * (1.0 + density_weight * gain(p, said, asked)),
                                        -len(p.text)))
        left.remove(best)
        if not specifics(best.text) - said and chosen:
            continue
        chosen.append(best)
        said |= specifics(best.text)
        used += words(best.text)
    return chosen
