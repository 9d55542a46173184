"""Prometheus metrics of one process: built on first use, exported by ``GET /metrics``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass(frozen=True)
class Metrics:
    registry: CollectorRegistry
    http_seconds: Histogram  # labels: method, route, status
    store_seconds: Histogram  # labels: store, operation
    store_errors: Counter  # labels: store, operation
    cache_requests: Counter  # labels: layer, outcome (hit|miss)
    llm_tokens: Counter  # labels: kind (prompt|completion)
    llm_calls: Counter  # labels: outcome (ok|retry|failed)
    queue_depth: Gauge  # labels: stream

    def cache_hit_rate(self) -> float:
        hits = misses = 0.0
        for metric in self.cache_requests.collect():
            for sample in metric.samples:
                if not sample.name.endswith("_total"):
                    continue
                if sample.labels.get("outcome") == "hit":
                    hits += sample.value
                elif sample.labels.get("outcome") == "miss":
                    misses += sample.value
        return hits / (hits + misses) if hits + misses else 0.0


@lru_cache(maxsize=1)
def get_metrics() -> Metrics:
    """The process's metrics (a private registry, so tests and apps never collide on names)."""
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    registry = CollectorRegistry(auto_describe=True)
    cache_requests = Counter("knotwork_cache_requests", "Cache lookups", ["layer", "outcome"],
                             registry=registry)
    metrics = Metrics(
        registry=registry,
        http_seconds=Histogram("knotwork_http_request_seconds", "HTTP request latency",
                               ["method", "route", "status"], buckets=_LATENCY_BUCKETS,
                               registry=registry),
        store_seconds=Histogram("knotwork_store_call_seconds", "Store call latency",
                                ["store", "operation"], buckets=_LATENCY_BUCKETS, registry=registry),
        store_errors=Counter("knotwork_store_errors", "Store calls that raised",
                             ["store", "operation"], registry=registry),
        cache_requests=cache_requests,
        llm_tokens=Counter("knotwork_llm_tokens", "LLM tokens used", ["kind"], registry=registry),
        llm_calls=Counter("knotwork_llm_calls", "LLM calls", ["outcome"], registry=registry),
        queue_depth=Gauge("knotwork_queue_depth", "Tasks waiting per stream", ["stream"],
                          registry=registry),
    )
    hit_rate = Gauge("knotwork_cache_hit_ratio", "Share of cache lookups that hit", registry=registry)
    hit_rate.set_function(metrics.cache_hit_rate)
    return metrics


def render_latest() -> tuple[bytes, str]:
    """The exposition text and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(get_metrics().registry), CONTENT_TYPE_LATEST
