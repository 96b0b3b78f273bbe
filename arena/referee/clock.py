"""The referee's own lateness, so that a bot's clock never pays for it.

Every match runs on one event loop. When the loop stalls (a garbage collection, a burst
of work), a reply that came in time waits to be read, and a deadline's timer fires late
beside it: without a correction the bot would be charged for the referee's stall, or
timed out by it. :class:`LoopLag` measures how late the loop runs; :class:`Deadline` is
a decision's deadline that grants the bot every stall that fell inside it.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: garbage collector thresholds measured against Python's default (700, 10, 10) by
#: benchmarks/loop_lag.py: a young collection every 10,000 allocations net, a full one far
#: more rarely. Not applied by ``serve()`` yet: under 150 matches they cut collection
#: time from 2.2% to 0.0% but the loop's 99th percentile lateness was no better (62 and
#: 79 ms, both within the 100 ms target, on a machine at load 28); see docs/benchmarks.md
GC_THRESHOLDS = (10_000, 50, 100)
#: how often the loop's lateness is sampled (seconds), and what counts as late
LAG_INTERVAL_S = 0.01
LAG_SLACK_S = 0.005


class LoopLag:
    """The total time the event loop ran late, summed over samples every
    LAG_INTERVAL_S: a sleep that wakes more than LAG_SLACK_S after it was due adds how
    late it woke. ``total`` only grows; a decision credits what it grew by meanwhile."""

    def __init__(self) -> None:
        self.total = 0.0
        #: when the sampler's sleep is due to end (loop time; inf while it is not running)
        self.due = float("inf")
        #: the longest single stall seen (seconds), for the log and the benchmarks
        self.worst = 0.0
        #: every sample's lateness (seconds), if a list is put here (benchmarks/loop_lag.py)
        self.samples: list[float] | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-lag")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                self.due = loop.time() + LAG_INTERVAL_S
                await asyncio.sleep(LAG_INTERVAL_S)
                self.note(loop.time() - self.due)
        finally:
            self.due = float("inf")

    def behind(self, now: float) -> float:
        """How far behind the loop is at ``now`` (0 within the slack): the sampler's
        sleep has been due that long, and the loop has not got to it yet. A message read
        now has waited about that long for the loop, not for its sender."""
        late = now - self.due
        return late if late > LAG_SLACK_S else 0.0

    def note(self, late: float) -> None:
        """The loop ran ``late`` seconds behind (counted if over the slack)."""
        if self.samples is not None:
            self.samples.append(max(late, 0.0))
        if late > LAG_SLACK_S:
            self.total += late
            if late > self.worst:
                self.worst = late


class Deadline:
    """Fails ``future`` with TimeoutError ``budget_s`` after now, plus every stall of the
    loop meanwhile: when its timer fires it first grants what ``lag`` counted since the
    start and how late the timer itself fired (a stall not yet sampled), and waits that
    much longer, so that a reply the stall held up is read first."""

    __slots__ = ("_end", "_future", "_granted", "_handle", "_lag", "_loop", "_since")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
        budget_s: float,
        lag: LoopLag,
    ) -> None:
        self._loop = loop
        self._future = future
        self._lag = lag
        self._since = lag.total
        self._granted = 0.0
        self._end = loop.time() + budget_s
        self._handle = loop.call_at(self._end, self._fire)

    def _fire(self) -> None:
        now = self._loop.time()
        late = now - self._end
        owed = self._lag.total - self._since - self._granted
        if late > LAG_SLACK_S:
            owed = max(owed, late)
        if owed > LAG_SLACK_S:
            self._granted += owed
            self._end = now + owed
            self._handle = self._loop.call_at(self._end, self._fire)
            return
        if not self._future.done():
            self._future.set_exception(TimeoutError())

    def cancel(self) -> None:
        self._handle.cancel()
