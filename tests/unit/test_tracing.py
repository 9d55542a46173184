"""Store calls run inside OpenTelemetry spans and are timed; failures are counted and re-raised."""

from __future__ import annotations

import pytest

from knotwork.observability.metrics import get_metrics
from knotwork.observability.tracing import instrument, unwrap


class _Store:
    def __init__(self) -> None:
        self.calls = 0
        self.name = "plain attribute"

    def counts(self, group: str) -> int:
        self.calls += 1
        return len(group)

    def broken(self) -> None:
        raise KeyError("boom")


def _sample(name: str, **labels: str) -> float:
    value = get_metrics().registry.get_sample_value(name, labels)
    return value or 0.0


def test_instrumented_store_forwards_and_times_calls() -> None:
    inner = _Store()
    store = instrument(inner, "unit_graph")
    before = _sample("knotwork_store_call_seconds_count", store="unit_graph", operation="counts")
    assert store.counts("abc") == 3
    assert inner.calls == 1
    assert store.name == "plain attribute"
    assert unwrap(store) is inner and unwrap(inner) is inner
    after = _sample("knotwork_store_call_seconds_count", store="unit_graph", operation="counts")
    assert after == before + 1


def test_failures_are_counted_and_re_raised() -> None:
    store = instrument(_Store(), "unit_graph")
    before = _sample("knotwork_store_errors_total", store="unit_graph", operation="broken")
    with pytest.raises(KeyError):
        store.broken()
    assert _sample("knotwork_store_errors_total", store="unit_graph", operation="broken") == before + 1


def test_spans_are_recorded_with_an_sdk_provider() -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from knotwork.observability import tracing

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing._tracer.cache_clear()
    original = tracing._tracer
    tracing._tracer = lambda: provider.get_tracer("knotwork")  # type: ignore[assignment]
    try:
        store = instrument(_Store(), "unit_graph")
        store.counts("x")
        with pytest.raises(KeyError):
            store.broken()
    finally:
        tracing._tracer = original  # type: ignore[assignment]
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert "knotwork.unit_graph.counts" in spans
    failed = spans["knotwork.unit_graph.broken"]
    assert any(event.name == "exception" for event in failed.events)


def test_llm_calls_and_tokens_reach_the_metrics() -> None:
    from pydantic import BaseModel

    from knotwork.domain.ports import ChatMessage
    from knotwork.infra.llm.fake import FakeLLMClient

    class Answer(BaseModel):
        text: str

    client = FakeLLMClient(['{"text": "fine"}', "not json at all"])
    before_ok = _sample("knotwork_llm_calls_total", outcome="ok")
    before_dropped = _sample("knotwork_llm_calls_total", outcome="dropped")
    before_tokens = _sample("knotwork_llm_tokens_total", kind="completion")
    message = [ChatMessage(role="user", content="How are you?")]
    assert client.complete(message, Answer).value == Answer(text="fine")
    assert client.complete(message, Answer).value is None
    assert _sample("knotwork_llm_calls_total", outcome="ok") == before_ok + 1
    assert _sample("knotwork_llm_calls_total", outcome="dropped") == before_dropped + 1
    assert _sample("knotwork_llm_tokens_total", kind="completion") > before_tokens
