"""RecordLog: what a frontend compiled in this process, for explain, tests and tools."""

from __future__ import annotations

import collections
import contextlib
from typing import Generic, Iterator, List, TypeVar

R = TypeVar("R")


class RecordLog(Generic[R]):
    """The records of the graphs a frontend compiled (the last 256, oldest first) and the
    collectors gathering them inside `with collect()` blocks (which nest)."""

    def __init__(self) -> None:
        self._records: "collections.deque[R]" = collections.deque(maxlen=256)
        self._collectors: List[List[R]] = []

    def compiled_graphs(self) -> List[R]:
        """The records of the graphs compiled in this process (the last 256), oldest first."""
        return list(self._records)

    def reset_records(self) -> None:
        """Forgets the records (compiled programs stay valid)."""
        self._records.clear()

    @contextlib.contextmanager
    def collect_records(self) -> Iterator[List[R]]:
        """Collects the records of the graphs compiled inside the `with` block."""
        sink: List[R] = []
        self._collectors.append(sink)
        try:
            yield sink
        finally:  # this sink, not an equal one: collectors nest (explain's inside a caller's)
            del self._collectors[next(i for i, s in enumerate(self._collectors) if s is sink)]

    def publish(self, rec: R) -> None:
        self._records.append(rec)
        for sink in self._collectors:
            sink.append(rec)
