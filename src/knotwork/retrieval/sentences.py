"""Sentence splitting for evidence units: per line, then at sentence-final punctuation."""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[@#*-])")


_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Inc|Ltd|Co|Corp|vs|etc|e\.g|i\.e|approx|No|Fig)\.$"
)
# an initial before a surname ("reported to K. Varga"): no sentence ends there
_INITIAL = re.compile(r"(?:^|[\s(])[A-Z]\.$")
_SURNAME = re.compile(r"^(?:[A-Z]\.(?:\s|$)|[A-Z][a-z\u00c0-\u024f'’-]+\b(?![:]))")
# capitalised words that begin sentences rather than surnames
_STARTERS = frozenset(
    re.findall(
        r"\w+",
        "the a an this that these those then there here it its he she they we i you our my "
        "his her their but and or so yet also now next after before when while if as in on at for from "
        "to with by of no not all some each every one two see note please thanks thank yes ok",
    )
)


def _initial_then_surname(before: str, piece: str) -> bool:
    if not (_INITIAL.search(before) and _SURNAME.match(piece)):
        return False
    return piece.split(maxsplit=1)[0].rstrip(".,;:!?").lower() not in _STARTERS


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
            if merged and (
                _ABBREVIATION.search(merged[-1]) or _initial_then_surname(merged[-1], piece)
            ):
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
