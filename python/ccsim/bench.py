"""Built-in benchmarks, each run in a fresh interpreter so peak memory is per benchmark.

``python -m ccsim.bench NAME`` runs one benchmark in this process and prints one JSON line;
``ccsim bench`` calls that once per benchmark (:func:`run_isolated`) and prints a table. The
scenarios themselves come from the engine (``_core.bench_scenario``); speed figures are the
engine's own ``summary["perf"]``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from ccsim import _core
from ccsim.progress import format_count, format_time_ps
from ccsim.provenance import describe

BENCHMARKS: tuple[str, ...] = tuple(_core.BENCHMARKS)


def measure(
    name: str,
    min_total_s: float = 1.0,
    max_runs: int = 5,
    threads: int = 1,
    partitions: int | None = None,
) -> dict[str, Any]:
    """Run benchmark ``name`` in this process and return its figures.

    A short benchmark is repeated (until ``min_total_s`` of wall time or ``max_runs`` runs) and
    the run with the median wall time is reported, so one noisy run does not decide the number.
    With ``threads`` > 1 it runs on the parallel engine, and the row adds the synchronization:
    partitions, windows per simulated ms, crossings, each thread's idle fraction and the
    critical path (each window's slowest partition, summed: at the speed the partitions ran,
    the least time any thread count could take). ``partitions`` caps the parallel run's cut
    (the scenario key of that name; None: as many as threads).

    Examples
    --------
    >>> measure("incast")["events_per_s"]  # doctest: +SKIP
    31415926.5
    """
    text = _core.bench_scenario(name)
    runs = []
    t_start = time.perf_counter()
    while len(runs) < max_runs and (not runs or time.perf_counter() - t_start < min_total_s):
        overrides = [f"threads={threads}"]
        if partitions is not None and threads != 1:
            overrides.append(f"partitions={partitions}")
        raw = _core.run(text, os.getcwd(), None, overrides, None, None, 1 << 30)
        runs.append(json.loads(raw["summary"]))
    runs.sort(key=lambda s: s["perf"]["wall_s"])
    summary = runs[len(runs) // 2]
    perf = summary["perf"]
    row = {
        "name": name,
        "threads": threads,
        "runs": len(runs),
        "sim_time_ps": summary["sim_time_ps"],
        "build_s": perf["build_s"],
        "wall_s": perf["wall_s"],
        "wall_s_per_sim_ms": perf["wall_s_per_sim_ms"],
        "peak_mb": _peak_rss_mb(),
        "events": summary["events"],
        "events_per_s": perf["events_per_s"],
        "link_traversals": summary["link_traversals"],
        "traversals_per_s": perf["traversals_per_s"],
    }
    sync = perf.get("parallel")
    if sync is not None:
        row["partitions"] = sync["partitions"]
        row["windows_per_sim_ms"] = sync["windows_per_sim_ms"]
        row["crossings"] = sync["crossings"]
        row["idle_fraction"] = sync["idle_fraction"]
        row["serial_s"] = sync["serial_s"]
        row["critical_path_s"] = sync["critical_path_s"]
    return row


def run_isolated(name: str, threads: int = 1, partitions: int | None = None) -> dict[str, Any]:
    """Run ``python -m ccsim.bench name threads [partitions]`` in a subprocess; its JSON line as
    a dict.

    Raises
    ------
    RuntimeError
        If the subprocess fails (its own one-line error is already on stderr).
    """
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim.bench", name, str(threads)]
        + ([str(partitions)] if partitions is not None else []),
        check=False,
        stdout=subprocess.PIPE,
        text=True,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"benchmark {name!r} failed (exit code {proc.returncode})")
    return json.loads(lines[-1])


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """Benchmark results as an aligned text table.

    Examples
    --------
    >>> print(format_table([{"name": "incast", "sim_time_ps": 10**10, "runs": 3, "build_s": 0.001,
    ...     "wall_s": 1.5, "wall_s_per_sim_ms": 0.15, "peak_mb": 42.0, "events": 3 * 10**7,
    ...     "events_per_s": 2 * 10**7, "traversals_per_s": 2.5 * 10**7}]))
    name    threads  sim time  runs  build s  wall s  s/sim ms  peak MB  events  events/s  traversals/s
    incast        1  10.0 ms      3    0.001    1.50     0.150     42.0  30.0 M    20.0 M        25.0 M
    """
    parallel = any("partitions" in r for r in rows)
    # Speed-up over the same benchmark's one-thread row, when the table has one.
    one = {r.get("name"): r["wall_s"] for r in rows if r.get("threads", 1) == 1 and "wall_s" in r}
    speedup = parallel and bool(one)
    header = [
        "name",
        "threads",
        "sim time",
        "runs",
        "build s",
        "wall s",
        "s/sim ms",
        "peak MB",
        "events",
        "events/s",
        "traversals/s",
    ]
    body = [
        [
            str(r.get("name", "?")),
            str(r.get("threads", 1)),
            _or_dash(r.get("sim_time_ps"), format_time_ps),
            str(r.get("runs", 1)),
            _or_dash(r.get("build_s"), lambda x: f"{x:.3f}"),
            _or_dash(r.get("wall_s"), lambda x: f"{x:.2f}"),
            _or_dash(r.get("wall_s_per_sim_ms"), lambda x: f"{x:.3f}"),
            _or_dash(r.get("peak_mb"), lambda x: f"{x:.1f}"),
            _or_dash(r.get("events"), format_count),
            _or_dash(r.get("events_per_s"), format_count),
            _or_dash(r.get("traversals_per_s"), format_count),
            *(
                [
                    _or_dash(r.get("partitions"), str),
                    _or_dash(r.get("windows_per_sim_ms"), lambda x: f"{x:.0f}"),
                    _or_dash(r.get("idle_fraction"), lambda x: f"{100 * max(x):.0f}%"),
                    _or_dash(r.get("critical_path_s"), lambda x: f"{x:.2f}"),
                ]
                if parallel
                else []
            ),
            *([_speedup(one.get(r.get("name")), r.get("wall_s"))] if speedup else []),
        ]
        for r in rows
    ]
    if parallel:
        header += ["partitions", "windows/sim ms", "idle max", "critical path s"]
    if speedup:
        header += ["speed-up"]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    # The name and sim time read left to right; the numbers line up on the right.
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i in (0, 2) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths))
        ).rstrip()
        for row in [header, *body]
    )


def markdown_page(rows: Sequence[dict[str, Any]], command: str, made: dict[str, str]) -> str:
    """The documentation's page of the latest benchmark table (``ccsim bench --page``): the
    table of :func:`format_table`, the command that measured it, and where and when."""
    return "\n".join(
        [
            "# Benchmarks: the latest measurement",
            "",
            "Generated by `ccsim bench --page`; [Speed](benchmarks.md) explains the benchmarks",
            "and the measurements before this one.",
            "",
            f"Measured {describe(made)}, with `{command}`. Runs this short vary by 20% or more",
            "on a shared machine.",
            "",
            "```",
            format_table(rows),
            "```",
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ccsim.bench NAME [THREADS [PARTITIONS]]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    ok = 1 <= len(args) <= 3 and args[0] in BENCHMARKS and all(a.isdigit() for a in args[1:])
    if not ok:
        names = ",".join(BENCHMARKS)
        print(f"usage: python -m ccsim.bench {{{names}}} [THREADS [PARTITIONS]]", file=sys.stderr)
        return 2
    try:
        threads = int(args[1]) if len(args) >= 2 else 1
        partitions = int(args[2]) if len(args) == 3 else None
        row = measure(args[0], threads=threads, partitions=partitions)
        print(json.dumps(row), flush=True)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 -- one line, as everywhere in the CLI
        print(f"ccsim bench: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def _peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10  # bytes on macOS, else KiB


def _speedup(one_thread_s: float | None, wall_s: float | None) -> str:
    """One thread's wall time over this row's, as ``1.60x`` (``-`` without both)."""
    if one_thread_s is None or not wall_s:
        return "-"
    return f"{one_thread_s / wall_s:.2f}x"


def _or_dash(value: Any, fmt: Any) -> str:
    return "-" if value is None else fmt(value)


if __name__ == "__main__":
    sys.exit(main())
