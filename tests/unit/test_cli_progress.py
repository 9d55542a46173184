"""Progress of long CLI commands: periodic plain lines off a terminal (count, percentage,
rate, elapsed, ETA), silence for short runs, and the terminal bar's tracker."""

from __future__ import annotations

import pytest

from knotwork.services.cli_progress import ProgressLines, progress


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(total: int | None, every_s: float = 10.0) -> tuple[ProgressLines, FakeClock, list[str]]:
    clock, written = FakeClock(), []
    return ProgressLines("ingest", total, every_s=every_s, write=written.append, clock=clock), clock, written


def test_a_line_at_most_every_interval_with_rate_and_eta() -> None:
    tracker, clock, written = _lines(120)
    clock.now += 4
    tracker.advance(8)
    assert written == []  # a short run says nothing
    clock.now += 16  # 20 s in, 40 of 120 done: 2.0/s, 80 left -> 40 s
    tracker.advance(32)
    assert written == ["ingest: 40/120 (33%), 2.0/s, elapsed 0:20, ETA 0:40"]
    clock.now += 5
    tracker.advance(10)
    assert len(written) == 1  # not again before the interval
    clock.now += 5  # 30 s, 60 done
    tracker.advance(10)
    assert written[-1] == "ingest: 60/120 (50%), 2.0/s, elapsed 0:30, ETA 0:30"


def test_an_unknown_total_has_a_rate_but_no_eta() -> None:
    tracker, clock, written = _lines(None)
    clock.now += 3725
    tracker.advance(7450)
    assert written == ["ingest: 7450, 2.0/s, elapsed 1:02:05"]


def test_a_new_stage_restarts_the_rate() -> None:
    tracker, clock, written = _lines(None)
    clock.now += 50
    tracker.update(100, 100, label="detect")
    clock.now += 10
    tracker.update(5, 20, label="summarize")  # the stage starts now
    clock.now += 10
    tracker.update(10, 20)
    assert written[-1] == "summarize: 10/20 (50%), 1.0/s, elapsed 0:10, ETA 0:10"


@pytest.mark.parametrize("total", [10, None])
def test_the_terminal_bar_takes_counts_and_stages(total: int | None) -> None:
    with progress("ingest", total, tty=True) as tracker:
        tracker.advance(3)
        tracker.update(4, 10, label="stage two")
        tracker.advance(1)


def test_off_a_terminal_the_tracker_writes_lines() -> None:
    with progress("ingest", 10, tty=False) as tracker:
        assert isinstance(tracker, ProgressLines)
