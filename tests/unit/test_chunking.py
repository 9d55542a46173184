"""Token chunking: offsets, overlap, budget, boundary preference, argument checks."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from knotwork.ingestion.chunking import chunk_text, count_tokens

_TOKEN = re.compile(r"\w+|[^\w\s]")


def _tokens(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _numbered_words(n: int) -> str:
    # no punctuation at all, so no sentence boundary can pull a window back
    return " ".join(f"w{i}" for i in range(n))


def test_count_tokens_counts_words_and_punctuation() -> None:
    assert count_tokens("Alice Chen leads Project Atlas.") == 6
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("   ") == 0


def test_empty_and_whitespace_text_give_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text("  \n\n\t ") == []


def test_short_text_is_one_chunk_with_exact_offsets() -> None:
    text = "  Alice Chen leads Project Atlas.  \n"
    chunks = chunk_text(text, max_tokens=50, overlap=5)
    assert len(chunks) == 1
    only = chunks[0]
    assert only.index == 0
    assert (only.start, only.end) == (2, text.index(".") + 1)  # surrounding whitespace trimmed
    assert only.text == "Alice Chen leads Project Atlas."
    assert only.token_count == 6


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (-1, 0), (10, -1), (10, 10), (5, 7)])
def test_invalid_arguments_raise(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_text("some text here", max_tokens=max_tokens, overlap=overlap)


def test_offsets_slice_back_to_the_chunk_text_and_budget_is_respected() -> None:
    text = (
        "Alice Chen leads Project Atlas. The Billing Service depends on Kafka!\n\n"
        "Bob Smith works at Globex Corp; he reports to Sarah Lin? Yes.\n" * 12
    )
    chunks = chunk_text(text, max_tokens=23, overlap=4)
    assert len(chunks) > 5
    for i, c in enumerate(chunks):
        assert c.index == i
        assert text[c.start : c.end] == c.text
        assert c.token_count == count_tokens(c.text)
        assert 0 < c.token_count <= 23
    assert chunks[0].start == 0
    assert chunks[-1].end == len(text.rstrip())


def test_overlap_is_exactly_honoured_without_boundaries() -> None:
    text = _numbered_words(100)
    spans = _tokens(text)
    chunks = chunk_text(text, max_tokens=20, overlap=5)
    # windows of 20 tokens, each starting 15 tokens after the previous one
    assert [c.token_count for c in chunks[:-1]] == [20] * (len(chunks) - 1)
    for prev, nxt in pairwise(chunks):
        prev_tokens = [s for s in spans if prev.start <= s[0] < prev.end]
        next_tokens = [s for s in spans if nxt.start <= s[0] < nxt.end]
        shared = set(prev_tokens) & set(next_tokens)
        assert len(shared) == 5
        assert prev_tokens[-5:] == next_tokens[:5]


def test_every_token_is_covered_and_nothing_is_lost() -> None:
    text = _numbered_words(137)
    chunks = chunk_text(text, max_tokens=30, overlap=7)
    covered = {s for c in chunks for s in _tokens(text) if c.start <= s[0] < c.end}
    assert covered == set(_tokens(text))
    assert chunks[-1].text.endswith("w136")


def test_zero_overlap_chunks_tile_the_text() -> None:
    text = _numbered_words(60)
    chunks = chunk_text(text, max_tokens=20, overlap=0)
    assert [c.token_count for c in chunks] == [20, 20, 20]
    for prev, nxt in pairwise(chunks):
        assert text[prev.end : nxt.start].strip() == ""  # adjacent, no shared token


def test_window_end_prefers_a_sentence_end_in_its_last_fifth() -> None:
    # 17 words + "." = 18 tokens, then more words: a 20-token window should stop at the "."
    first = " ".join(f"a{i}" for i in range(17)) + "."
    text = first + " " + _numbered_words(40)
    chunks = chunk_text(text, max_tokens=20, overlap=2)
    assert chunks[0].text == first
    assert chunks[0].token_count == 18


def test_window_end_prefers_a_paragraph_break_over_a_later_sentence_end() -> None:
    # last fifth of a 20-token window: token indices 16..19
    para = " ".join(f"p{i}" for i in range(17))  # tokens 0..16, then a paragraph break
    tail = "b0. " + _numbered_words(40)  # a sentence end at token 18, later in the window
    text = para + "\n\n" + tail
    chunks = chunk_text(text, max_tokens=20, overlap=2)
    assert chunks[0].text == para
    assert chunks[0].token_count == 17


def test_boundary_outside_the_last_fifth_is_ignored() -> None:
    # the only sentence end is early in the window: the window stays full length
    text = "x1 x2. " + _numbered_words(60)
    chunks = chunk_text(text, max_tokens=20, overlap=2)
    assert chunks[0].token_count == 20


def test_progress_is_guaranteed_even_with_large_overlap() -> None:
    text = _numbered_words(50)
    chunks = chunk_text(text, max_tokens=10, overlap=9)
    starts = [c.start for c in chunks]
    assert starts == sorted(set(starts))  # strictly increasing: no infinite loop, no repeats
    assert chunks[-1].text.endswith("w49")
