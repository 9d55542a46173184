"""Progress of long CLI commands: on a terminal a bar with count, rate, elapsed time and ETA;
anywhere else (a pipe, a log, CI) one line on stderr at most every ``PROGRESS_EVERY_S``, so a
long ingest is visibly alive there too."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

PROGRESS_EVERY_S = 10.0


class Tracker(Protocol):
    def advance(self, n: int) -> None: ...

    def update(self, done: int, total: int | None, label: str | None = None) -> None: ...


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class ProgressLines:
    """Periodic plain lines: 'ingest: 40/120 (33%), 2.1/s, elapsed 0:19, ETA 0:38'. Nothing is
    written before ``every_s`` has passed, so a short command stays quiet."""

    def __init__(self, label: str, total: int | None, *, every_s: float = PROGRESS_EVERY_S,
                 write: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.done = label, total, 0
        self._every = every_s
        self._write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._clock = clock
        self._start = self._last = clock()

    def advance(self, n: int) -> None:
        self.done += n
        self._maybe_write()

    def update(self, done: int, total: int | None, label: str | None = None) -> None:
        if label is not None and label != self.label:  # a new stage restarts the rate
            self.label, self._start = label, self._clock()
        self.done, self.total = done, total
        self._maybe_write()

    def line(self) -> str:
        elapsed = self._clock() - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.label}: {self.done}"]
        if self.total:
            parts[0] += f"/{self.total} ({100 * self.done / self.total:.0f}%)"
        parts.append(f"{rate:.1f}/s")
        parts.append(f"elapsed {_clock(elapsed)}")
        if self.total and rate > 0:
            parts.append(f"ETA {_clock((self.total - self.done) / rate)}")
        return ", ".join(parts)

    def _maybe_write(self) -> None:
        now = self._clock()
        if now - self._last >= self._every:
            self._last = now
            self._write(self.line())


class _Bar:
    """A rich bar as a Tracker (one task per label)."""

    def __init__(self, bar: object, label: str, total: int | None) -> None:
        from rich.progress import Progress

        assert isinstance(bar, Progress)
        self._bar = bar
        self._tasks = {label: bar.add_task(label, total=total)}
        self._label = label

    def advance(self, n: int) -> None:
        self._bar.advance(self._tasks[self._label], n)

    def update(self, done: int, total: int | None, label: str | None = None) -> None:
        if label is not None and label not in self._tasks:
            unused = self._bar.tasks[-1] if self._bar.tasks else None
            if unused is not None and unused.total is None and not unused.completed:
                self._bar.remove_task(unused.id)  # the placeholder a staged command starts with
            self._tasks[label] = self._bar.add_task(label, total=total)
        self._label = label or self._label
        self._bar.update(self._tasks[self._label], completed=done, total=total)


@contextmanager
def progress(label: str, total: int | None, *, tty: bool | None = None) -> Iterator[Tracker]:
    """A Tracker for ``label``: a transient rich bar on a terminal, periodic lines otherwise."""
    if not (sys.stderr.isatty() if tty is None else tty):
        yield ProgressLines(label, total)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f}/s" if speed else "-/s", style="progress.data.speed")

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               RateColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    # on stderr, like the check above: stdout stays the command's output (--json pipes cleanly)
    with Progress(*columns, transient=True, console=Console(stderr=True)) as bar:
        yield _Bar(bar, label, total)
