"""A batch's passage embedding, shared by whichever thread is free.

Ingestion embeds a batch's chunk passages on a worker thread while the pipeline thread
extracts and writes the batch before it. The two sides rarely take the same time: with
MiniLM and spaCy on two cores, the passages were the longer side and the pipeline thread
waited on them (issue 4). Here the passages are cut into parts of similar length; the worker
takes them in order, and a thread asking for the result embeds the parts nobody has started
instead of waiting, so both cores work until the batch is done.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

from knotwork.domain.ports import PassageVectors
from knotwork.infra.embeddings.threads import one_core_left
from knotwork.ingestion.vector_writes import EmbeddedPassages, PassageRow, SentenceRow

EmbedPart = Callable[[list[str]], PassageVectors]

PART_ROWS = 16  # ~0.5 s of MiniLM on one core: short enough to leave little idle at the end
SHORT_ROWS = 128  # sentences: ~10x shorter than passages, two model batches of 64


class PassageWork:
    """The passages of one batch, embedded part by part by any thread (``work``)."""

    def __init__(self, texts: Sequence[str], embed: EmbedPart, part_rows: int = PART_ROWS,
                 short: Sequence[str] = (), short_embed: EmbedPart | None = None,
                 short_rows: int = SHORT_ROWS) -> None:
        """``short``: texts after ``texts`` (sentences) whose spans are never read: embedded
        by ``short_embed`` (default ``embed``) in parts of ``short_rows``."""
        if part_rows < 1 or short_rows < 1:
            raise ValueError("part_rows and short_rows must be at least 1")
        self._texts = [*texts, *short]
        # parts of similar length pad little when the embedder batches them
        order = sorted(range(len(texts)), key=lambda i: len(self._texts[i]))
        self._parts = [order[i : i + part_rows] for i in range(0, len(order), part_rows)]
        self._embeds = [embed] * len(self._parts)
        order = sorted(range(len(texts), len(self._texts)), key=lambda i: len(self._texts[i]))
        shorts = [order[i : i + short_rows] for i in range(0, len(order), short_rows)]
        self._parts += shorts
        self._embeds += [short_embed or embed] * len(shorts)
        self._results: list[PassageVectors | None] = [None] * len(self._parts)
        self._next = 0
        self._finished = 0
        self._error: BaseException | None = None
        self._changed = threading.Condition()

    def _take(self) -> int | None:
        with self._changed:
            if self._next >= len(self._parts) or self._error is not None:
                return None
            self._next += 1
            return self._next - 1

    def work(self, parts: int | None = None) -> int:
        """Embed parts until none is left unstarted (or ``parts`` are done); the number this
        thread embedded."""
        done = 0
        while (parts is None or done < parts) and (k := self._take()) is not None:
            try:
                result = self._embeds[k]([self._texts[i] for i in self._parts[k]])
            except BaseException as exc:  # re-raised in ``result``, in the caller's thread
                with self._changed:
                    self._error = self._error or exc
                    self._finished += 1
                    self._changed.notify_all()
                raise
            with self._changed:
                self._results[k] = result
                self._finished += 1
                self._changed.notify_all()
            done += 1
        return done

    def done(self) -> bool:
        with self._changed:
            return self._error is not None or self._finished == len(self._parts)

    def result(self, spare: PassageWork | None = None) -> PassageVectors:
        """Every passage's vectors, in the texts' order. The calling thread first embeds the
        parts not yet started; while others finish theirs, it embeds parts of ``spare`` (the
        next batch's passages) rather than wait idle."""
        self.work()
        while not self.done() and spare is not None and spare.work(parts=1):
            pass
        with self._changed:
            self._changed.wait_for(lambda: self._error is not None
                                   or self._finished == len(self._parts))
            if self._error is not None:
                raise self._error
            results = [r for r in self._results if r is not None]
        return _Joined(self._parts, results, len(self._texts))

    def submit(self, executor: Executor) -> PassageWork:
        """Start the worker side on ``executor``; its error, if any, reaches ``result``."""
        # nothing to read from the future: results and errors are held here
        executor.submit(contextvars.copy_context().run, self._quiet_work)
        return self

    def _quiet_work(self) -> None:
        try:
            self.work()
        except BaseException:  # noqa: BLE001 - kept in self._error for result()
            return


class _Joined:
    """The parts' vectors seen as one :class:`PassageVectors` over the original texts."""

    def __init__(self, parts: Sequence[Sequence[int]], results: Sequence[PassageVectors],
                 count: int) -> None:
        self._where: list[tuple[PassageVectors, int]] = [(results[0], 0)] * count if count else []
        for part, result in zip(parts, results, strict=True):
            for local, index in enumerate(part):
                self._where[index] = (result, local)

    @property
    def vectors(self) -> list[list[float]]:
        return [result.vectors[local] for result, local in self._where]

    def span_vector(self, index: int, start: int, end: int) -> list[float] | None:
        result, local = self._where[index]
        return result.span_vector(local, start, end)


class PendingPassages:
    """A batch's passage rows and their embedding in progress (the pipeline's handle)."""

    def __init__(self, rows: Sequence[PassageRow], work: PassageWork,
                 sentences: Sequence[SentenceRow] = ()) -> None:
        self._rows = list(rows)
        self._work = work
        self._sentences = list(sentences)

    def done(self) -> bool:
        return self._work.done()

    def result(self, spare: PendingPassages | None = None) -> EmbeddedPassages:
        """The batch's passages; this thread embeds the parts nobody has started, then parts
        of ``spare`` while the last ones finish."""
        return EmbeddedPassages(self._rows,
                                self._work.result(spare._work if spare is not None else None),
                                self._sentences)


def one_core_each(embed: EmbedPart) -> EmbedPart:
    """``embed`` on one torch thread fewer: the worker and a helping thread then share two
    cores without oversubscribing them (the spinning costs ~15% more CPU, issue 9)."""

    def call(texts: list[str]) -> PassageVectors:
        with one_core_left():
            return embed(texts)

    return call
