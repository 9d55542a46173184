"""Structured logging (structlog) to stderr; configured by the entry points, never at import."""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(level: str = "WARNING", json_logs: bool = False) -> None:
    numeric = getattr(logging, level.upper(), logging.WARNING)
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(message)s")
    for noisy in ("httpx", "sentence_transformers", "transformers", "urllib3", "alembic"):
        logging.getLogger(noisy).setLevel(max(numeric, logging.WARNING))
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *([structlog.processors.format_exc_info] if json_logs else []),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
