"""Token-based chunking with character offsets kept.

Tokens are words and punctuation marks (a close, model-free stand-in for sub-word
tokens). Windows of ``max_tokens`` overlap by ``overlap`` tokens; a window end is pulled
back to a paragraph or sentence boundary when one lies in its last fifth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class TextSpan:
    index: int
    start: int
    end: int
    text: str
    token_count: int


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN.finditer(text))


def chunk_text(text: str, max_tokens: int = 800, overlap: int = 100) -> list[TextSpan]:
    if max_tokens <= 0 or overlap < 0 or overlap >= max_tokens:
        raise ValueError("chunking needs max_tokens > overlap >= 0")
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    if not spans:
        return []
    chunks: list[TextSpan] = []
    first = 0
    while first < len(spans):
        last = min(first + max_tokens, len(spans)) - 1
        if last < len(spans) - 1:
            last = _boundary(text, spans, first, last)
        start, end = spans[first][0], spans[last][1]
        chunks.append(TextSpan(len(chunks), start, end, text[start:end], last - first + 1))
        if last >= len(spans) - 1:
            break
        first = max(last + 1 - overlap, first + 1)
    return chunks


def _boundary(text: str, spans: list[tuple[int, int]], first: int, last: int) -> int:
    """Latest token index in the window's last fifth that ends a paragraph or sentence."""
    floor = first + (last - first) * 4 // 5
    best_sentence = -1
    for i in range(last, floor, -1):
        end = spans[i][1]
        gap = text[end : spans[i + 1][0]] if i + 1 < len(spans) else ""
        if "\n\n" in gap:
            return i
        if best_sentence < 0 and text[spans[i][0]:end] in {".", "!", "?"} and gap:
            best_sentence = i
    return best_sentence if best_sentence >= 0 else last
