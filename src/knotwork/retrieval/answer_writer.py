"""LLM-written answers over the retrieved evidence, streamed, with the extractive fallback.

Retrieval assembles an extractive answer with its citations first. When an LLM is configured
(and ``llm_answers`` is on), :class:`AnswerWriter` gives the LLM the question and the
citations' evidence as numbered items ([n] = the n-th citation, plus the facts and key points
resting on the same chunks), and the answer is the LLM's text, streamed delta by delta.
Citation numbers the LLM invents are removed as the text streams. Abstentions (no support, no
citations) never reach the LLM; an LLM error, a timeout or an empty text keeps the extractive
answer (after an ``AnswerDelta(reset=True)`` when LLM text had already been sent).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

import structlog

from knotwork.domain.models import QueryResult
from knotwork.domain.ports import LLMClient
from knotwork.prompts import answer_question
from knotwork.prompts.base import estimate_tokens
from knotwork.retrieval.global_search import NO_GLOBAL_ANSWER
from knotwork.retrieval.local import NO_ANSWER
from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)

_PIECES = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_ABSTENTIONS = frozenset({NO_ANSWER, NO_GLOBAL_ANSWER})


def answer_pieces(answer: str) -> list[str]:
    """Sentences / lines, each keeping its trailing separator, so that ''.join() == answer."""
    pieces: list[str] = []
    start = 0
    for m in _PIECES.finditer(answer):
        pieces.append(answer[start : m.end()])
        start = m.end()
    if start < len(answer):
        pieces.append(answer[start:])
    return pieces


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    """The next piece of the answer; ``reset``: discard the pieces sent so far (the LLM failed
    mid-answer; the extractive answer follows)."""

    text: str
    reset: bool = False


def abstained(result: QueryResult) -> bool:
    return (
        result.answer in _ABSTENTIONS
        or not result.citations
        or any(step.startswith("abstained") for step in result.reasoning_trace)
    )


class AnswerWriter:
    def __init__(
        self,
        llm: LLMClient,
        *,
        max_tokens: int = 400,
        input_tokens: int = 3000,
        timeout_s: float = 60.0,
    ) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.input_tokens = input_tokens
        self.timeout_s = timeout_s

    @property
    def cache_tag(self) -> str:
        """Part of the query cache key: LLM answers never mix with extractive ones."""
        return f"llm:{self.llm.model}:{answer_question.NAME}/{answer_question.VERSION}"

    def prompt(
        self, question: str, result: QueryResult, as_of: datetime | None = None
    ) -> answer_question.Input | None:
        """The LLM's input, or None when the result must stay as it is (an abstention)."""
        if abstained(result):
            return None
        items: list[answer_question.ContextItem] = []
        number_of = {c.chunk_id: n for n, c in enumerate(result.citations, 1)}
        seen: set[str] = set()
        budget = self.input_tokens

        def add(number: int, text: str, source: str = "", date: str | None = None) -> None:
            nonlocal budget
            key = " ".join(text.lower().split())
            cost = estimate_tokens(text) + 8
            if not key or key in seen or cost > budget or len(items) >= answer_question.MAX_ITEMS:
                return
            seen.add(key)
            budget -= cost
            items.append(
                answer_question.ContextItem(number=number, text=text, source=source, date=date)
            )

        for n, citation in enumerate(result.citations, 1):
            date = citation.created_at[:10] if citation.created_at else None
            add(n, citation.text[: answer_question.MAX_ITEM_CHARS], citation.title, date)
        for point in result.key_points:
            cited = next((number_of[c] for c in point.chunk_ids if c in number_of), None)
            if cited is not None:
                add(cited, point.text, point.community)
        for fact in result.facts:
            cited = next((number_of[c] for c in fact.episodes if c in number_of), None)
            if cited is not None and fact.invalid_at is None:
                add(cited, fact.fact)
        if not items:
            return None
        items.sort(key=lambda item: item.number)
        return answer_question.Input(
            question=question, items=items, as_of=as_of.date().isoformat() if as_of else None
        )


def answer_writer(runtime: Runtime) -> AnswerWriter | None:
    """The configured writer: None with no LLM or with ``llm_answers`` off."""
    settings = runtime.settings
    if not settings.llm_answers:
        return None
    llm = runtime.llm
    if llm is None:
        return None
    return AnswerWriter(
        llm,
        max_tokens=settings.llm_answer_max_tokens,
        input_tokens=settings.llm_input_tokens,
        timeout_s=settings.llm_answer_timeout_s,
    )


class AnswerStream:
    """One query's answer as :class:`AnswerDelta` s; ``result`` once iterated to the end.

    Without a writer (or for an abstention) the deltas are the finished answer's sentences;
    with one they are the LLM's text as it arrives. ``on_done(result, cacheable)`` runs once
    at the end (not cacheable: the LLM failed and the extractive answer was kept)."""

    def __init__(
        self,
        result: QueryResult,
        *,
        question: str = "",
        as_of: datetime | None = None,
        writer: AnswerWriter | None = None,
        on_done: Callable[[QueryResult, bool], None] | None = None,
    ) -> None:
        self._draft = result
        self._question = question
        self._as_of = as_of
        self._writer = writer
        self._on_done = on_done
        self._final: QueryResult | None = None

    @property
    def draft(self) -> QueryResult:
        """Retrieval's result, before any LLM writing (its trace, citations, context)."""
        return self._draft

    @property
    def result(self) -> QueryResult:
        if self._final is None:
            raise RuntimeError("the answer stream was not read to the end")
        return self._final

    def collect(self) -> QueryResult:
        for _ in self:
            pass
        return self.result

    def __iter__(self) -> Iterator[AnswerDelta]:
        if self._final is not None:
            yield from (AnswerDelta(p) for p in answer_pieces(self._final.answer))
            return
        prompt = None
        if self._writer is not None:
            prompt = self._writer.prompt(self._question, self._draft, self._as_of)
        if prompt is None or self._writer is None:
            yield from (AnswerDelta(p) for p in answer_pieces(self._draft.answer))
            self._finish(self._draft, cacheable=True)
            return
        yield from self._write(self._writer, prompt)

    def _finish(self, result: QueryResult, *, cacheable: bool) -> None:
        self._final = result
        if self._on_done is not None:
            self._on_done(result, cacheable)

    def _write(self, writer: AnswerWriter, prompt: answer_question.Input) -> Iterator[AnswerDelta]:
        cleaner = answer_question.CitationFilter(range(1, len(self._draft.citations) + 1))
        sent: list[str] = []
        error: str | None = None
        deltas = writer.llm.stream(
            answer_question.render(prompt),
            name=f"{answer_question.NAME}/{answer_question.VERSION}",
            max_tokens=writer.max_tokens,
        )
        deadline = time.monotonic() + writer.timeout_s
        try:
            for delta in deltas:
                piece = cleaner.feed(delta)
                if piece:
                    sent.append(piece)
                    yield AnswerDelta(piece)
                if time.monotonic() > deadline:
                    error = f"timeout: no complete answer in {writer.timeout_s:g} s"
                    break
            else:
                piece = cleaner.flush()
                if piece:
                    sent.append(piece)
                    yield AnswerDelta(piece)
        except Exception as exc:  # noqa: BLE001 - any LLM failure: the extractive answer
            error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        finally:
            close = getattr(deltas, "close", None)
            if close is not None:
                close()
        answer = "".join(sent).strip()
        if error is None and not answer:
            error = "empty output"
        if error is not None:
            log.warning("query.llm_answer_failed", error=error, sent=len(sent))
            if sent:
                yield AnswerDelta("", reset=True)
            yield from (AnswerDelta(p) for p in answer_pieces(self._draft.answer))
            trace = [
                *self._draft.reasoning_trace,
                f"LLM answer failed ({error}); the extractive answer is kept",
            ]
            self._finish(self._draft.model_copy(update={"reasoning_trace": trace}), cacheable=False)
            return
        note = (
            f"answer written by the LLM ({writer.llm.model}; {len(prompt.items)} evidence "
            f"items; cites {cleaner.cited or 'nothing'})"
        )
        if cleaner.dropped:
            note += f"; removed unknown citations {sorted(set(cleaner.dropped))}"
        self._finish(
            self._draft.model_copy(
                update={"answer": answer, "reasoning_trace": [*self._draft.reasoning_trace, note]}
            ),
            cacheable=True,
        )
