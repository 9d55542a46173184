"""'Which two tests failed in the first run?', 'What were the three findings of the audit?':
a question that asks for a known number of items.

Pages keep such items as the bullets or table rows of one block under a heading ("## Run 1
failures", "## Findings"); each item is a sentence of its own, and local search ranks one of them
first and the others far below, so the answer shows one item. When the question states how
many items it asks for, the answer is instead the block, in the pages the best candidates come
from, that holds exactly that many items and whose heading (its lead-in line, or a table's first
column) shares the most words with the question, beyond the page's title: every item, each
cited. The wording rules are data: :data:`COUNT_WORDS`, :data:`_ASKS_COUNT`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from knotwork.domain.models import Episode
from knotwork.retrieval.lexical import term_set

__all__ = ["COUNT_WORDS", "ItemBlock", "asked_count", "asks_plural", "best_block", "blocks",
           "matching_rows"]

COUNT_WORDS: dict[str, int] = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "both": 2,
}
# "Which two …", "What were the three …", "List the four …", "Name both …"; not "Which of the
# two …" (one of them) and not a number further on ("When did the two teams merge?")
_ASKS_COUNT = re.compile(
    r"^\s*(?:which|what|who|list|name|give)\b(?:\s+(?!of\b)[\w'’-]+){0,3}?\s+"
    r"(?P<n>two|three|four|five|six|seven|eight|nine|ten|both|[2-9]|10)\s+[A-Za-z]", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<text>.+)$")
# a table row as ingestion writes it: "Key: value; Key: value; …" (two pairs at least)
_ROW = re.compile(r"^\s*(?P<key>[^:;]{1,40}):\s*[^;]*(?:;\s*[^:;]{1,40}:\s*[^;]*)+$")
# "Which cloud vendors are …", "What are the services …": a plural noun within the first words
# (the plural noun followed by a verb: "Which company hosts X" is no list)
_ASKS_PLURAL = re.compile(
    r"^\s*(?:which|what)\s+(?:(?:are|were)\s+the\s+(?:[\w'’-]+\s+){0,2}?[a-z][a-z-]*[^s\W]s\b"
    r"|(?:[\w'’-]+\s+){0,2}?[a-z][a-z-]*[^s\W]s\s+(?:are|were|do|did|does|have|had|has|can|will)\b)",
    re.IGNORECASE)
_CELL = re.compile(r"(?:^|;)\s*(?P<key>[^:;]{1,40}):\s*(?P<value>[^;]*)")
_MIN_VALUE = 3  # a cell value this long at least filters rows ("Critical", not "1")
_QUESTION_WORDS = frozenset({"list", "name", "give", "first", "last"})
_MIN_PREFIX = 4  # "failed" meets "failures": a shared start this long is the same word


@dataclass
class ItemBlock:
    """The consecutive bullets or table rows of one episode under one heading."""

    episode_id: str
    heading: str
    lead: str  # the line just before the items under the heading, if any
    kind: str  # "bullet" or "row:<first column>"
    items: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return " ".join([self.heading, self.lead, self.kind.removeprefix("row:")
                         if self.kind.startswith("row:") else ""])


def asked_count(question: str) -> int | None:
    """How many items the question asks for, or None when it states no number."""
    m = _ASKS_COUNT.match(question)
    if m is None:
        return None
    word = m.group("n").lower()
    return COUNT_WORDS.get(word) or int(word)


def asks_plural(question: str) -> bool:
    """Whether the question asks "which …s" / "what are the …s" (a list of unknown length)."""
    return _ASKS_PLURAL.match(question) is not None


def _cells(row: str) -> list[tuple[str, str]]:
    return [(m.group("key").strip(), m.group("value").strip()) for m in _CELL.finditer(row)]


def blocks(episode: Episode) -> list[ItemBlock]:
    """The item blocks of an episode's text, in order."""
    out: list[ItemBlock] = []
    heading, lead = "", ""
    current: ItemBlock | None = None
    for line in episode.content.splitlines():
        if not line.strip():
            continue
        if (h := _HEADING.match(line)) is not None:
            heading, lead, current = h.group("text"), "", None
            continue
        bullet, row = _BULLET.match(line), _ROW.match(line)
        if bullet is None and row is None:
            lead, current = line.strip(), None
            continue
        kind = "bullet" if bullet is not None else f"row:{row.group('key').strip()}"  # type: ignore[union-attr]
        text = bullet.group("text").strip() if bullet is not None else line.strip()
        if current is None or current.kind != kind:
            current = ItemBlock(episode.id, heading, lead, kind)
            out.append(current)
        current.items.append(text)
    return out


def _shares(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= _MIN_PREFIX and (a.startswith(b) or b.startswith(a)))


def _title(episode: Episode) -> str:
    first = episode.content.lstrip().split("\n", 1)[0]
    return f"{episode.name} {first if first.startswith('#') else ''}"


def best_block(question: str, episodes: Sequence[Episode]) -> ItemBlock | None:
    """The block of exactly the asked number of items whose heading, lead-in line or first
    column shares the most question words (not counting the page title's words); ties go to
    the earlier episode (the better ranked source). None: no number asked, or no such block."""
    count = asked_count(question)
    if count is None:
        return None
    asked = term_set(question) - _QUESTION_WORDS - {w for w, n in COUNT_WORDS.items() if n == count}
    best: tuple[int, ItemBlock] | None = None
    for episode in episodes:
        title = term_set(_title(episode))
        wanted = {q for q in asked if not any(_shares(q, t) for t in title)}
        for block in blocks(episode):
            if len(block.items) != count:
                continue
            label = term_set(block.label)
            shared = sum(1 for q in wanted if any(_shares(q, t) for t in label))
            if shared and (best is None or shared > best[0]):
                best = (shared, block)
    return best[1] if best is not None else None


def _states(question: str, value: str) -> bool:
    return len(value) >= _MIN_VALUE and not value.isdigit() and re.search(
        r"(?<!\w)" + re.escape(value.lower()) + r"(?!\w)", question.lower()) is not None


def matching_rows(question: str, episodes: Sequence[Episode]) -> ItemBlock | None:
    """"Which vendors are rated 'Critical'?": the rows of a table (in the best
    candidates' pages) that hold a cell value the question states, when some rows of the
    table hold it and others do not (as many as the question asks for, if it says), and the
    table's heading, lead-in line or first column shares a question word beyond the page
    title. A block of just those rows, or None."""
    if not asks_plural(question):
        return None
    count = asked_count(question)  # "Which two vendors are …": exactly that many rows
    asked = term_set(question) - _QUESTION_WORDS
    for episode in episodes:
        title = term_set(_title(episode))
        wanted = {q for q in asked if not any(_shares(q, t) for t in title)}
        for block in blocks(episode):
            if not block.kind.startswith("row:") or len(block.items) < 2:
                continue
            if not any(any(_shares(q, t) for t in term_set(block.label)) for q in wanted):
                continue
            kept = [row for row in block.items
                    if any(_states(question, value) for _, value in _cells(row))]
            if 0 < len(kept) < len(block.items) and count in (None, len(kept)):
                return ItemBlock(block.episode_id, block.heading, block.lead, block.kind, kept)
    return None
