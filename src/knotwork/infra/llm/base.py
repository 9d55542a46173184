"""What every LLM adapter shares: call accounting and turning raw text into a result."""

from __future__ import annotations

import threading
from typing import TypeVar

import structlog
from pydantic import BaseModel

from knotwork.domain.ports import LLMResult, LLMStats, LLMUsage
from knotwork.infra.llm.parsing import parse_output
from knotwork.observability.metrics import get_metrics

log = structlog.get_logger("knotwork.llm")

T = TypeVar("T", bound=BaseModel)

_RAW_LOGGED = 300  # characters of a dropped output kept in the log line


def estimate_tokens(text: str) -> int:
    """~4 characters per token: only when the endpoint reports no usage."""
    return max(1, len(text) // 4) if text else 0


class LLMAccounting:
    """Thread-safe running totals (:class:`LLMStats`) and the parse step of a call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats = LLMStats()

    @property
    def stats(self) -> LLMStats:
        with self._lock:
            return self._stats.model_copy()

    def _count(self, **increments: int) -> None:
        with self._lock:
            for key, value in increments.items():
                setattr(self._stats, key, getattr(self._stats, key) + value)

    def _finish(self, text: str, output: type[T], usage: LLMUsage, attempts: int,
                name: str) -> LLMResult[T]:
        parsed = parse_output(text, output)
        self._count(calls=1, requests=attempts, retries=attempts - 1,
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens,
                    repaired=int(parsed.repaired and parsed.value is not None),
                    dropped=int(parsed.value is None))
        metrics = get_metrics()
        metrics.llm_tokens.labels("prompt").inc(usage.prompt_tokens)
        metrics.llm_tokens.labels("completion").inc(usage.completion_tokens)
        metrics.llm_calls.labels("ok" if parsed.value is not None else "dropped").inc()
        if attempts > 1:
            metrics.llm_calls.labels("retried").inc()
        if parsed.value is None:
            log.warning("llm.output_dropped", prompt=name, error=parsed.error,
                        raw=text[:_RAW_LOGGED], completion_tokens=usage.completion_tokens)
        elif parsed.repaired:
            log.info("llm.output_repaired", prompt=name)
        return LLMResult[output](  # type: ignore[valid-type]
            value=parsed.value, usage=usage, attempts=attempts,
            repaired=parsed.repaired, error=parsed.error)

    def _finish_stream(self, text: str, usage: LLMUsage, attempts: int, name: str) -> None:
        """Account for a finished ``stream`` call (an empty text counts as dropped)."""
        empty = not text.strip()
        self._count(calls=1, requests=attempts, retries=attempts - 1,
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens, dropped=int(empty))
        metrics = get_metrics()
        metrics.llm_tokens.labels("prompt").inc(usage.prompt_tokens)
        metrics.llm_tokens.labels("completion").inc(usage.completion_tokens)
        metrics.llm_calls.labels("dropped" if empty else "ok").inc()
        if attempts > 1:
            metrics.llm_calls.labels("retried").inc()
        if empty:
            log.warning("llm.output_dropped", prompt=name, error="empty streamed text", raw="",
                        completion_tokens=usage.completion_tokens)

    def _failed(self, attempts: int, name: str, error: str) -> None:
        self._count(calls=1, requests=attempts, retries=max(0, attempts - 1), failures=1)
        get_metrics().llm_calls.labels("failed").inc()
        log.warning("llm.call_failed", prompt=name, attempts=attempts, error=error)
