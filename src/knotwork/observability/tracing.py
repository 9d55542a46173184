"""OpenTelemetry spans and latency metrics around every store call.

``instrument(store, "graph")`` returns a proxy that forwards every public method call to the
store inside a span ``knotwork.graph.<method>`` and records its latency and failures in
``knotwork_store_call_seconds`` / ``knotwork_store_errors_total``. Without an OpenTelemetry SDK
configured the spans are no-ops (the API's default tracer provider).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

from knotwork.observability.metrics import get_metrics

S = TypeVar("S")


@lru_cache(maxsize=1)
def _tracer() -> Any:
    from opentelemetry import trace

    return trace.get_tracer("knotwork")


def span(name: str) -> Any:
    """A span for work that is not a store call (LLM requests, pipeline steps)."""
    return _tracer().start_as_current_span(name)


class _Instrumented:
    __slots__ = ("_kw_label", "_kw_store")

    def __init__(self, store: object, label: str) -> None:
        object.__setattr__(self, "_kw_store", store)
        object.__setattr__(self, "_kw_label", label)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._kw_store, name)
        if name.startswith("_") or not callable(value):
            return value
        return _timed(value, self._kw_label, name)

    def __repr__(self) -> str:
        return f"instrumented({self._kw_store!r})"


def _timed(method: Callable[..., Any], label: str, operation: str) -> Callable[..., Any]:
    metrics = get_metrics()

    def call(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        with _tracer().start_as_current_span(f"knotwork.{label}.{operation}") as current:
            try:
                return method(*args, **kwargs)
            except Exception as exc:
                metrics.store_errors.labels(label, operation).inc()
                current.record_exception(exc)
                raise
            finally:
                metrics.store_seconds.labels(label, operation).observe(time.perf_counter() - started)

    return call


def instrument(store: S, label: str) -> S:
    """``store`` behind a tracing proxy (typed as the store itself)."""
    return cast(S, _Instrumented(store, label))


def unwrap(store: S) -> S:
    """The store behind an ``instrument`` proxy (or ``store`` itself)."""
    if isinstance(store, _Instrumented):
        return cast(S, object.__getattribute__(store, "_kw_store"))
    return store


def configure_tracing(endpoint: str | None, service_name: str = "knotwork") -> bool:
    """Export spans over OTLP/HTTP when an endpoint is configured; False when not possible."""
    if not endpoint:
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return False
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    _tracer.cache_clear()
    return True
