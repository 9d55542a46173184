"""Torch intra-op threads while the model shares the CPU with another busy thread."""

from __future__ import annotations

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
