"""Torch intra-op threads while the model shares the CPU with another busy thread."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_core_left() -> Iterator[None]:
    """The calling thread's torch ops use one thread fewer for the block (at least one).

    Ingestion embeds passages in a thread while spaCy extracts in another: two intra-op
    threads plus spaCy oversubscribe a 2-core machine, and the spinning costs ~15% more CPU
    for the same work (issue 9). A no-op until torch is loaded (nothing runs on it yet).
    """
    torch = sys.modules.get("torch")
    previous = int(torch.get_num_threads()) if torch is not None else 1
    if torch is None or previous <= 1:
        yield
        return
    torch.set_num_threads(previous - 1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


# OpenMP threads that wait for the next op sleep instead of spinning (libgomp reads this once,
# when torch loads it). A spinning waiter holds its core: with other processes on the machine
# the model's two threads wait for each other's slices, and a query's MiniLM pass over its
# candidate texts took 6-9x the wall time and 4-7x the CPU (issue 23, 2 cores at load ~8:
# 300 texts 34-50 s wall / 14-21 s CPU spinning, 5.3 s / 3.1 s passive). The vectors are the
# same: the thread count and the order of the sums do not change.
OMP_WAIT_POLICY = "PASSIVE"


def passive_omp_wait(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Set ``OMP_WAIT_POLICY`` to :data:`OMP_WAIT_POLICY` unless the environment sets it;
    True when it was set here. Without effect once torch (its OpenMP runtime) is loaded."""
    if environ.get("OMP_WAIT_POLICY"):
        return False
    environ["OMP_WAIT_POLICY"] = OMP_WAIT_POLICY
    return True
