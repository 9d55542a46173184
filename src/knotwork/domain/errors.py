"""Errors the domain raises that callers map to a status of their own."""

from __future__ import annotations


class UnknownReference(ValueError):
    """The request names something this tenant does not have (a community level, say):
    HTTP 404; elsewhere a ValueError like any bad input."""


class StoreBusy(RuntimeError):
    """An embedded store that another process holds open (qdrant-edge locks a shard directory
    per process): the caller should say which process to stop, or how to share the stores."""
