"""Plots with the papers' axes, one function per kind, from a run's or a sweep's results.

Every number drawn comes from the engine's tables and summaries; this module only groups them
(a series is a combination of the swept parameters other than the seed, seeds pooled) and draws.
Figures are matplotlib ``Figure`` objects (no pyplot state), saved as PNG and SVG.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ccsim import api, sweeps
from ccsim.api import ScenarioError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ccsim.sweeps import SweepResult

LAYERS = api.LAYERS  # the engine's, host first
LAYER_COLORS = {"host": "#4c72b0", "tor": "#55a868", "agg": "#dd8452", "core": "#c44e52"}
MAX_PANELS = 8  # time-series kinds draw one panel per series, at most this many
MAX_LINES = 6  # queue / utilization: the busiest ports of each panel
LEGEND_COLUMN_CHARS = 30  # a figure legend's labels up to this long sit two to a row
MAX_PAUSED_PORTS = 40  # pfc_map: the ports paused longest in each panel
BUCKETS_PER_DECADE = 4  # slowdown vs size: log-spaced flow-size buckets
FORMATS = ("png", "svg")  # written by default
ALL_FORMATS = ("png", "svg", "pdf")
# Figure styles: the width (inches) figures are scaled to and the font sizes (points). "paper"
# fits one column of a two-column paper (3.5 in), "paper-wide" the full page width (7 in).
_PAPER_FONTS = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "legend.fontsize": 6,
    "lines.linewidth": 0.8,
}
STYLES: dict[str, tuple[float | None, dict[str, Any]]] = {
    "screen": (None, {}),
    "paper": (3.5, _PAPER_FONTS),
    "paper-wide": (7.0, _PAPER_FONTS),
}
# Raster resolution (PNG): a screen's, or a print journal's 300 dpi for the paper styles, whose
# panel titles keep only what tells panels apart (a paper's caption says the rest).
SCREEN_DPI, PAPER_DPI = 110, 300
PAPER_ROW_IN = 1.3  # the least height of a row of panels in the paper styles (inches)
LINE_STYLES = [
    "-",
    "--",
    "-.",
    ":",
    (0, (5, 1)),
    (0, (3, 1, 1, 1)),
    (0, (1, 1)),
    (0, (6, 3)),
    (0, (3, 1, 1, 1, 1, 1)),
    (0, (8, 2, 2, 2)),
]


class NoData(ScenarioError):
    """The results hold nothing this kind of plot can draw; ``str()`` says what to enable."""


@dataclass(frozen=True)
class FlowLabels:
    """How the per-flow kinds (goodput, rate, flow_queue) name flows in their legends, as a
    paper names its series (a catalog entry's ``[labels]``): ``flows`` by id ("F0"), else
    ``format`` with the id (``"f{flow}"``); with ``others``, the flows ``flows`` does not name
    are drawn summed as one series of that name ("burst flows")."""

    flows: Mapping[int, str] = field(default_factory=dict)
    format: str = "flow {flow}"
    others: str | None = None

    KEYS = ("flows", "format", "others")

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> FlowLabels:
        """From a TOML table (``flows`` keys are flow ids as strings); errors name ``where``."""
        unknown = sorted(set(table) - set(cls.KEYS))
        if unknown:
            raise ScenarioError(f"{where}: unknown key `{unknown[0]}`; use {', '.join(cls.KEYS)}")
        flows = {}
        for k, v in dict(table.get("flows", {})).items():
            if not str(k).isdigit() or not isinstance(v, str):
                raise ScenarioError(f'{where}.flows: write flow id = "label", e.g. 0 = "F0"')
            flows[int(k)] = v
        fmt = table.get("format", "flow {flow}")
        if not isinstance(fmt, str) or "{flow}" not in fmt:
            raise ScenarioError(f'{where}.format: a text with {{flow}}, e.g. "f{{flow}}"')
        others = table.get("others")
        if others is not None and not isinstance(others, str):
            raise ScenarioError(f"{where}.others: the name of the other flows, a text")
        return cls(flows, fmt, others)

    def as_table(self) -> dict[str, Any]:
        table: dict[str, Any] = {"flows": {str(k): v for k, v in self.flows.items()}}
        table["format"] = self.format
        if self.others is not None:
            table["others"] = self.others
        return table

    def series(self, flows: Sequence[int]) -> list[tuple[str, list[int]]]:
        """The legend series over ``flows``: (label, the flows it sums), named flows first."""
        if self.others is None:
            return [(self.flows.get(f, self.format.format(flow=f)), [f]) for f in flows]
        named = [(self.flows[f], [f]) for f in flows if f in self.flows]
        rest = [f for f in flows if f not in self.flows]
        return named + ([(self.others, rest)] if rest else [])


DEFAULT_LABELS = FlowLabels()


# --- the kinds -----------------------------------------------------------------------------------


def plot_slowdown(res: SweepResult) -> Figure:
    """FCT slowdown vs flow size: average and p99 per log-spaced size bucket, log x (HPCC and
    ACC Fig. 14 style). Percentiles are nearest-rank, as the engine's summaries."""
    import numpy as np

    flows = _finished_flows(res)
    fig, axes = _figure(1, 2, width=11)
    sizes = flows["size_bytes"].to_numpy(dtype=float)
    lo, hi = np.floor(np.log10(sizes.min())), np.ceil(np.log10(sizes.max()))
    edges = 10 ** np.arange(lo, hi + 1e-9, 1 / BUCKETS_PER_DECADE)
    flows = flows.assign(bucket=np.digitize(sizes, edges))
    for label, group in _fct_series(res, flows):
        stats = group.groupby("bucket").agg(
            size=("size_bytes", "median"),
            avg=("slowdown", "mean"),
            p99=("slowdown", lambda x: _nearest_rank(x, 99)),
        )
        axes[0].plot(stats["size"], stats["avg"], marker="o", ms=3, label=label)
        axes[1].plot(stats["size"], stats["p99"], marker="o", ms=3, label=label)
    for ax, stat in zip(axes, ("average", "99th percentile")):
        ax.set_xscale("log")
        ax.set_xlabel("flow size (bytes)")
        ax.set_ylabel(f"{stat}\nFCT slowdown")
        ax.grid(True, which="both", alpha=0.3)
    _figure_legend(fig, axes[0])
    return fig


def plot_fct_bars(res: SweepResult, bins: str = "acc") -> Figure:
    """Average and p99 FCT per size bin (the engine's ``acc`` or ``pcn`` bins) as bars, one bar
    per series (mean over seeds), one panel per bin and statistic (ACC Fig. 13, PCN/AMRT style).
    Each panel's axis is linear from zero, so bar heights compare: bins differ by orders of
    magnitude and get their own scale."""
    runs = _ok_runs(res)
    prefix = f"fct.{bins}."
    labels = size_bins(runs, bins)
    if not labels:
        raise NoData("plot fct_bars: no finished flows; run longer or drop `duration`")
    series = list(_fct_series(res, runs))
    x, colors = _grouped_bars([label for label, _ in series])
    fig, axes = _figure(2, len(labels), width=3.2 * len(labels), height=5.5)
    for row, stat in enumerate(("avg", "p99")):
        for col, b in enumerate(labels):
            ax = axes[row * len(labels) + col]
            for i, (label, group) in enumerate(series):
                value = group[f"{prefix}{b}.fct_{stat}_us"].mean()
                ax.bar(x[i], value, 0.7, color=colors[i], label=label)
            ax.set_ylim(bottom=0)
            ax.set_xticks([])  # the legend names the bars
            if row == 0:
                ax.set_title(b)
            if col == 0:
                ax.set_ylabel(f"{'average' if stat == 'avg' else '99th percentile'}\nFCT (µs)")
            ax.grid(True, axis="y", alpha=0.3)
    _figure_legend(fig, axes[0])
    return fig


def plot_fct_cdf(res: SweepResult) -> Figure:
    """CDF of flow completion times, one step line per series, log x."""
    import numpy as np

    flows = _finished_flows(res)
    fig, (ax,) = _figure(1, 1)
    for label, group in _fct_series(res, flows):
        fct = np.sort(group["fct_us"].to_numpy())
        # From 0 at the shortest FCT, so the first step is drawn.
        cdf = np.arange(0, len(fct) + 1) / len(fct)
        ax.step(np.r_[fct[0], fct], cdf, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (µs)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.set_title("FCT CDF")
    ax.grid(True, which="both", alpha=0.3)
    _figure_legend(fig, ax)
    return fig


def plot_queue(res: SweepResult) -> Figure:
    """Egress queue length over time: per series (first seed), the busiest probed ports."""
    return _port_series(res, "queue_bytes", 1e-3, "queue length (KB)", "max")


def plot_utilization(res: SweepResult) -> Figure:
    """Link utilization over time: per series (first seed), the most utilized probed links."""
    return _port_series(res, "utilization", 1.0, "link utilization", "mean")


def plot_goodput(res: SweepResult, labels: FlowLabels = DEFAULT_LABELS) -> Figure:
    """Each probed flow's goodput over time: payload bytes acknowledged per probe interval
    (Gb/s), per series (first seed). What a flow gets, as papers plot per-flow throughput.
    Where a sample holds under 10 packets, a moving mean over enough samples is drawn, and
    the panel's title says over how many."""
    return _flow_series(
        res, "goodput", "throughput_bps", "goodput (Gb/s)", "per-flow goodput", labels, smooth=True
    )


def plot_rate(res: SweepResult, labels: FlowLabels = DEFAULT_LABELS) -> Figure:
    """Each probed flow's congestion-control rate over time (Gb/s), per series (first seed):
    what the scheme allows, which a window or the fabric may keep the flow from using."""
    return _flow_series(
        res, "rate", "rate_bps", "CC rate (Gb/s)", "congestion-control rate", labels
    )


def plot_sending(res: SweepResult) -> Figure:
    """The probed flows' aggregate sending rate over time (Gb/s): the rates their congestion
    control set, summed per sample, one line per series (first seed). What ACC's Figure 9
    plots; the claims' ``sending_gbps`` measures the same sum."""
    rates = _require(res.rates, "plot sending", "no rate samples; add [output] rates = {...}")
    fig, axes = _figure(1, 1)
    ax = axes[0]
    for label, group in _panels(res, rates):
        total = group.groupby("time_us")["rate_bps"].sum()
        ax.plot(total.index, total.to_numpy() / 1e9, lw=1, label=label)
    ax.set_ylabel("aggregate sending\nrate (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.set_title("aggregate sending rate of the probed flows")
    ax.grid(True, alpha=0.3)
    _legends(axes)
    _time_axis(ax, rates["time_us"].max())
    return fig


def _flow_series(
    res: SweepResult,
    kind: str,
    column: str,
    ylabel: str,
    what: str,
    labels: FlowLabels,
    smooth: bool = False,
) -> Figure:
    """Each probed flow's ``column`` over time, a panel per series, flows named and grouped by
    ``labels``; with ``smooth``, a moving mean wherever samples are too coarse to read
    (``_goodput_window``)."""
    rates = _require(res.rates, f"plot {kind}", "no rate samples; add [output] rates = {...}")
    panels = _panels(res, rates)
    fig, axes = _figure(len(panels), 1, height=2.6 * len(panels), sharex=True, sharey=True)
    order: dict[str, int] = {}  # a series keeps its colour and line style in every panel
    for ax, (label, group) in zip(axes, panels):
        flows = sorted(int(f) for f in group["flow"].unique())
        window = _goodput_window(group[column]) if smooth else 1
        series = labels.series(flows)
        for name, members in series:
            one = group[group["flow"].isin(members)].groupby("time_us")[column].sum()
            y = one.rolling(window, min_periods=1).mean() if window > 1 else one
            color, ls = _flow_style(order.setdefault(name, len(order)))
            ax.plot(one.index, y / 1e9, lw=1, color=color, ls=ls, label=name)
        ax.set_ylabel(ylabel)
        smoothed = ""
        if window > 1:
            step_us = float(group["time_us"].drop_duplicates().diff().median())
            smoothed = f", mean over {window} samples ({window * step_us:g} us)"
        shown = f"{len(flows)} flows" + (
            f" as {len(series)} series" if len(series) < len(flows) else ""
        )
        ax.set_title(f"{label}: {what} of {shown}{smoothed}")
        ax.grid(True, alpha=0.3)
    _legends(axes)
    _time_axis(axes[-1], rates["time_us"].max())
    return fig


def _goodput_window(tput_bps: pd.Series) -> int:
    """How many probe samples to average so that each point holds about 10 packets: goodput is
    whole packets acknowledged per interval, so a probe finer than a few packet times draws
    blocks (0 / 3.2 / 6.4 Gb/s for 4 KB packets at 10 us). One packet per interval is the
    smallest step between the distinct sample values; 1 when samples hold 10 or more."""
    import math

    import numpy as np

    values = np.unique(np.round(tput_bps.to_numpy(dtype=float)))
    if len(values) < 2 or tput_bps.mean() <= 0:
        return 1
    packets = tput_bps.mean() / np.diff(values).min()
    return 1 if packets >= 10 else math.ceil(10 / packets)


def plot_flow_queue(res: SweepResult, labels: FlowLabels = DEFAULT_LABELS) -> Figure:
    """Each flow's bytes in the probed queues over time (ACC Figs. 2-4 style): per series
    (first seed) and probed port, its largest flows, the rest summed (``labels.others``: the
    flows ``labels`` names, the rest summed)."""
    fq = _require(
        res.flow_queues,
        "plot flow_queue",
        "no per-flow queue samples; add by_flow = true to [output] queues",
    )
    panels = []
    for label, group in _panels(res, fq):
        probed = res.queues[res.queues["run_id"] == group["run_id"].iloc[0]]
        for link in probed["link"].drop_duplicates():
            times = probed[probed["link"] == link]["time_us"]
            panels.append((f"{label}: {link}", group[group["link"] == link], times))
    panels = panels[:MAX_PANELS]
    fig, axes = _figure(len(panels), 1, height=2.2 * len(panels), sharex=True, sharey=True)
    for ax, (title, group, times) in zip(axes, panels):
        table = (
            group.pivot_table(index="time_us", columns="flow", values="queue_bytes", aggfunc="sum")
            .reindex(sorted(times.unique()))
            .fillna(0)
        )
        if labels.others is None:
            top = list(table.max().sort_values(ascending=False).index[:MAX_LINES])
        else:
            top = [f for f in table.columns if int(f) in labels.flows]
        for flow in top:  # a flow keeps its colour and line style in every panel
            color, ls = _flow_style(int(flow))
            name = labels.series([int(flow)])[0][0]
            ax.plot(table.index, table[flow] / 1e3, lw=1, color=color, ls=ls, label=name)
        rest = [f for f in table.columns if f not in top]
        if rest:  # black and dotted, a style no flow has
            others = table[rest].sum(axis=1) / 1e3
            name = labels.others or "others"
            ax.plot(table.index, others, lw=1.2, ls=":", color="black", label=name)
        ax.set_ylabel("queued (KB)")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    _legends(axes, min_entries=1)
    _time_axis(axes[-1], fq["time_us"].max())
    return fig


def plot_pfc_layers(res: SweepResult) -> Figure:
    """PFC PAUSE frames received per layer (host, ToR, agg, core), stacked bars per series, mean
    over seeds (ACC Fig. 15)."""
    import numpy as np

    runs = _ok_runs(res)
    series = list(_by_series(res, runs))
    fig, (ax,) = _figure(1, 1, height=max(2.5, 0.4 * len(series) + 1.5))
    y = np.arange(len(series))
    left = np.zeros(len(series))
    for layer in LAYERS:
        col = f"pfc.by_layer.{layer}.pauses_received"
        if col not in runs.columns:
            continue
        values = np.array([group[col].mean() for _, group in series])
        ax.barh(y, values, 0.6, left=left, label=layer, color=_layer_color(layer))
        left += values
    ax.set_yticks(y, [label for label, _ in series])
    ax.set_ylim(len(series) - 0.5, -0.5)  # the first series on top
    ax.set_xlabel("PFC PAUSEs received")
    ax.set_title("PFC PAUSEs by layer")
    if not left.any():
        ax.set_xlim(0, 1)
        ax.text(0.5, 0.5, "no PFC PAUSE in these runs", transform=ax.transAxes, ha="center")
    else:
        _figure_legend(fig, ax, title="layer")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def plot_pfc_map(res: SweepResult) -> Figure:
    """When each port was paused: one row per paused egress port (the upstream side of a PAUSE),
    ordered by layer, a bar from PAUSE to RESUME; the fabric's congestion tree over time."""
    events = _require(
        res.pfc_events, "plot pfc_map", "no PFC events (none happened, or [output] pfc_events off)"
    )
    layer_of = dict(zip(res.pfc_ports["node"], res.pfc_ports["layer"]))
    end_ps = dict(zip(res.runs["run_id"], res.runs["sim_time_ps"]))
    panels = []
    for label, group in _panels(res, events):
        rows: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for port, prio, start_us, end_us in _pause_spans(group, end_ps[group["run_id"].iloc[0]]):
            rows.setdefault((port, prio), []).append((start_us, max(end_us - start_us, 1e-3)))
        # The ports paused longest, then ordered by layer (host, ToR, agg, core) and name.
        longest = sorted(rows, key=lambda r: -sum(w for _, w in rows[r]))[:MAX_PAUSED_PORTS]
        order = sorted(longest, key=lambda r: (_layer_rank(layer_of.get(r[0].split("->")[0])), r))
        panels.append((label, {r: rows[r] for r in order}, len(rows)))
    height = sum(max(2.0, 0.24 * len(rows) + 1.2) for _, rows, _ in panels)
    fig, axes = _figure(len(panels), 1, height=height, sharex=True)
    for ax, (label, rows, n_ports) in zip(axes, panels):
        for y, ((port, _), bars) in enumerate(rows.items()):  # one collection per paused port
            color = _layer_color(layer_of.get(port.split("->")[0]))
            ax.broken_barh(bars, (y - 0.4, 0.8), color=color)
        prios = sorted({q for _, q in rows})
        # The priority once in the title when every row shares it, else on each row.
        names = [p if len(prios) == 1 else f"{p} (prio {q})" for p, q in rows]
        ax.set_yticks(range(len(rows)), names, fontsize="x-small")
        ax.set_ylim(len(rows) - 0.4, -0.6)
        ax.set_ylabel("paused port")
        pauses = sum(len(bars) for bars in rows.values())
        shown = f"the {len(rows)} paused longest of {n_ports}" if n_ports > len(rows) else n_ports
        prio = f", priority {prios[0]}" if len(prios) == 1 else ""
        ax.set_title(f"{label}: {pauses} pauses on {shown} ports{prio}")
        ax.grid(True, axis="x", alpha=0.3)
    _time_axis(axes[-1], max(end_ps.values()) / 1e6)
    handles = [_patch(_layer_color(layer), layer) for layer in LAYERS]
    _figure_legend(fig, handles=handles, title="paused node")
    return fig


def plot_vs_param(res: SweepResult) -> Figure:
    """FCT slowdown (p99 solid, p50 dashed) per size bin and PAUSE frames against the swept
    numeric parameter (e.g. load), a line per remaining series (e.g. scheme): the mean over
    seeds, with bars from the lowest to the highest seed."""
    import pandas as pd

    runs = _ok_runs(res)
    numeric = [
        p
        for p in res.params
        if p != "seed" and pd.api.types.is_numeric_dtype(runs[p]) and runs[p].nunique() > 1
    ]
    if not numeric:
        raise NoData("plot vs_param: no numeric parameter swept over several values (e.g. load)")
    x, short = numeric[0], sweeps.short_names(res.params)
    others = [p for p in res.params if p not in (x, "seed") and runs[p].nunique() > 1]
    # Per panel: its label and lines (column, label suffix, line style, marker).
    percentiles = (("99", "-", "o"), ("50", "--", "s"))
    panels = [
        (
            f"FCT slowdown\n{b}",
            [(f"fct.acc.{b}.slowdown_p{p}", f" p{p}", ls, m) for p, ls, m in percentiles],
        )
        for b in size_bins(runs)
    ]
    panels.append(("PAUSE frames sent", [("pfc.pauses_sent", "", "-", "o")]))
    fig, axes = _figure(len(panels), 1, height=2.3 * len(panels), sharex=True)
    groups = list(runs.groupby(others, sort=False)) if others else [((), runs)]
    for ax, (ylabel, lines) in zip(axes, panels):
        for i, (key, group) in enumerate(groups):
            values = key if isinstance(key, tuple) else (key,)
            name = ", ".join(f"{short[p]}={v}" for p, v in zip(others, values))
            name = name or ", ".join(map(str, group["scheme"].unique()))
            for column, suffix, style, marker in lines:
                values = group[column].astype(float)  # a bin without flows is null
                stats = values.groupby(group[x]).agg(["mean", "min", "max"])
                ax.errorbar(
                    stats.index,
                    stats["mean"],
                    yerr=[stats["mean"] - stats["min"], stats["max"] - stats["mean"]],
                    color=f"C{i}",
                    ls=style,
                    marker=marker,
                    capsize=3,
                    label=name + suffix,
                )
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    _figure_legend(fig, axes[0])  # the same series in every panel
    axes[0].set_title(f"against {short[x]}: mean over seeds, bars from the lowest to the highest")
    axes[-1].set_xlabel(short[x])
    return fig


def plot_collectives(res: SweepResult) -> Figure:
    """Completion time of each iteration of each collective job (one panel per job), one line
    per series (mean over seeds), and the job's bandwidth term dashed: the most payload one of
    its hosts sends or receives, at its link rate."""
    coll = _require(res.collectives, "plot collectives", "no collective workload in these runs")
    jobs = sorted(coll["job"].unique())[:MAX_PANELS]
    fig, axes = _figure(1, len(jobs), width=max(5.5, 3.6 * len(jobs)))
    for ax, job in zip(axes, jobs):
        rows = coll[coll["job"] == job]
        for label, group in _by_series(res, rows):
            done = group[group["completion_ps"] >= 0].groupby("iteration")["completion_us"]
            ax.plot(done.mean().index, done.mean().to_numpy(), marker="o", ms=3, label=label)
        ax.axhline(rows["ideal_us"].mean(), color="black", linestyle=":", label="ideal")
        ax.set_ylim(bottom=0)
        ax.set_title(f"job {job}: {rows['kind'].iloc[0]}, {rows['hosts'].iloc[0]} hosts")
        ax.set_xlabel("iteration")
        ax.set_ylabel("completion time (µs)")
        ax.grid(True, alpha=0.3)
    _figure_legend(fig, axes[0])
    return fig


KINDS: dict[str, Callable[..., Figure]] = {
    "slowdown": plot_slowdown,
    "fct_bars": plot_fct_bars,
    "fct_cdf": plot_fct_cdf,
    "queue": plot_queue,
    "flow_queue": plot_flow_queue,
    "utilization": plot_utilization,
    "goodput": plot_goodput,
    "rate": plot_rate,
    "sending": plot_sending,
    "pfc_layers": plot_pfc_layers,
    "pfc_map": plot_pfc_map,
    "vs_param": plot_vs_param,
    "collectives": plot_collectives,
}


# --- entry points --------------------------------------------------------------------------------


LABELLED_KINDS = ("goodput", "rate", "flow_queue")  # the kinds that take FlowLabels


def render(res: SweepResult, kind: str, labels: FlowLabels = DEFAULT_LABELS) -> Figure:
    """One figure of ``kind`` (see :data:`KINDS`). Raises NoData if the results lack its data.

    Examples
    --------
    >>> fig = render(SweepResult.from_run(ccsim.load("results/x")), "fct_cdf")  # doctest: +SKIP
    """
    if kind not in KINDS:
        raise ScenarioError(f"--kind: unknown plot kind `{kind}`; use one of {', '.join(KINDS)}")
    _ok_runs(res)
    if kind in LABELLED_KINDS:
        return KINDS[kind](res, labels)
    return KINDS[kind](res)


def plot(
    res: SweepResult,
    out_dir: str | os.PathLike[str],
    kinds: Sequence[str] | None = None,
    formats: Sequence[str] = FORMATS,
    style: str = "screen",
    labels: FlowLabels = DEFAULT_LABELS,
    where: str = "",
) -> tuple[dict[str, Figure], dict[str, str]]:
    """Save each kind as ``<out_dir>/<kind>.<format>`` for each of ``formats`` (png, svg, pdf),
    drawn in ``style`` (see :data:`STYLES`), flows named by ``labels``. Results restricted by a
    filter say so: ``where="scheme=dcqcn"`` titles each figure "where scheme=dcqcn" and writes
    ``<kind>.where-scheme=dcqcn.<format>``, so the unfiltered figures are kept.

    With ``kinds=None`` every kind is tried and those without data are skipped; a kind asked
    for by name that has no data raises NoData. Returns (figure name -> figure, skipped kind
    -> why); a figure's name is its file name without the format.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures, skipped = render_all(res, kinds, style, labels, where)
    if where:
        tag = ".where-" + re.sub(r"[^A-Za-z0-9_.,=+-]", "_", where)
        figures = {name + tag: fig for name, fig in figures.items()}
    for name, fig in figures.items():
        save(fig, out / name, formats)
    return figures, skipped


def render_all(
    res: SweepResult,
    kinds: Sequence[str] | None = None,
    style: str = "screen",
    labels: FlowLabels = DEFAULT_LABELS,
    where: str = "",
) -> tuple[dict[str, Figure], dict[str, str]]:
    """Render ``kinds`` (default: every kind that has data; the others are returned with the
    reason they were skipped). A kind asked for by name that has no data raises NoData.

    A sweep with several cases (e.g. one per workload) gets one figure per kind and case, named
    ``<kind>-<case>``, as a paper draws one panel per workload. ``where`` names a filter the
    results were restricted by, for the figures' titles."""
    from matplotlib import rc_context

    if style not in STYLES:
        raise ScenarioError(f"--style: unknown style `{style}`; use one of {', '.join(STYLES)}")
    width, fonts = STYLES[style]
    figures: dict[str, Figure] = {}
    skipped: dict[str, str] = {}
    for kind in kinds or list(KINDS):
        try:
            for case, part in _cases(res):
                with rc_context(fonts):
                    fig = render(part, kind, labels)
                    fig.set_dpi(SCREEN_DPI)
                    if width is not None:  # scale to the column, keeping the aspect ratio
                        w, h = fig.get_size_inches()  # and each row of panels readable
                        fig.set_size_inches(width, max(h * width / w, _paper_height(fig)))
                        fig.set_dpi(PAPER_DPI)
                        for ax in fig.axes:
                            ax.set_title(_short_title(ax.get_title()))
                title = [case] if case is not None and width is None else []
                if where:
                    title.append(f"where {where}")
                if title:
                    fig.suptitle(", ".join(title))
                figures[kind if case is None else f"{kind}-{case}"] = fig
        except NoData as e:
            if kinds:
                raise
            skipped[kind] = str(e)
    return figures, skipped


def _paper_height(fig: Figure) -> float:
    """The least height (inches) that keeps a figure's panels readable at a paper's font sizes:
    ``PAPER_ROW_IN`` per row of panels, plus a line per row of its legend below."""
    rows = max((ax.get_subplotspec().get_gridspec().nrows for ax in fig.axes), default=1)
    legend_rows = 0
    for leg in fig.legends:
        labels = [t.get_text() for t in leg.get_texts()]
        legend_rows += -(-len(labels) // _legend_columns(labels)) + 1  # + its title or margin
    return rows * PAPER_ROW_IN + legend_rows * 0.12


def _short_title(title: str) -> str:
    """A panel title for a paper: its series only ("scheme=acc (seed 1): port sw0->h10" ->
    "scheme=acc"), without the seed or what the figure shows."""
    return title.split(": ")[0].split(" (seed ")[0]


def kind_of(name: str) -> str:
    """The plot kind of a figure name from :func:`render_all` (``fct_bars-websearch``)."""
    return name.split("-", 1)[0]


def _cases(res: SweepResult) -> list[tuple[str | None, SweepResult]]:
    """The results per case (in run order), or all of them as one when there are no cases."""
    if sweeps.CASE not in res.params:
        return [(None, res)]
    cases = _ok_runs(res)[sweeps.CASE].drop_duplicates().tolist()
    return [(c, res.where({sweeps.CASE: c})) for c in cases]


def save(fig: Figure, stem: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``stem.<format>`` for each format (no timestamps inside, so reruns give equal
    files)."""
    bad = [f for f in formats if f not in ALL_FORMATS]
    if bad:
        raise ScenarioError(f"--format: unknown format `{bad[0]}`; use {', '.join(ALL_FORMATS)}")
    paths = []
    for fmt in formats:
        path = stem.parent / f"{stem.name}.{fmt}"  # a name may hold dots (load=0.8)
        meta = {
            "svg": {"Date": None},
            "pdf": {"CreationDate": None, "ModDate": None},
            "png": {"Software": None},
        }[fmt]
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=fig.get_dpi(), metadata=meta)
        paths.append(api.write_atomic(path, buf.getvalue()))
    return paths


def series_labels(res: SweepResult) -> dict[str, str]:
    """run_id -> series label: the swept parameters other than the seed (short names), led by
    the scheme when the scheme is not among them, so that every figure names it.

    Examples
    --------
    >>> series_labels(ccsim.load("results/websearch-load"))  # doctest: +SKIP
    {'1a2b..': 'dcqcn, load=0.3', ...}
    """
    runs = res.runs
    keys = [p for p in res.params if p != "seed" and runs[p].nunique(dropna=False) > 1]
    short = sweeps.short_names(res.params)
    out = {}
    for _, r in runs.iterrows():
        parts = [f"{short[k]}={r[k]}" for k in keys]
        scheme = r.get("scheme")
        if "cc.scheme" not in keys and isinstance(scheme, str):
            parts.insert(0, scheme)
        out[r["run_id"]] = ", ".join(parts) or res.name
    return out


def size_bins(runs: pd.DataFrame, bins: str = "acc") -> list[str]:
    """The engine's size-bin labels of family ``bins`` (``acc`` or ``pcn``) that hold flows in
    ``runs``, smallest first: e.g. ``['<100KB', '100KB-10MB', '>10MB']``."""
    prefix = f"fct.{bins}."
    labels = [
        c[len(prefix) : -len(".count")]
        for c in runs.columns
        if c.startswith(prefix) and c.endswith(".count") and runs[c].sum() > 0
    ]
    order = api.size_bin_labels(bins)
    return sorted(labels, key=lambda b: order.index(b) if b in order else len(order))


# --- helpers -------------------------------------------------------------------------------------


def _figure(
    rows: int,
    cols: int,
    *,
    width: float = 7.5,
    height: float = 4.2,
    sharex: bool = False,
    sharey: bool = False,
) -> tuple[Figure, list[Axes]]:
    """A figure of rows x cols panels; panels comparing series share the y scale (``sharey``)."""
    from cycler import cycler
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(rows, cols, sharex=sharex, sharey=sharey, squeeze=False)
    # Series differ in line style as well as colour, so they stay apart in greyscale.
    colors = _colors()[: len(LINE_STYLES)]
    styles = cycler(color=colors, linestyle=LINE_STYLES)
    for ax in axes.flat:
        ax.set_prop_cycle(styles)
    return fig, list(axes.flat)


def _flow_style(i: int) -> tuple[str, Any]:
    """The ``i``-th flow's colour and line style: matplotlib's colours without its grey (C7)
    and black, which mark summed "others"; styles are solid to dash-dot, never dotted."""
    colors = _colors(grey=False)
    styles = ["-", "--", "-.", (0, (5, 1)), (0, (3, 1, 1, 1))]
    return colors[i % len(colors)], styles[(i // len(colors)) % len(styles)]


def _grouped_bars(labels: list[str]) -> tuple[list[float], list[Any]]:
    """Bar positions and colours for series ``labels``: series sharing the label's first part
    (the leading swept value, e.g. ``scheme=rcc`` of ``scheme=rcc, load=0.3``) share a hue,
    lighter to darker in grid order, and stand together, half a bar apart from the next group,
    so that a colour never names two series. With one group, or one series per group, one
    colour each."""
    from matplotlib.colors import to_rgb

    lead = [label.split(", ")[0] for label in labels]
    groups = list(dict.fromkeys(lead))
    if len(groups) in (1, len(labels)):
        hues = _colors()
        return [float(i) for i in range(len(labels))], [
            hues[i % len(hues)] for i in range(len(labels))
        ]
    hues = _colors(grey=False)
    x: list[float] = [0.0] * len(labels)
    colors: list[Any] = [None] * len(labels)
    place = 0.0
    for g, group in enumerate(groups):
        members = [i for i in range(len(labels)) if lead[i] == group]
        base = to_rgb(hues[g % len(hues)])
        for k, i in enumerate(members):
            white = 0.6 * (len(members) - 1 - k) / max(len(members) - 1, 1)  # the first lightest
            colors[i] = tuple(c + (1 - c) * white for c in base)
            x[i] = place
            place += 1
        place += 0.5
    return x, colors


def _colors(grey: bool = True) -> list[str]:
    """Matplotlib's default colour cycle (C0, C1, ...) as colours; without its grey (C7), which
    marks summed "others", when ``grey`` is false."""
    from matplotlib import rcParams

    cycle = rcParams["axes.prop_cycle"].by_key()["color"]
    return [c for k, c in enumerate(cycle) if grey or k != 7]


def _ok_runs(res: SweepResult) -> pd.DataFrame:
    return _require(res.ok_runs, "plot", "no successful runs in these results")


def _by_series(res: SweepResult, df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Rows of ``df`` grouped by series label, in the runs' (grid) order."""
    labels = series_labels(res)
    order = list(dict.fromkeys(labels[r] for r in res.runs["run_id"]))
    tagged = df.assign(_series=df["run_id"].map(labels))
    groups = dict(list(tagged.groupby("_series", sort=False)))
    return [(label, groups[label]) for label in order if label in groups]


def _fct_series(res: SweepResult, df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """:func:`_by_series` for FCT figures, which count finished flows only: a series whose runs
    left flows unfinished says how many finished in its label ("930 of 1073 flows finished")."""
    import pandas as pd

    runs = res.ok_runs
    if "flows.finished" not in runs.columns or "flows.total" not in runs.columns:
        return _by_series(res, df)
    long_lived = runs.get("flows.long_lived", 0)  # never finish: not counted
    counts = pd.DataFrame({"finished": runs["flows.finished"], "sized": runs["flows.total"]})
    counts["sized"] -= long_lived
    done = counts.groupby(runs["run_id"].map(series_labels(res))).sum()
    out = []
    for label, group in _by_series(res, df):
        finished, sized = done.loc[label, "finished"], done.loc[label, "sized"]
        if finished < sized:
            label = f"{label} ({finished:.0f} of {sized:.0f} flows finished)"
        out.append((label, group))
    return out


def _panels(res: SweepResult, df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One run per series (the first in grid order, i.e. the lowest seed) for time series."""
    out = []
    for label, group in _by_series(res, df):
        first = group["run_id"].iloc[0]
        seed = ""
        if "seed" in res.params:
            seed = f" (seed {res.runs.set_index('run_id').loc[first, 'seed']})"
        out.append((label + seed, group[group["run_id"] == first]))
    return out[:MAX_PANELS]


def _finished_flows(res: SweepResult) -> pd.DataFrame:
    flows = res.flows
    if len(flows):
        flows = flows[(flows["fct_ps"] >= 0) & flows["slowdown"].notna()]
    return _require(flows, "plot", "no finished flows; run longer, or give the flows a size")


def _require(df: pd.DataFrame, what: str, why: str) -> pd.DataFrame:
    if df is None or df.empty:
        raise NoData(f"{what}: {why}")
    return df


def _port_series(res: SweepResult, column: str, scale: float, ylabel: str, rank: str) -> Figure:
    kind = "queue" if column == "queue_bytes" else "utilization"
    queues = _require(
        res.queues, f"plot {kind}", "no queue samples; add [output] queues = {...} to the scenario"
    )
    panels = _panels(res, queues)
    fig, axes = _figure(len(panels), 1, height=2.6 * len(panels), sharex=True, sharey=True)
    for ax, (label, group) in zip(axes, panels):
        busiest = group.groupby("link")[column].agg(rank).sort_values(ascending=False)
        links = list(busiest.index[:MAX_LINES])
        for link in links:
            one = group[group["link"] == link]
            ax.plot(one["time_us"], one[column] * scale, lw=1, label=link)
        ax.set_ylabel(ylabel)
        if len(busiest) == 1:
            shown = f"port {links[0]}"
        elif len(busiest) > len(links):
            shown = f"the {len(links)} busiest of {len(busiest)} ports"
        else:
            shown = f"all {len(busiest)} probed ports"
        ax.set_title(f"{label}: {shown}")
        ax.grid(True, alpha=0.3)
    _legends(axes)  # a single port is named in its panel's title
    _time_axis(axes[-1], queues["time_us"].max())
    return fig


def _legend_outside(ax: Any) -> None:
    """The panel's legend to the right of its axes, off the data."""
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _figure_legend(
    fig: Figure, ax: Any = None, handles: Sequence[Any] = (), title: str | None = None
) -> None:
    """One legend for the whole figure below its panels, off the data: ``ax``'s series, or
    ``handles``. Two columns where the labels are short enough to sit side by side."""
    labels = [h.get_label() for h in handles]
    if ax is not None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=_legend_columns(labels),
        fontsize="x-small",
        title=title,
    )


def _legend_columns(labels: Sequence[str]) -> int:
    return 1 if len(labels) == 1 or max(map(len, labels)) > LEGEND_COLUMN_CHARS else 2


def _legends(axes: Sequence[Any], min_entries: int = 2, max_entries: int = 12) -> None:
    """One legend for the figure when every panel draws the same series, else one per panel;
    none for a panel with fewer than ``min_entries`` or more than ``max_entries`` series."""
    labels = [tuple(ax.get_legend_handles_labels()[1]) for ax in axes]
    shown = [ax for ax, ls in zip(axes, labels) if min_entries <= len(ls) <= max_entries]
    if len(set(labels)) == 1 and shown:
        _figure_legend(shown[0].figure, shown[0])
        return
    for ax in shown:
        _legend_outside(ax)


def _time_axis(ax: Any, span_us: float) -> None:
    """Label the (shared) time axis of data in µs: in ms once the run spans over 5 ms."""
    from matplotlib.ticker import FuncFormatter

    if span_us > 5000:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}"))
        ax.set_xlabel("time (ms)")
    else:
        ax.set_xlabel("time (µs)")


def _pause_spans(events: pd.DataFrame, end_ps: float) -> list[tuple[str, int, float, float]]:
    """(paused egress port "upstream->sender", priority, start_us, end_us) per PAUSE: the PAUSE
    sent by ``node`` stops ``to_node``'s port towards it until the matching RESUME (or the end)."""
    open_at: dict[tuple[str, int], float] = {}
    spans = []
    for e in events.sort_values("time_ps", kind="stable").itertuples(index=False):
        key = (f"{e.to_node}->{e.node}", int(e.prio))
        if e.kind == "pause":
            open_at.setdefault(key, e.time_ps)
        elif key in open_at:
            spans.append((*key, open_at.pop(key) / 1e6, e.time_ps / 1e6))
    spans += [(*key, start / 1e6, end_ps / 1e6) for key, start in open_at.items()]
    return spans


def _nearest_rank(values: Any, pct: float) -> float:
    import numpy as np

    return float(np.percentile(values, pct, method="inverted_cdf"))


def _layer_rank(layer: str | None) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def _layer_color(layer: str | None) -> str:
    return LAYER_COLORS.get(layer or "", "grey")


def _patch(color: str, label: str) -> Any:
    from matplotlib.patches import Patch

    return Patch(color=color, label=label)
