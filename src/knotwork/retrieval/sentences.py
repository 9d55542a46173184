"""Sentence splitting for evidence units: per line, then at sentence-final punctuation."""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[@#*-])")


_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Inc|Ltd|Co|Corp|vs|etc|e\.g|i\.e|approx|No|Fig)\.$"
)


def split_sentences(text: str) -> list[str]:
    """Every non-empty line, cut where a sentence ends and the next begins.

    Abbreviation-proof enough for retrieval: a wrong cut costs a little context,
    a missed cut keeps two sentences together; nothing is ever dropped.
    """
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        pieces = [p.strip() for p in _BOUNDARY.split(line) if p.strip()]
        merged: list[str] = []
        for piece in pieces:
            if merged and _ABBREVIATION.search(merged[-1]):
                merged[-1] = f"{merged[-1]} {piece}"
            else:
                merged.append(piece)
        out.extend(merged)
    return out


_MARKUP = re.compile(r"^(?:[-*#>•]+\s*)+")


def strip_markup(text: str) -> str:
    """A line without its list bullet, heading or quote marks."""
    return _MARKUP.sub("", text).strip()


def as_sentence(text: str) -> str:
    """The text with sentence-final punctuation, for joining into an answer."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def join_answer(parts: list[str]) -> str:
    """Evidence texts as one answer, each sentence once (a unit and its pair with the next
    sentence may both be chosen: "A. B." and "A." must not read "A. B. A.")."""
    seen: set[str] = set()
    out: list[str] = []
    for part in parts:
        for sentence in split_sentences(as_sentence(part)):
            key = re.sub(r"\W+", " ", sentence.lower()).strip()
            if key and key not in seen:
                seen.add(key)
                out.append(sentence)
    return " ".join(out)
