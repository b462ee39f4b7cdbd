"""Measures over results: the functions a paper claim calls (``stat``, ``jain``, ``fct_us``,
``pauses`` ...), each taking a :class:`SweepResult` and keyword filters that select runs by
parameter (``load=0.8``), and the plain statistics they and the fidelity comparison share
(Jain's index, the HPCC simulator's percentile).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable

from ccsim import api
from ccsim.api import ScenarioError
from ccsim.sweeps import STATUS_OK, SweepResult

if TYPE_CHECKING:
    import pandas as pd


class ClaimError(Exception):
    """A claim's check could not be measured (no matching runs, no samples, unknown field)."""


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index of ``values``: (sum x)^2 / (n sum x^2), 1 when all are equal.

    Examples
    --------
    >>> jain_index([5.0, 5.0]), jain_index([1.0, 0.0])
    (1.0, 0.5)
    """
    values = [float(x) for x in values]
    if not values or any(not x >= 0 for x in values):  # negative or NaN
        raise ClaimError(
            f"jain_index: needs one or more rates >= 0, got {values[:5]}"
            + (" ..." if len(values) > 5 else "")
        )
    total_sq = sum(x * x for x in values)
    return 1.0 if total_sq == 0 else float(sum(values) ** 2 / (len(values) * total_sq))


def percentile(values: Sequence[float], p: float) -> float:
    """The HPCC simulator's percentile (its analysis scripts): ``sorted(a)[int(n * p)]``, NaN
    for no values.

    Examples
    --------
    >>> percentile([4, 1, 3, 2], 0.5), percentile([4, 1, 3, 2], 0.99)
    (3, 4)
    """
    a = sorted(values)
    return a[min(int(len(a) * p), len(a) - 1)] if a else math.nan


def stat(res: SweepResult, key: str, agg: str = "mean", **where: Any) -> float:
    """A summary field (``fct.acc.<100KB.slowdown_p99``, ``pfc.pauses_sent``, ...) over the
    matching successful runs, aggregated with ``agg`` (mean, min, max, sum)."""
    runs = select_runs(res, where).ok_runs
    if key not in runs.columns:
        raise ClaimError(
            f"unknown summary field `{key}`; e.g. fct.acc.<100KB.slowdown_p99, "
            "fct.all.fct_avg_us, pfc.by_layer.agg.pauses_received, flows.unfinished"
        )
    return aggregate(runs[key].dropna(), agg, f"stat({key!r})")


def by(res: SweepResult, key: str, over: str, **where: Any) -> list[float]:
    """``stat(key)`` (mean over the other parameters, e.g. seeds) for each value of parameter
    ``over``, in increasing order of that value."""
    sel = select_runs(res, where)
    col = _param(sel, over)
    return [stat(sel.where({col: v}), key) for v in sorted(sel.ok_runs[col].unique())]


def spread(res: SweepResult, *values: float | Sequence[float]) -> float:
    """The largest of ``values`` over the smallest: 1 means insensitive. Takes one list
    (``spread(by(key, over='load'))``) or the numbers themselves (``spread(stat(key,
    case='a'), stat(key, case='b'))``, to compare some of a parameter's values)."""
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = tuple(values[0])
    if not values or any(isinstance(v, (list, tuple)) for v in values) or min(values) <= 0:
        raise ClaimError(f"spread: needs positive values, got {list(values)}")
    return max(values) / min(values)


def increasing(res: SweepResult, values: Sequence[float]) -> bool:
    """True if ``values`` strictly increase."""
    return len(values) > 1 and all(a < b for a, b in zip(values, values[1:]))


def decreasing(res: SweepResult, values: Sequence[float]) -> bool:
    """True if ``values`` strictly decrease."""
    return len(values) > 1 and all(a > b for a, b in zip(values, values[1:]))


def failed_runs(res: SweepResult, **where: Any) -> int:
    """How many matching runs failed; without filters, runs missing from the results count too."""
    sel = res.where(_filters(res, where))
    missing = 0 if where else len(res.missing)
    return int((sel.runs["status"] != STATUS_OK).sum()) + missing


def jain(
    res: SweepResult,
    after_us: float = 0,
    until_us: float = math.inf,
    agg: str = "mean",
    **where: Any,
) -> float:
    """Jain's fairness index of the probed flows' mean goodput over ``[after_us, until_us)``
    (flows with samples there), per run, aggregated over runs with ``agg``. NaN (so every
    comparison fails) where no flow delivered anything: nothing shared is not a fair share."""

    def one(rates: pd.DataFrame) -> float:
        window = rates[rates["time_us"] < until_us]
        if window.empty:
            raise ClaimError(f"jain: no rate samples before {until_us} us")
        means = list(window.groupby("flow")["throughput_bps"].mean())
        return jain_index(means) if any(means) else math.nan

    return _per_run(res, "rates", after_us, one, agg, where)


def rate_error(
    res: SweepResult, target_gbps: float, after_us: float = 0, agg: str = "max", **where: Any
) -> float:
    """The largest relative gap between a probed flow's mean goodput from ``after_us`` on and
    ``target_gbps``, per run, aggregated over runs with ``agg`` (default: the worst)."""

    def one(rates: pd.DataFrame) -> float:
        x = rates.groupby("flow")["throughput_bps"].mean() / 1e9
        return float(((x - target_gbps).abs() / target_gbps).max())

    return _per_run(res, "rates", after_us, one, agg, where)


def sending_gbps(
    res: SweepResult,
    after_us: float = 0,
    until_us: float = math.inf,
    stat: str = "mean",
    agg: str = "mean",
    **where: Any,
) -> float:
    """The probed flows' aggregate sending rate (the rates their congestion control set, in
    Gb/s, summed per sample) over ``[after_us, until_us)``: its ``stat`` over time (``mean``,
    ``min`` or ``max``), per run, aggregated over runs with ``agg``."""
    if stat not in ("mean", "min", "max"):
        raise ClaimError(f"sending_gbps: stat=`{stat}`; use mean, min or max")

    def one(rates: pd.DataFrame) -> float:
        window = rates[rates["time_us"] < until_us]
        if window.empty:
            raise ClaimError(f"sending_gbps: no rate samples before {until_us} us")
        total = window.groupby("time_us")["rate_bps"].sum() / 1e9
        return float(getattr(total, stat)())

    return _per_run(res, "rates", after_us, one, agg, where)


def utilization(
    res: SweepResult,
    after_us: float = 0,
    link: str | None = None,
    until_us: float = math.inf,
    agg: str = "mean",
    **where: Any,
) -> float:
    """Mean utilization of probed ``link`` (default: every probed link) over
    ``[after_us, until_us)``."""
    fn = _link_mean(link, "utilization", 1.0, until_us)
    return _per_run(res, "queues", after_us, fn, agg, where)


def busy_utilization(
    res: SweepResult, link: str | None = None, agg: str = "mean", **where: Any
) -> float:
    """Mean utilization of probed ``link`` (default: every probed link) over each run's busy
    period: from the first flow's start to the last flow's finish (to the last sample when some
    flow is unfinished), the experiment's utilization of its links (ccsim's reading of AMRT's
    Fig. 15)."""
    sel = select_runs(res, where)
    flows, queues = sel.table("flows"), sel.table("queues")
    if queues.empty:
        raise ClaimError("no queues samples; enable [output] queues probes in the scenario")
    fn = _link_mean(link, "utilization", 1.0)
    values = []
    for rid in sel.ok_runs["run_id"]:
        f = flows[flows["run_id"] == rid]
        if f.empty:
            raise ClaimError(f"run {rid} has no flows")
        q = queues[queues["run_id"] == rid]
        end_us = math.inf if f["finish_us"].isna().any() else f["finish_us"].max()
        one = q[(q["time_us"] >= f["start_us"].min()) & (q["time_us"] < end_us)]
        if one.empty:
            raise ClaimError(f"run {rid} has no queue samples while its flows run")
        values.append(fn(one))
    return aggregate(values, agg, "queues")


def queue_kb(
    res: SweepResult,
    after_us: float = 0,
    link: str | None = None,
    until_us: float = math.inf,
    agg: str = "mean",
    stat: str = "mean",
    **where: Any,
) -> float:
    """Queue length (KB) of probed ``link`` (default: every probed link) over ``[after_us,
    until_us)``: its mean, or with ``stat`` its ``max`` or ``min`` sample, per run."""
    fn = _link_mean(link, "queue_bytes", 1e-3, until_us, stat)
    return _per_run(res, "queues", after_us, fn, agg, where)


def queue_drain_us(
    res: SweepResult, link: str, kb: float, agg: str = "mean", **where: Any
) -> float:
    """When probed ``link``'s queue first fell to ``kb`` KB or under after its peak, per run
    (infinite if it never did), aggregated over runs: the drain time of PCN's Eq. 8."""

    def one(queues: pd.DataFrame) -> float:
        q = queues[queues["link"] == link]
        if q.empty:
            raise ClaimError(f"link `{link}` is not probed; name a port in [output] queues")
        peak_us = q.loc[q["queue_bytes"].idxmax(), "time_us"]
        under = q[(q["time_us"] > peak_us) & (q["queue_bytes"] <= kb * 1e3)]["time_us"]
        return float(under.iloc[0]) if len(under) else math.inf

    return _per_run(res, "queues", 0, one, agg, where)


def flow_queue_kb(
    res: SweepResult,
    link: str,
    flow: int,
    after_us: float = 0,
    until_us: float = math.inf,
    agg: str = "max",
    **where: Any,
) -> float:
    """The peak of flow ``flow``'s bytes (KB) in probed ``link``'s queue over ``[after_us,
    until_us)``, per run, aggregated over runs with ``agg`` (needs ``by_flow = true`` in
    ``[output] queues``)."""

    def one(mine: pd.DataFrame) -> float:
        return float(mine["queue_bytes"].max()) / 1e3 if len(mine) else 0.0

    return _flow_queue(res, link, flow, after_us, until_us, one, agg, where)


def flow_queue_span_us(
    res: SweepResult,
    link: str,
    flow: int,
    kb: float = 1,
    after_us: float = 0,
    agg: str = "mean",
    **where: Any,
) -> float:
    """How long flow ``flow`` kept at least ``kb`` KB queued at probed ``link`` from
    ``after_us`` on: its first such sample to its last (0 without any), per run; e.g. how long
    a victim was blocked behind a paused port (ACC Figures 3-4)."""

    def one(mine: pd.DataFrame) -> float:
        t = mine[mine["queue_bytes"] >= kb * 1e3]["time_us"]
        return float(t.max() - t.min()) if len(t) else 0.0

    return _flow_queue(res, link, flow, after_us, math.inf, one, agg, where)


def _flow_queue(
    res: SweepResult,
    link: str,
    flow: int,
    after_us: float,
    until_us: float,
    fn: Callable[[pd.DataFrame], float],
    agg: str,
    where: Mapping[str, Any],
) -> float:
    """``fn`` of each run's samples of ``flow`` at probed ``link`` in ``[after_us, until_us)``
    (a flow with nothing queued at a sample has no row there)."""
    probed = select_runs(res, where).queues
    if probed.empty or link not in set(probed["link"]):
        raise ClaimError(f"link `{link}` is not probed; name it in [output] queues, by_flow = true")

    def one(fq: pd.DataFrame) -> float:
        mine = fq[(fq["link"] == link) & (fq["flow"] == flow) & (fq["time_us"] < until_us)]
        return fn(mine)

    return _per_run(res, "flow_queues", after_us, one, agg, where)


def drain_ratio(
    res: SweepResult, link: str, gbps: float, after_us: float = 0, agg: str = "max", **where: Any
) -> float:
    """How long probed ``link``'s queue took from its peak to under 5% of it, over the time a
    ``gbps`` link needs to send the peak: 1 means it drained at that line rate."""

    def one(queues: pd.DataFrame) -> float:
        q = queues[queues["link"] == link]
        if q.empty:
            raise ClaimError(f"link `{link}` is not probed; name a port in [output] queues")
        peak_at = q["queue_bytes"].idxmax()
        peak = float(q.loc[peak_at, "queue_bytes"])
        later = q.loc[peak_at:]
        below = later[later["queue_bytes"] < 0.05 * peak]
        if peak <= 0 or below.empty:
            raise ClaimError(
                f"drain_ratio: the queue of `{link}` never drains below 5% of its peak"
            )
        drain_us = float(below["time_us"].iloc[0] - q.loc[peak_at, "time_us"])
        return drain_us / (peak * 8 / (gbps * 1e3))

    return _per_run(res, "queues", after_us, one, agg, where)


def halt_error(res: SweepResult, link: str, gbps: float, agg: str = "max", **where: Any) -> float:
    """ACC's halts against the ideal (Fig. 10(b)): each flow's first halt (``halts`` table) over
    the ideal halt time, probed ``link``'s peak queue over the time a ``gbps`` link needs to
    send it. The largest |halt / ideal - 1| over the run's flows, aggregated over runs."""
    sel = select_runs(res, where)
    halts, queues = sel.halts, sel.queues
    values = []
    for rid in sel.ok_runs["run_id"]:
        q = queues[(queues["run_id"] == rid) & (queues["link"] == link)] if len(queues) else queues
        h = halts[halts["run_id"] == rid] if len(halts) else halts
        if q.empty:
            raise ClaimError(f"link `{link}` is not probed; name a port in [output] queues")
        if h.empty:
            raise ClaimError(f"run {rid} has no halts (the halts table is ACC's)")
        ideal_ps = q["queue_bytes"].max() * 8 / (gbps * 1e9) * 1e12
        first = h.groupby("flow").first()
        values.append(float(((first["end_ps"] - first["start_ps"]) / ideal_ps - 1).abs().max()))
    return aggregate(values, agg, "halt_error")


def goodput_gbps(
    res: SweepResult,
    flow: int,
    after_us: float = 0,
    until_us: float = math.inf,
    agg: str = "mean",
    **where: Any,
) -> float:
    """Probed flow ``flow``'s mean goodput (Gb/s) over ``[after_us, until_us)``, per run,
    aggregated over runs with ``agg``."""

    def one(rates: pd.DataFrame) -> float:
        mine = rates[(rates["flow"] == flow) & (rates["time_us"] < until_us)]
        if mine.empty:
            raise ClaimError(f"goodput_gbps: flow {flow} has no rate samples in the window")
        return float(mine["throughput_bps"].mean()) / 1e9

    return _per_run(res, "rates", after_us, one, agg, where)


def pauses(
    res: SweepResult,
    node: str | None = None,
    to_node: str | None = None,
    after_us: float = 0,
    until_us: float = math.inf,
    prio: int | None = None,
    agg: str = "mean",
    **where: Any,
) -> float:
    """PFC PAUSE frames ``node`` sent to ``to_node`` (both unset: every port of the fabric)
    over the run, or (with ``after_us``, ``until_us`` or ``prio``, from the recorded PFC
    events) those in ``[after_us, until_us)`` for priority ``prio``; aggregated over runs."""
    sel = select_runs(res, where)
    if (node is None) != (to_node is None):
        raise ClaimError("pauses: give both node and to_node (one port), or neither (all)")
    ports = sel.pfc_ports
    if node is not None:
        ports = ports[(ports["node"] == node) & (ports["to_node"] == to_node)]
        if ports.empty:
            raise ClaimError(f"pauses: no port `{node}->{to_node}`; name two adjacent nodes")
    if after_us == 0 and until_us == math.inf and prio is None:
        per_run = ports.groupby("run_id")["pauses_sent"].sum()
    else:
        ev = sel.pfc_events
        recorded = (
            api.read_toml_text(c, rid).get("output", {}).get("pfc_events")
            for rid, c in sel.configs.items()
        )
        if ev.empty and not any(recorded):
            raise ClaimError(
                "pauses in a window or of one priority need [output] pfc_events = true"
            )
        keep = (ev["kind"] == "pause") & (ev["time_us"] >= after_us) & (ev["time_us"] < until_us)
        if node is not None:
            keep &= (ev["node"] == node) & (ev["to_node"] == to_node)
        if prio is not None:
            keep &= ev["prio"] == prio
        per_run = ev[keep].groupby("run_id").size()
    return aggregate([per_run.get(rid, 0) for rid in sel.ok_runs["run_id"]], agg, "pauses")


def pause_span_us(
    res: SweepResult, node: str, to_node: str, after_us: float = 0, agg: str = "mean", **where: Any
) -> float:
    """How long ``node`` kept pausing ``to_node``: from its first PAUSE frame at or after
    ``after_us`` to its last (0 without any), per run, aggregated over runs with ``agg``."""
    sel = select_runs(res, where)
    ev = sel.pfc_events
    ev = ev[
        (ev["kind"] == "pause")
        & (ev["node"] == node)
        & (ev["to_node"] == to_node)
        & (ev["time_us"] >= after_us)
    ]
    spans = []
    for rid in sel.ok_runs["run_id"]:
        t = ev[ev["run_id"] == rid]["time_us"]
        spans.append(float(t.max() - t.min()) if len(t) else 0.0)
    return aggregate(spans, agg, "pause_span_us")


def rate_settle_us(
    res: SweepResult,
    gbps: float,
    tolerance: float = 0.05,
    hold_us: float = 5000,
    agg: str = "mean",
    **where: Any,
) -> float:
    """When the probed flows' aggregate sending rate (their CC rates, summed per sample) came
    within ``tolerance`` of ``gbps`` and stayed there for ``hold_us``: the first such sample's
    time, per run (infinite if never), aggregated over runs with ``agg``."""

    def one(rates: pd.DataFrame) -> float:
        total = rates.groupby("time_us")["rate_bps"].sum() / 1e9
        inside = (total - gbps).abs() <= tolerance * gbps
        times = total.index
        end = times[-1]
        for t in times[inside.to_numpy()]:
            if t + hold_us > end:
                break
            if inside[(times >= t) & (times < t + hold_us)].all():
                return float(t)
        return math.inf

    return _per_run(res, "rates", 0, one, agg, where)


def queue_settle_us(
    res: SweepResult, link: str, kb: float, agg: str = "mean", **where: Any
) -> float:
    """When probed ``link``'s queue fell under ``kb`` KB for good: the first sample after the
    last one at or above it, per run (infinite if the run ends above), aggregated over runs."""

    def one(queues: pd.DataFrame) -> float:
        q = queues[queues["link"] == link]
        if q.empty:
            raise ClaimError(f"link `{link}` is not probed; name a port in [output] queues")
        above = q[q["queue_bytes"] >= kb * 1e3]["time_us"]
        if above.empty:
            return float(q["time_us"].iloc[0])
        later = q[q["time_us"] > above.iloc[-1]]["time_us"]
        return float(later.iloc[0]) if len(later) else math.inf

    return _per_run(res, "queues", 0, one, agg, where)


def fill_us(
    res: SweepResult,
    link: str,
    level: float = 0.9,
    window_us: float = 100,
    after_us: float = 0,
    after_flow: int | None = None,
    until_us: float = math.inf,
    agg: str = "mean",
    **where: Any,
) -> float:
    """How long probed ``link`` took to fill (AMRT's Eq. 2-3): from ``after_us``, or from flow
    ``after_flow``'s finish, to the first sample from which its utilization averaged over
    every ``window_us`` window up to ``until_us`` stays at or above ``level``; per run
    (infinite if it never does), aggregated over runs."""
    import numpy as np

    sel = select_runs(res, where)
    queues = sel.table("queues")
    flows = sel.table("flows") if after_flow is not None else None
    values = []
    for rid in sel.ok_runs["run_id"]:
        q = queues[(queues["run_id"] == rid) & (queues["link"] == link)]
        if q.empty:
            raise ClaimError(f"link `{link}` is not probed; name a port in [output] queues")
        start = after_us
        if flows is not None:
            mine = flows[(flows["run_id"] == rid) & (flows["id"] == after_flow)]
            if mine.empty or mine["finish_us"].isna().all():
                raise ClaimError(f"fill_us: flow {after_flow} did not finish in run {rid}")
            start = float(mine["finish_us"].iloc[0])
        q = q[(q["time_us"] >= start) & (q["time_us"] < until_us)].sort_values("time_us")
        t, u = q["time_us"].to_numpy(), q["utilization"].to_numpy()
        if len(t) < 2:
            raise ClaimError(f"fill_us: fewer than two samples of `{link}` in the window")
        w = max(1, round(window_us / float(np.median(np.diff(t)))))
        means = np.convolve(u, np.ones(w) / w, mode="valid")
        below = np.nonzero(means < level)[0]
        first = 0 if below.size == 0 else int(below[-1]) + 1
        values.append(float(t[first] - start) if first < len(means) else math.inf)
    return aggregate(values, agg, "fill_us")


def completion_rate(
    res: SweepResult, until_us: float | None = None, agg: str = "mean", **where: Any
) -> float:
    """Flows completed per second (PCN's flow completion rate), per run: those finished by
    ``until_us`` over that time, or (default) every finished flow over the span from the first
    start to the last finish; aggregated over runs with ``agg``."""

    def one(flows: pd.DataFrame) -> float:
        done = flows[flows["finish_us"].notna()]
        if until_us is not None:
            return int((done["finish_us"] <= until_us).sum()) / (until_us * 1e-6)
        if done.empty:
            return 0.0
        span_us = float(done["finish_us"].max() - flows["start_us"].min())
        return len(done) / (span_us * 1e-6)

    return _per_run(res, "flows", None, one, agg, where)


def fct_us(
    res: SweepResult,
    stat: str = "mean",
    src: int | str | None = None,
    agg: str = "mean",
    **where: Any,
) -> float:
    """The FCT (us) of finished sized flows, or of those from host ``src`` (an id, or "A..B"
    for hosts A to B): their mean (``stat="mean"``) or a percentile (``"p99"``), per run,
    aggregated over runs with ``agg``."""
    import numpy as np

    if isinstance(src, str):
        a, _, b = src.partition("..")
        if not (a.isdigit() and b.isdigit()):
            raise ClaimError(f'fct_us: src={src!r}; give a host id or a range "A..B"')
        hosts = range(int(a), int(b) + 1)
    else:
        hosts = None if src is None else range(src, src + 1)
    if stat != "mean" and not (stat[:1] == "p" and stat[1:].replace(".", "", 1).isdigit()):
        raise ClaimError(f"fct_us: stat={stat!r}; use mean or a percentile such as p99")

    def one(flows: pd.DataFrame) -> float:
        done = flows[flows["finish_us"].notna() & (flows["size_bytes"] > 0)]
        if hosts is not None:
            done = done[done["src"].isin(hosts)]
        if done.empty:
            raise ClaimError(f"fct_us: no finished flow from src={src}")
        if stat == "mean":
            return float(done["fct_us"].mean())
        return float(np.percentile(done["fct_us"], float(stat[1:])))

    return _per_run(res, "flows", None, one, agg, where)


def _phases(
    flows: pd.DataFrame, n: int, settle_us: float, end_us: float
) -> list[tuple[float, float, list[int]]]:
    """The intervals (from ``settle_us`` after it begins) in which exactly ``n`` flows run,
    with those flows' ids; the last one ends at ``end_us``."""
    ends = flows["finish_us"].fillna(math.inf)
    times = sorted(set(flows["start_us"]) | set(ends[ends < end_us]) | {end_us})
    out = []
    for t0, t1 in zip(times, times[1:]):
        active = flows[(flows["start_us"] <= t0) & (ends >= t1)]
        if len(active) == n and t1 - t0 > settle_us:
            out.append((t0 + settle_us, t1, [int(f) for f in active["id"]]))
    return out


def _phase_goodputs(
    res: SweepResult, n: int, settle_us: float, where: Mapping[str, Any]
) -> list[list[float]]:
    """Per run, per interval with exactly ``n`` flows running: each one's mean goodput (Gb/s)
    from ``settle_us`` after the interval begins to its end."""
    sel = select_runs(res, where)
    flows, rates = sel.flows, sel.table("rates")
    out = []
    for rid in sel.ok_runs["run_id"]:
        mine = rates[rates["run_id"] == rid]
        end_us = float(mine["time_us"].max()) if len(mine) else 0.0
        for t0, t1, ids in _phases(flows[flows["run_id"] == rid], n, settle_us, end_us):
            w = mine[(mine["time_us"] > t0) & (mine["time_us"] <= t1) & mine["flow"].isin(ids)]
            g = w.groupby("flow")["throughput_bps"].mean() / 1e9
            if len(g) == n:
                out.append([float(x) for x in g])
    if not out:
        raise ClaimError(
            f"no interval with {n} flows running and rate samples after {settle_us} us"
        )
    return out


def phase_jain(res: SweepResult, n: int, settle_us: float = 50, **where: Any) -> float:
    """Jain's index of the flows' goodput in the intervals where exactly ``n`` flows run (from
    ``settle_us`` after each begins; flows' starts and finishes bound them): the worst one."""
    return min(jain_index(g) for g in _phase_goodputs(res, n, settle_us, where))


def phase_goodput_gbps(res: SweepResult, n: int, settle_us: float = 50, **where: Any) -> float:
    """Mean per-flow goodput (Gb/s) in the intervals where exactly ``n`` flows run (see
    ``phase_jain``)."""
    gs = [x for g in _phase_goodputs(res, n, settle_us, where) for x in g]
    return sum(gs) / len(gs)


def pause_time_pct(res: SweepResult, agg: str = "mean", **where: Any) -> float:
    """PFC pause time (RCC's Table II): the share (%) of the span from the first flow start to
    the last finish that the sending hosts' NICs spent paused, averaged over those hosts; per
    run, aggregated over runs with ``agg``."""
    sel = select_runs(res, where)
    flows, ports = sel.flows, sel.pfc_ports
    pct = []
    for rid in sel.ok_runs["run_id"]:
        mine = flows[flows["run_id"] == rid]
        span_us = float(mine["finish_us"].max() - mine["start_us"].min())
        senders = {f"h{int(h)}" for h in mine["src"].unique()}
        p = ports[(ports["run_id"] == rid) & (ports["layer"] == "host")]
        paused_us = float(p[p["node"].isin(senders)]["paused_time_ps"].sum()) / 1e6
        pct.append(100.0 * paused_us / (len(senders) * span_us) if span_us > 0 else 0.0)
    return aggregate(pct, agg, "pause_time_pct")


def aggregate_goodput_gbps(
    res: SweepResult, size_bytes: int | None = None, agg: str = "mean", **where: Any
) -> float:
    """The finished flows' (of exactly ``size_bytes``, if given) bytes over the span from the
    first one's start to the last one's finish, in Gb/s; per run, aggregated with ``agg``."""

    def one(flows: pd.DataFrame) -> float:
        mine = flows[flows["finish_us"].notna()]
        if size_bytes is not None:
            mine = mine[mine["size_bytes"] == size_bytes]
        if mine.empty:
            raise ClaimError(f"aggregate_goodput_gbps: no finished flows of {size_bytes} bytes")
        span_us = float(mine["finish_us"].max() - mine["start_us"].min())
        return float(mine["size_bytes"].sum()) * 8 / span_us / 1e3

    return _per_run(res, "flows", None, one, agg, where)


#: The claim vocabulary's measures, by name.
MEASURES: dict[str, Callable[..., Any]] = {
    "completion_rate": completion_rate,
    "fct_us": fct_us,
    "phase_jain": phase_jain,
    "phase_goodput_gbps": phase_goodput_gbps,
    "pause_time_pct": pause_time_pct,
    "aggregate_goodput_gbps": aggregate_goodput_gbps,
    "rate_settle_us": rate_settle_us,
    "queue_settle_us": queue_settle_us,
    "queue_drain_us": queue_drain_us,
    "fill_us": fill_us,
    "goodput_gbps": goodput_gbps,
    "pauses": pauses,
    "pause_span_us": pause_span_us,
    "stat": stat,
    "by": by,
    "spread": spread,
    "increasing": increasing,
    "decreasing": decreasing,
    "failed_runs": failed_runs,
    "jain": jain,
    "rate_error": rate_error,
    "sending_gbps": sending_gbps,
    "utilization": utilization,
    "busy_utilization": busy_utilization,
    "queue_kb": queue_kb,
    "drain_ratio": drain_ratio,
    "halt_error": halt_error,
    "flow_queue_kb": flow_queue_kb,
    "flow_queue_span_us": flow_queue_span_us,
}


def select_runs(res: SweepResult, where: Mapping[str, Any]) -> SweepResult:
    try:
        sel = res.where(_filters(res, where))
    except ScenarioError as e:
        raise ClaimError(str(e)) from None
    if sel.ok_runs.empty:
        what = ", ".join(f"{k}={v}" for k, v in where.items()) or "any"
        raise ClaimError(f"no successful runs match {what}")
    return sel


def _filters(res: SweepResult, where: Mapping[str, Any]) -> dict[str, Any]:
    return {_param(res, k): v for k, v in where.items()}


def _param(res: SweepResult, name: str) -> str:
    try:
        return res.param(name)
    except ScenarioError as e:
        raise ClaimError(str(e)) from None


def _per_run(
    res: SweepResult,
    table: str,
    after_us: float | None,
    fn: Callable[[pd.DataFrame], float],
    agg: str,
    where: Mapping[str, Any],
) -> float:
    """``fn`` of each matching run's rows of ``table`` (probe samples from ``after_us`` on; a
    table without time, e.g. flows, with ``after_us=None``), aggregated with ``agg``."""
    sel = select_runs(res, where)
    df = sel.table(table)
    if df.empty:
        raise ClaimError(f"no {table} samples; enable [output] {table} probes in the scenario")
    if after_us is not None:
        df = df[df["time_us"] >= after_us]
    values = []
    for rid in sel.ok_runs["run_id"]:
        one = df[df["run_id"] == rid]
        if one.empty:
            raise ClaimError(f"run {rid} has no {table} samples after {after_us} us")
        values.append(fn(one))
    return aggregate(values, agg, table)


def _link_mean(
    link: str | None, column: str, scale: float, until_us: float = math.inf, stat: str = "mean"
) -> Callable[[pd.DataFrame], float]:
    if stat not in ("mean", "max", "min"):
        raise ClaimError(f"stat={stat!r}; use mean, max or min")

    def one(queues: pd.DataFrame) -> float:
        if link is not None:
            queues = queues[queues["link"] == link]
            if queues.empty:
                raise ClaimError(f"link `{link}` is not probed; name a port in [output] queues")
        queues = queues[queues["time_us"] < until_us]
        if queues.empty:
            raise ClaimError(f"no queue samples before {until_us} us")
        return float(getattr(queues[column], stat)() * scale)

    return one


def aggregate(values: Any, agg: str, what: str) -> float:
    import numpy as np

    fns = {"mean": np.mean, "min": np.min, "max": np.max, "sum": np.sum}
    if agg not in fns:
        raise ClaimError(f"{what}: agg={agg!r}; use one of {', '.join(fns)}")
    values = list(values)
    if not values:
        raise ClaimError(f"{what}: no values to aggregate")
    return float(fns[agg](values))


def plain_value(value: Any) -> Any:
    """A measured value as JSON: floats (NaN as None), lists of floats, bools, ints."""
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
