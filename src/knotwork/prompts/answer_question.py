"""A question + numbered evidence -> a short plain-text answer citing the evidence as [n].

The reply is free text (streamed, no JSON schema): :func:`parse` / :class:`CitationFilter`
turn it into the typed ``Output``, keeping only citation markers whose number was given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ports import ChatMessage
from knotwork.prompts.base import cut_list, one_line, system, user

NAME = "answer_question"
VERSION = "1"

MAX_ITEMS = 20
MAX_ITEM_CHARS = 500


class ContextItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1)  # how the answer cites it: [number]
    text: str = Field(min_length=1)  # a fact sentence or a source passage
    source: str = ""  # the document's title
    date: str | None = None  # when the source was written (ISO date)


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    items: list[ContextItem] = Field(min_length=1, max_length=MAX_ITEMS)
    as_of: str | None = None  # the answer describes this point in time


class Output(BaseModel):
    answer: str  # plain text; every [n] in it is a given item's number
    # in order of use
    cited: Annotated[list[int], cut_list(MAX_ITEMS), Field(max_length=MAX_ITEMS)] = Field(
        default_factory=list
    )


_SYSTEM = """
You answer questions about a company from numbered evidence taken from its documents and its
knowledge graph. Use only the evidence; do not add knowledge of your own. After each claim,
cite the numbers of the evidence it rests on in square brackets, e.g. [2] or [1][3]. Answer in
one to four plain sentences (a short list only when the question asks for several things),
with no preamble and no heading. If the evidence does not answer the question, say so in one
sentence.
"""


def render(data: Input) -> list[ChatMessage]:
    lines = []
    for item in data.items:
        where = ", ".join(p for p in (item.source.strip(), item.date or "") if p)
        lines.append(
            f"[{item.number}] {one_line(item.text, MAX_ITEM_CHARS)}"
            + (f" ({where})" if where else "")
        )
    when = f"\n\nAnswer as of {data.as_of}." if data.as_of else ""
    return [
        system(_SYSTEM),
        user("Evidence:\n" + "\n".join(lines) + f"\n\nQuestion: {data.question.strip()}" + when),
    ]


# --------------------------------------------------------------------------- citations

_MARKER = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
_PARTIAL = re.compile(r"\[[\d\s,;]{0,24}\Z")  # may still become a marker
_NUMBERS = re.compile(r"\d+")


class CitationFilter:
    """Cleans a streamed answer delta by delta: a citation marker is passed on once it is
    complete and only with the numbers in ``valid`` ("[2, 9]" -> "[2]"; "[9]" and the space
    before it are dropped). Held back meanwhile: an unfinished "[1," and trailing whitespace
    (so the joined output is stripped). ``feed`` each delta, then ``flush`` once."""

    def __init__(self, valid: Iterable[int]) -> None:
        self._valid = frozenset(valid)
        self._buffer = ""
        self._started = False
        self.cited: list[int] = []
        self.dropped: list[int] = []

    def feed(self, delta: str) -> str:
        self._buffer += delta
        return self._drain(final=False)

    def flush(self) -> str:
        return self._drain(final=True)

    def _emit(self, text: str, out: list[str]) -> None:
        if not self._started:
            text = text.lstrip()
            self._started = bool(text)
        if text:
            out.append(text)

    def _drain(self, *, final: bool) -> str:
        out: list[str] = []
        buf = self._buffer
        while True:
            at = buf.find("[")
            if at < 0:
                body = buf.rstrip()
                self._emit(body, out)
                buf = "" if final else buf[len(body) :]
                break
            head, rest = buf[:at], buf[at:]
            marker = _MARKER.match(rest)
            if marker:
                numbers = [int(n) for n in _NUMBERS.findall(marker.group(1))]
                kept = [n for n in dict.fromkeys(numbers) if n in self._valid]
                self.dropped += [n for n in numbers if n not in self._valid]
                if kept:
                    self._emit(head + "[" + ", ".join(map(str, kept)) + "]", out)
                    self.cited += [n for n in kept if n not in self.cited]
                else:
                    self._emit(head.rstrip(), out)
                buf = rest[marker.end() :]
                continue
            if not final and _PARTIAL.match(rest):
                body = head.rstrip()
                self._emit(body, out)
                buf = head[len(body) :] + rest
                break
            self._emit(head + "[", out)
            buf = rest[1:]
        self._buffer = buf
        return "".join(out)


def parse(text: str, valid: Iterable[int]) -> Output:
    """The whole reply at once: the answer with unknown citation numbers removed."""
    cleaner = CitationFilter(valid)
    answer = cleaner.feed(text) + cleaner.flush()
    return Output(answer=answer, cited=cleaner.cited)
