"""The event queue and job queue ports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from knotwork.domain.events import CommunitiesRebuilt, CommunityUpdated, Delivery
from knotwork.domain.tasks import DeadLetter, Job, QueueStats, Task

# --------------------------------------------------------------------------- events


@runtime_checkable
class EventQueue(Protocol):
    """At-least-once topics with consumer groups (Redis Streams in production).

    Every consumer group sees every event of a topic; within a group each event goes to one
    consumer until it is acknowledged. Unacknowledged events can be claimed again.
    """

    def publish(self, topic: str, event: CommunityUpdated | CommunitiesRebuilt) -> str:
        """Append the event; returns its message id."""
        ...

    def consume(
        self,
        topic: str,
        group: str,
        consumer: str,
        *,
        count: int = 10,
        block_ms: int | None = None,
        claim_idle_ms: int | None = None,
    ) -> list[Delivery]:
        """New events for ``consumer`` (the group is created, from the start, if missing).

        ``claim_idle_ms``: first take over events another consumer of the group left
        unacknowledged for at least that long. ``block_ms``: wait up to that long for one.
        """
        ...

    def ack(self, topic: str, group: str, message_ids: Sequence[str]) -> int:
        """Acknowledge; returns how many were pending."""
        ...

    def pending(self, topic: str, group: str) -> int:
        """Delivered but not yet acknowledged."""
        ...

    def delete_topic(self, topic: str) -> None: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- job queue


@runtime_checkable
class JobQueue(Protocol):
    """Tasks for workers (Redis Streams): one stream per priority, one consumer group.

    At-least-once: a job stays pending until finished; a worker that dies holding it loses it
    to another after ``claim_idle_ms``. Finishing: ``ack`` (done), ``retry`` (back after a
    delay, ``retry_count`` + 1) or ``dead_letter`` (kept on the dead-letter stream).
    """

    def enqueue(self, task: Task) -> str:
        """Append the task to its priority's stream; returns the message id."""
        ...

    def fetch(self, consumer: str, *, count: int = 1, block_ms: int | None = None,
              claim_idle_ms: int | None = None) -> list[Job]:
        """Jobs for ``consumer``, highest priority first (abandoned ones claimed first)."""
        ...

    def ack(self, job: Job) -> bool: ...

    def retry(self, job: Job, error: str, delay_s: float) -> None: ...

    def dead_letter(self, job: Job, error: str) -> None: ...

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]: ...

    def requeue_dead(self, message_ids: Sequence[str] | None = None) -> int:
        """Put dead letters back on their streams (all when ``None``); returns how many."""
        ...

    def stats(self) -> QueueStats: ...

    def purge(self) -> None:
        """Delete every stream, the retry set and the dead letters."""
        ...

    def close(self) -> None: ...
