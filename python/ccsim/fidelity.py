"""ccsim beside the HPCC ns-3 simulator: the same metrics from a reference run's output files
and from a ccsim run's tables, computed the same way, and the gap between them.

A reference folder (``tests/fidelity/hpcc-ns3/*``) holds the simulator's ``fct_*.txt`` and
``pfc_*.txt`` and, for the 10-to-1 incast, the bottleneck queue and per-sender wire throughput
as CSV. Times count from the first flow's start (the simulator starts flows at 2 s).
Percentiles follow the simulator's analysis scripts: ``sorted(a)[int(n * p)]``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccsim.api import SIZE_BINS, ScenarioError, read_toml_text
from ccsim.measures import jain_index, percentile

#: Size bins of the comparison: all flows, and ACC's bins, as the papers report them.
BINS = {
    "all": (0, math.inf),
    **{label: (lo, hi or math.inf) for fam, label, lo, hi in SIZE_BINS if fam == "acc"},
}
#: Windows of the time-averaged bottleneck queue, in ms from the flows' start.
QUEUE_WINDOWS_MS = ((0, 1), (1, 2), (2, 6))
#: The window of per-flow throughput and Jain's index, in ms from the flows' start.
TPUT_WINDOW_MS = (2, 6)


def fct_metrics(size: Sequence[float], fct_us: Sequence[float], slowdown: Sequence[float]) -> dict:
    """FCT min/p50/max (us, all flows) and slowdown p50/p95/p99 per size bin."""
    out = {
        "fct_min_us": min(fct_us, default=math.nan),
        "fct_p50_us": percentile(fct_us, 0.5),
        "fct_max_us": max(fct_us, default=math.nan),
    }
    for label, (lo, hi) in BINS.items():
        mine = [s for b, s in zip(size, slowdown) if lo <= b < hi]
        for p in (50, 95, 99):
            out[f"slowdown_p{p} {label}"] = percentile(mine, p / 100)
        out[f"flows {label}"] = len(mine)
    return out


@functools.cache
def reference(folder: Path) -> dict[str, float]:
    """The metrics of the simulator's run in ``folder`` (read once)."""
    import pandas as pd

    folder = Path(folder)
    fct_file = _one(folder, "fct_*.txt")
    cols = ["sip", "dip", "sport", "dport", "size", "start_ns", "fct_ns", "ideal_ns"]
    f = pd.read_csv(fct_file, sep=r"\s+", header=None, names=cols)
    out = fct_metrics(f["size"], f["fct_ns"] / 1e3, f["fct_ns"] / f["ideal_ns"])
    pfc_file = _one(folder, "pfc_*.txt")
    pfc = pd.read_csv(pfc_file, sep=r"\s+", header=None, names=["t", "node", "type", "if", "pause"])
    # Node type 0 is a host: the PAUSEs hosts received.
    out["pauses_to_hosts"] = int(((pfc["type"] == 0) & (pfc["pause"] == 1)).sum())
    qlen = list(folder.glob("S1_*_qlen_10us.csv"))
    if qlen:
        q = pd.read_csv(qlen[0])
        out.update(_queue_windows(q["t_us"], q["bottleneck_qlen_bytes"]))
        t = pd.read_csv(_one(folder, "S1_*_flowtput_100us.csv"))
        lo, hi = (x * 1e3 for x in TPUT_WINDOW_MS)
        window = t[(t["bin_start_us"] >= lo) & (t["bin_start_us"] < hi)]
        out.update(_tput(window.drop(columns="bin_start_us").mean().tolist()))
    return out


def ccsim_run(res: Any, scheme: str) -> dict[str, float]:
    """The same metrics of one ccsim run (a SweepResult holding one run, made with
    ``output.ideal_fct = "hpcc"``, queue probe on the bottleneck and rate probe for S1)."""
    f = res.flows
    if f["finish_ps"].isna().any():
        raise ScenarioError("fidelity: a flow did not finish; the comparison needs them all")
    t0_us = float(f["start_us"].min())
    out = fct_metrics(f["size_bytes"], f["fct_us"], f["slowdown"])
    ports = res.pfc_ports
    out["pauses_to_hosts"] = int(ports[ports["layer"] == "host"]["pauses_received"].sum())
    q = res.queues
    if len(q):
        out.update(_queue_windows(q["time_us"] - t0_us, q["queue_bytes"]))
        r = res.rates
        lo, hi = (t0_us + x * 1e3 for x in TPUT_WINDOW_MS)
        window = r[(r["time_us"] > lo) & (r["time_us"] <= hi)]
        wire = wire_per_payload_byte(res, scheme) / 1e9
        out.update(_tput((window.groupby("flow")["throughput_bps"].mean() * wire).tolist()))
    return out


def wire_per_payload_byte(res: Any, scheme: str) -> float:
    """Bytes on the wire per payload byte of a full data packet in the run: its resolved host
    header and MTU, and the scheme's own header bytes as the engine registers them."""
    from ccsim import api

    host = read_toml_text(next(iter(res.configs.values())), "config.toml")["host"]
    header = host["header_bytes"] + api.catalog()["schemes"][scheme]["header_bytes"]
    return (host["mtu_payload_bytes"] + header) / host["mtu_payload_bytes"]


def gaps(
    ref: Mapping[str, float], sim: Mapping[str, float]
) -> list[tuple[str, float, float, float]]:
    """(metric, reference, ccsim, relative gap) for every metric both have; the gap is NaN where
    the reference is 0."""
    rows = []
    for key, r in ref.items():
        if key in sim and not key.startswith("flows ") and not math.isnan(r):
            s = sim[key]
            rows.append((key, r, s, (s - r) / r if r else math.nan))
    return rows


def format_table(title: str, rows: Sequence[tuple[str, float, float, float]]) -> str:
    """A side-by-side table: metric, the simulator's value, ccsim's, and the gap in %."""
    lines = [f"  {title}", f"    {'metric':<26}{'HPCC sim':>12}{'ccsim':>12}{'gap':>9}"]
    for key, r, s, g in rows:
        gap = "-" if math.isnan(g) else f"{100 * g:+.1f}%"
        lines.append(f"    {key:<26}{r:>12.4g}{s:>12.4g}{gap:>9}")
    return "\n".join(lines)


def _queue_windows(t_us: Any, qbytes: Any) -> dict[str, float]:
    out = {}
    for lo, hi in QUEUE_WINDOWS_MS:
        mask = (t_us >= lo * 1e3) & (t_us < hi * 1e3)
        out[f"queue_kb {lo}-{hi}ms"] = float(qbytes[mask].mean()) / 1e3
    return out


def _tput(per_flow_gbps: Sequence[float]) -> dict[str, float]:
    x = [float(v) for v in per_flow_gbps]
    return {"tput_gbps_min": min(x), "tput_gbps_max": max(x), "jain": jain_index(x)}


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise ScenarioError(f"{folder}: expected one {pattern}, found {len(found)}")
    return found[0]
