"""Turn traces: one JSON line per turn under DUOCTHU_HOME/traces, plus outcome counters."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Protocol


class _Reply(Protocol):
    outcome: str

    def to_json_dict(self) -> dict[str, Any]: ...


class TraceWriter:
    def __init__(self, directory: Path | None):
        self.directory = directory
        self.outcomes: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self._lock = threading.Lock()

    def write(self, reply: _Reply, total_ms: float) -> None:
        record = reply.to_json_dict()
        record["trace_ts"] = time.time()
        record["total_ms"] = round(total_ms, 1)
        with self._lock:
            self.outcomes[record["outcome"]] += 1
            self.reasons[record["reason"]] += 1
            if self.directory is None:
                return
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                path = self.directory / f"turns-{time.strftime('%Y-%m-%d')}.jsonl"
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            except OSError:
                pass  # tracing must never break a turn
