"""Human-readable units and the live progress lines of ``ccsim run`` and ``ccsim sweep``.

Pure formatting: nothing here knows about the engine except the progress callbacks' signatures:
a run's ``(sim_now_ps, events_processed, stop_ps, flows_done, flows_total)``, where
``stop_ps == 0`` means the run ends only when its flows finish (progress is then shown as flows
done, no ETA); a sweep's ``(runs_done, runs_failed, runs_running, runs_total, sim_time_ps)``.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

_TIME_UNITS = ((1_000_000_000_000, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns"))


def format_time_ps(ps: float) -> str:
    """Format a duration in picoseconds with the largest unit that keeps it >= 1.

    Examples
    --------
    >>> format_time_ps(1_500_000)
    '1.50 us'
    >>> format_time_ps(250)
    '250 ps'
    """
    for scale, unit in _TIME_UNITS:
        if abs(ps) >= scale:
            return f"{_three_digits(ps / scale)} {unit}"
    return f"{ps:.0f} ps"


def format_count(x: float) -> str:
    """Format a count with a k/M/G suffix and three significant digits.

    Examples
    --------
    >>> format_count(12_345_678)
    '12.3 M'
    >>> format_count(42)
    '42'
    """
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{_three_digits(x / scale)} {suffix}"
    return f"{x:.0f}"


def format_duration(seconds: float) -> str:
    """Format wall-clock seconds as ``4.2s``, ``3m07s`` or ``1h02m``.

    Examples
    --------
    >>> format_duration(187)
    '3m07s'
    """
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = round(seconds)
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def format_progress(
    sim_now_ps: int,
    events: int,
    stop_ps: int,
    elapsed_s: float,
    flows_done: int = 0,
    flows_total: int = 0,
) -> str:
    """One progress line: simulated time (of stop time), flows done, events/s and ETA (without
    a stop time, a rough one, marked ``~``, from the share of flows done).

    Examples
    --------
    >>> format_progress(2_000_000_000, 4_000_000, 10_000_000_000, 2.0)
    'sim 2.00 ms / 10.0 ms (20%)  2.00 M events/s  ETA 8.0s'
    >>> format_progress(2_000_000_000, 4_000_000, 0, 2.0, 30, 120)
    'sim 2.00 ms  flows 30/120 (25%)  2.00 M events/s  ETA ~6.0s'
    """
    rate = events / elapsed_s if elapsed_s > 0 else 0.0
    line = f"sim {format_time_ps(sim_now_ps)}"
    if stop_ps > 0:
        line += f" / {format_time_ps(stop_ps)} ({min(100 * sim_now_ps // stop_ps, 100)}%)"
    elif flows_total > 0:
        line += f"  flows {flows_done}/{flows_total} ({100 * flows_done // flows_total}%)"
    line += f"  {format_count(rate)} events/s"
    if stop_ps > 0 and 0 < sim_now_ps < stop_ps and elapsed_s > 0:
        line += f"  ETA {format_duration(elapsed_s * (stop_ps - sim_now_ps) / sim_now_ps)}"
    elif stop_ps == 0 and 0 < flows_done < flows_total and elapsed_s > 0:
        left = elapsed_s * (flows_total - flows_done) / flows_done
        line += f"  ETA ~{format_duration(left)}"
    return line


class ProgressLine:
    """Progress callback that redraws one line in place (carriage return) on a terminal.

    Pass it as ``progress=`` to :func:`ccsim.run`; call :meth:`close` when the run ends so the
    next output starts on a fresh line.

    Parameters
    ----------
    stream : text stream, default ``sys.stderr``
    min_interval_s : float
        Redraw at most this often, however often the engine calls back.
    clock : callable
        Monotonic clock in seconds (injectable for tests).

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> bar = ProgressLine(buf, min_interval_s=0, clock=lambda: 1.0)
    >>> bar(1_000_000, 10, 0, 0, 0)
    >>> bar.close()
    >>> buf.getvalue()
    '\\rsim 1.00 us  0 events/s\\n'
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        min_interval_s: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._min_interval_s = min_interval_s
        self._clock = clock
        self._start = clock()
        self._last_draw: float | None = None
        self._drawn = False
        self._width = 0

    def __call__(
        self, sim_now_ps: int, events: int, stop_ps: int, flows_done: int = 0, flows_total: int = 0
    ) -> None:
        now = self._clock()
        if self._last_draw is not None and now - self._last_draw < self._min_interval_s:
            return
        self._last_draw = now
        self.draw(
            format_progress(sim_now_ps, events, stop_ps, now - self._start, flows_done, flows_total)
        )

    def elapsed_s(self) -> float:
        """Wall-clock seconds since this line was created."""
        return self._clock() - self._start

    def draw(self, line: str) -> None:
        """Replace the line's text now (no rate limit)."""
        # Pad with spaces rather than an ANSI erase so dumb terminals render it too.
        self._stream.write("\r" + line.ljust(self._width))
        self._stream.flush()
        self._width = len(line)
        self._drawn = True

    def close(self) -> None:
        """End the progress line with a newline (no-op if nothing was drawn)."""
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False
            self._last_draw = None
            self._width = 0


def format_sweep_progress(
    done: int, failed: int, running: int, total: int, sim_time_ps: float, elapsed_s: float
) -> str:
    """One sweep progress line: runs done (of which failed), running, and the aggregate
    simulated time per wall-clock second of the runs finished so far.

    Examples
    --------
    >>> format_sweep_progress(5, 1, 2, 12, 40_000_000_000, 2.0)
    'runs 5/12 (1 failed, 2 running)  sim 20.0 ms/s  2.0s'
    """
    line = f"runs {done}/{total} ({failed} failed, {running} running)"
    if elapsed_s > 0:
        line += f"  sim {format_time_ps(sim_time_ps / elapsed_s)}/s"
    return line + f"  {format_duration(elapsed_s)}"


class SweepProgress:
    """Sweep progress callback that redraws one line in place, like :class:`ProgressLine`.

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> bar = SweepProgress(buf, clock=iter([0.0, 1.0]).__next__)
    >>> bar(3, 0, 1, 4, 10_000_000_000)
    >>> bar.close()
    >>> buf.getvalue()
    '\\rruns 3/4 (0 failed, 1 running)  sim 10.0 ms/s  1.0s\\n'
    """

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic):
        self._line = ProgressLine(stream, min_interval_s=0, clock=clock)

    def __call__(self, done: int, failed: int, running: int, total: int, sim_ps: float) -> None:
        elapsed_s = self._line.elapsed_s()
        self._line.draw(format_sweep_progress(done, failed, running, total, sim_ps, elapsed_s))

    def validating(self, checked: int, total: int) -> None:
        """Before the runs start: how many of them have been validated."""
        self._line.draw(f"validating runs {checked}/{total}  {self._line.elapsed_s():.1f}s")

    def close(self) -> None:
        """End the progress line with a newline (no-op if nothing was drawn)."""
        self._line.close()


def _three_digits(x: float) -> str:
    """Three significant digits without exponent notation: 1.23, 12.3, 123."""
    if abs(x) >= 99.95:
        return f"{x:.0f}"
    if abs(x) >= 9.995:
        return f"{x:.1f}"
    return f"{x:.2f}"
