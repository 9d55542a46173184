"""LLM-written answers (scripted fake LLM): streamed in order, cleaned citations, fallbacks,
abstentions never sent; the answer prompt and its citation filter."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from knotwork.domain.models import Citation, Fact, QueryMode, QueryResult, RelationType
from knotwork.domain.ports import ChatRole, LLMError
from knotwork.infra.llm.fake import FakeLLMClient, FakeStream
from knotwork.prompts import answer_question
from knotwork.retrieval.answer_writer import (
    AnswerDelta,
    AnswerStream,
    AnswerWriter,
    answer_pieces,
    answer_writer,
)
from knotwork.retrieval.local import NO_ANSWER
from knotwork.runtime import Runtime
from knotwork.settings import Settings

EXTRACTIVE = "Ana reports to Ben. Ben leads Core."


def _citation(n: int, text: str) -> Citation:
    return Citation(
        document_id=f"d{n}",
        source_system="slack",
        source_id=f"s{n}",
        title=f"Doc {n}",
        created_at=f"2025-01-0{n}T00:00:00Z",
        chunk_id=f"c{n}",
        text=text,
    )


def _result(**update: object) -> QueryResult:
    fact = Fact(
        id="f1",
        group_id="g",
        source_id="ben",
        target_id="core",
        type=RelationType.LEADS,
        fact="Ben leads the Core team since 2024.",
        confidence=0.9,
        episodes=["c2"],
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
    )
    base = QueryResult(
        answer=EXTRACTIVE,
        confidence=0.8,
        mode_used=QueryMode.LOCAL,
        citations=[_citation(1, "Ana reports to Ben."), _citation(2, "Ben leads Core.")],
        reasoning_trace=["seeds: Ana"],
        facts=[fact],
    )
    return base.model_copy(update=update)


def _stream(
    llm: FakeLLMClient,
    result: QueryResult | None = None,
    *,
    timeout_s: float = 60.0,
    done: list[tuple[QueryResult, bool]] | None = None,
) -> AnswerStream:
    writer = AnswerWriter(llm, max_tokens=123, timeout_s=timeout_s)
    return AnswerStream(
        result or _result(),
        question="Who does Ana report to?",
        writer=writer,
        on_done=lambda r, ok: (done if done is not None else []).append((r, ok)),
    )


def test_llm_deltas_stream_in_order_as_they_arrive() -> None:
    deltas = ("Ana ", "reports ", "to ", "Ben [", "1]", ", who ", "leads Core [2].")
    llm = FakeLLMClient([FakeStream(deltas)])
    done: list[tuple[QueryResult, bool]] = []
    stream = _stream(llm, done=done)
    pieces = iter(stream)
    first = next(pieces)
    assert first == AnswerDelta("Ana") and llm.stats.calls == 0  # before the LLM finished
    rest = [d.text for d in pieces]
    assert len(rest) > 3 and not any(d == "" for d in rest)
    answer = "Ana reports to Ben [1], who leads Core [2]."
    assert first.text + "".join(rest) == answer
    assert stream.result.answer == answer and done == [(stream.result, True)]
    assert stream.result.citations == _result().citations  # [n] = the n-th citation
    assert "answer written by the LLM" in stream.result.reasoning_trace[-1]
    [call] = llm.calls
    assert (
        call.output is None and call.max_tokens == 123 and call.name.startswith("answer_question/")
    )
    assert "[1] Ana reports to Ben. (Doc 1, 2025-01-01)" in call.prompt
    assert "[2] Ben leads the Core team since 2024." in call.prompt  # fact on cited chunk c2
    assert "Question: Who does Ana report to?" in call.prompt
    assert llm.stats.calls == 1 and llm.stats.completion_tokens > 0


def test_invented_citation_numbers_are_removed() -> None:
    llm = FakeLLMClient(["Ana reports to Ben [1, 7]. Ben leads Core [9] and [2] [3]."])
    result = _stream(llm).collect()
    assert result.answer == "Ana reports to Ben [1]. Ben leads Core and [2]."
    assert "removed unknown citations [3, 7, 9]" in result.reasoning_trace[-1]


@pytest.mark.parametrize(
    "reply", [LLMError("HTTP 503"), "   ", "[5]"], ids=["error", "blank", "only-invented-citations"]
)
def test_extractive_answer_kept_when_the_llm_fails_before_any_text(reply: object) -> None:
    done: list[tuple[QueryResult, bool]] = []
    stream = _stream(FakeLLMClient([reply]), done=done)  # type: ignore[list-item]
    deltas = list(stream)
    assert [d.text for d in deltas] == answer_pieces(EXTRACTIVE) and not any(
        d.reset for d in deltas
    )
    assert stream.result.answer == EXTRACTIVE
    assert "the extractive answer is kept" in stream.result.reasoning_trace[-1]
    assert done == [(stream.result, False)]  # a fallback is not cached


def test_failure_mid_answer_resets_then_sends_the_extractive_answer() -> None:
    llm = FakeLLMClient([FakeStream(("Ana ", "reports ", "to"), error=LLMError("cut"))])
    stream = _stream(llm)
    deltas = list(stream)
    resets = [i for i, d in enumerate(deltas) if d.reset]
    assert len(resets) == 1 and resets[0] >= 1  # after LLM text was sent
    assert "".join(d.text for d in deltas[resets[0] + 1 :]) == EXTRACTIVE
    assert stream.result.answer == EXTRACTIVE and "cut" in stream.result.reasoning_trace[-1]
    assert llm.stats.failures == 1


def test_a_slow_answer_times_out_to_the_extractive_one() -> None:
    stream = _stream(FakeLLMClient([FakeStream(("Ana ", "reports ", "to Ben."))]), timeout_s=1e-9)
    deltas = list(stream)
    assert any(d.reset for d in deltas) and stream.result.answer == EXTRACTIVE
    assert "timeout" in stream.result.reasoning_trace[-1]


@pytest.mark.parametrize(
    "result",
    [
        _result(answer=NO_ANSWER, citations=[]),
        _result(citations=[]),
        _result(reasoning_trace=["abstained: the evidence never mentions budget"]),
    ],
    ids=["no-answer", "no-citations", "abstained"],
)
def test_abstentions_are_never_sent_to_the_llm(result: QueryResult) -> None:
    llm = FakeLLMClient()
    stream = _stream(llm, result)
    assert "".join(d.text for d in stream) == result.answer
    assert stream.result == result and llm.calls == []


def test_without_a_writer_the_answer_streams_sentence_by_sentence() -> None:
    stream = AnswerStream(_result())
    assert [d.text for d in stream] == ["Ana reports to Ben. ", "Ben leads Core."]
    assert stream.collect().answer == EXTRACTIVE  # read again: same pieces, same result


def test_the_result_needs_the_stream_read() -> None:
    with pytest.raises(RuntimeError, match="not read to the end"):
        _ = AnswerStream(_result()).result


def test_writer_only_with_an_llm_and_the_setting_on() -> None:
    def runtime(llm: FakeLLMClient | None, **settings: object) -> Runtime:
        none: Any = None  # the stores are never touched
        rt = Runtime(
            settings=Settings(**settings), graph=none, vectors=none, documents=none, embedder=none
        )
        rt._llm, rt._llm_built = llm, True
        return rt

    assert Settings().llm_answers is True  # on whenever an LLM is configured
    assert answer_writer(runtime(None)) is None  # no LLM: extractive, as before
    assert answer_writer(runtime(FakeLLMClient(), llm_answers=False)) is None
    writer = answer_writer(runtime(FakeLLMClient(), llm_answer_max_tokens=77))
    assert writer is not None and writer.max_tokens == 77


# --------------------------------------------------------------------------- the prompt


def test_answer_prompt_renders_numbered_evidence() -> None:
    data = answer_question.Input(
        question=" Who leads Atlas? ",
        as_of="2024-05-01",
        items=[
            answer_question.ContextItem(
                number=1, text="Dana  leads\nAtlas.", source="Kickoff", date="2024-03-01"
            ),
            answer_question.ContextItem(number=3, text="Atlas uses PostgreSQL."),
        ],
    )
    messages = answer_question.render(data)
    assert [m.role for m in messages] == [ChatRole.SYSTEM, ChatRole.USER]
    assert answer_question.NAME == "answer_question" and answer_question.VERSION
    assert "[2]" in messages[0].content  # the system prompt shows how to cite
    assert messages[1].content == (
        "Evidence:\n[1] Dana leads Atlas. (Kickoff, 2024-03-01)\n"
        "[3] Atlas uses PostgreSQL.\n\nQuestion: Who leads Atlas?\n\n"
        "Answer as of 2024-05-01."
    )
    with pytest.raises(ValueError):
        answer_question.Input(question="q", items=[])


def test_citation_filter_is_the_same_delta_by_delta_as_at_once() -> None:
    text = (
        "  Dana leads Atlas [1][4]. It uses PostgreSQL [2 , 3] since [note] 2024 [ 9 ]"
        " and x[2]; open [12"
    )
    whole = answer_question.parse(text, {1, 2, 3})
    assert whole.answer == (
        "Dana leads Atlas [1]. It uses PostgreSQL [2, 3] since [note] 2024 and x[2]; open [12"
    )
    assert whole.cited == [1, 2, 3]
    for size in (1, 2, 5):
        cleaner = answer_question.CitationFilter({1, 2, 3})
        pieces = [cleaner.feed(text[i : i + size]) for i in range(0, len(text), size)]
        assert "".join(pieces) + cleaner.flush() == whole.answer
        assert not any(p.endswith(" [") for p in pieces)  # a marker is never sent half-way
