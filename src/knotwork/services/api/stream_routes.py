"""``POST /v1/graphrag/query/stream``: the query answer as Server-Sent Events.

Same request body as ``/v1/graphrag/query``. Events, in order:

- ``start``: ``{"mode": ...}`` as soon as the request is accepted;
- ``trace``: one per reasoning step (``{"step": ...}``);
- ``answer``: the answer in pieces (``{"delta": ...}``); join the deltas for the whole
  answer. When an LLM writes the answer (an LLM configured, ``llm_answers`` on) the deltas
  are its tokens as they are generated (invented citation numbers removed); otherwise (no
  LLM, an abstention, a cached answer) a sentence or key point each;
- ``answer_reset``: ``{"reason": ...}`` when the LLM failed mid-answer: discard the deltas so
  far, the extractive answer's deltas follow;
- ``citation``: one per citation (the citation object);
- ``done``: the full response object of ``/v1/graphrag/query``.

Bad input is rejected before the stream starts (problem+json 400 / 422); a failure after
that is sent as an ``error`` event (``{"title", "detail"}``) and ends the stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import structlog
from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from knotwork.core import Knotwork
from knotwork.domain.models import QueryMode, QueryResult
from knotwork.retrieval.answer_writer import answer_pieces
from knotwork.services.api.deps import KW, Tenant
from knotwork.services.api.routes import QueryRequest, QueryResponse

router = APIRouter(tags=["graphrag"])
log = structlog.get_logger(__name__)
__all__ = ["answer_pieces", "router", "sse"]


def sse(event: str, data: object) -> str:
    """One Server-Sent Event (``data`` as one JSON line)."""
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


def _response(body: QueryRequest, result: QueryResult) -> dict[str, object]:
    drift = result.mode_used is QueryMode.DRIFT
    response = QueryResponse(
        answer=result.answer, citations=result.citations if body.include_citations else [],
        confidence=result.confidence, mode_used=result.mode_used.value.upper(),
        reasoning_trace=result.reasoning_trace,
        context=result.context if body.include_context else None,
        key_points=result.key_points if result.mode_used in (QueryMode.GLOBAL, QueryMode.DRIFT) else None,
        iterations=result.iterations if drift else None,
        final_coverage=result.final_coverage if drift else None)
    return response.model_dump(mode="json", exclude_none=False)


def _events(kw: Knotwork, body: QueryRequest, question: str, tenant: str) -> Iterator[str]:
    yield sse("start", {"mode": body.mode})
    try:
        stream = kw.query_stream(question, tenant, body.options())
        traced = 0
        for step in stream.draft.reasoning_trace:  # retrieval's steps, before the answer
            yield sse("trace", {"step": step})
            traced += 1
        for delta in stream:
            if delta.reset:
                yield sse("answer_reset", {"reason": "the LLM failed; the extractive answer "
                                                     "follows"})
            elif delta.text:
                yield sse("answer", {"delta": delta.text})
        result = stream.result
    except Exception as exc:  # noqa: BLE001 - the stream has started: report, then end it
        log.warning("api.stream_failed", error=type(exc).__name__)
        yield sse("error", {"title": type(exc).__name__, "detail": str(exc).splitlines()[0] if str(exc) else ""})
        return
    for step in result.reasoning_trace[traced:]:  # the answer's own step (LLM or fallback)
        yield sse("trace", {"step": step})
    if body.include_citations:
        for citation in result.citations:
            yield sse("citation", citation.model_dump(mode="json"))
    yield sse("done", _response(body, result))


@router.post("/v1/graphrag/query/stream", response_class=StreamingResponse,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "start, trace*, answer*, citation*, done (or error)"},
                        400: {"description": "blank query (problem+json)"},
                        422: {"description": "malformed request (problem+json)"}})
def graphrag_query_stream(body: QueryRequest, kw: KW, tenant: Tenant) -> StreamingResponse:
    """The answer of ``/v1/graphrag/query`` as Server-Sent Events."""
    question = body.query.strip()
    if not question:
        raise ValueError("the question is empty")
    return StreamingResponse(_events(kw, body, question, tenant), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
