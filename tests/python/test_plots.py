"""Plots: every kind renders from the shared sweep's real results, with the papers' axes, one
series per swept combination, and the numbers the engine measured; the CLI writes PNG and SVG
and rejects bad kinds, filters and results directories in one line."""

from __future__ import annotations

from pathlib import Path

import ccsim
import numpy as np
import pytest
from ccsim import plots
from ccsim.sweeps import SweepResult
from helpers import ccsim_cli

SERIES = [
    "scheme=dcqcn, load=0.3",
    "scheme=dcqcn, load=0.8",
    "scheme=none, load=0.3",
    "scheme=none, load=0.8",
]


@pytest.fixture(scope="module")
def res(sweep_dir: Path) -> SweepResult:
    loaded = ccsim.load(sweep_dir)
    assert isinstance(loaded, SweepResult)
    return loaded


def line_labels(ax: object) -> list[str]:
    return [line.get_label() for line in ax.get_lines()]  # type: ignore[attr-defined]


def test_series_pool_seeds(res: SweepResult) -> None:
    labels = plots.series_labels(res)
    assert sorted(set(labels.values())) == SERIES
    assert all(list(labels.values()).count(s) == 2 for s in SERIES)  # two seeds each


def test_slowdown_vs_size_has_avg_and_p99_per_series_on_log_x(res: SweepResult) -> None:
    fig = plots.render(res, "slowdown")
    axes = fig.get_axes()
    assert len(axes) == 2
    assert [ax.get_ylabel() for ax in axes] == [
        "average\nFCT slowdown",
        "99th percentile\nFCT slowdown",
    ]
    for ax in axes:
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "flow size (bytes)"
        assert line_labels(ax) == SERIES
        for line in ax.get_lines():
            x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
            assert len(x) >= 3 and np.isfinite(y).all() and (y > 0.9).all()
    # p99 >= average in every bucket of every series
    for avg, p99 in zip(axes[0].get_lines(), axes[1].get_lines()):
        assert (np.asarray(p99.get_ydata()) >= np.asarray(avg.get_ydata()) - 1e-9).all()


def test_fct_bars_are_the_engine_bin_statistics_on_linear_axes_from_zero(
    res: SweepResult,
) -> None:
    # One panel per statistic and size bin, each linear from zero so bar heights compare.
    axes = plots.render(res, "fct_bars").get_axes()
    bins = ["<100KB", "100KB-10MB", ">10MB"]
    assert len(axes) == 2 * len(bins)
    for ax in axes:
        assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
        assert [c.get_label() for c in ax.containers] == SERIES  # named in the figure's legend
    # The dcqcn/0.8 bars are the mean over seeds of the engine's per-run summaries.
    runs = res.runs[(res.runs["cc.scheme"] == "dcqcn") & (res.runs["workload.0.load"] == 0.8)]
    assert len(runs) == 2
    for row, stat in enumerate(("avg", "p99")):
        for col, b in enumerate(bins):
            bar = (
                axes[row * len(bins) + col]
                .containers[SERIES.index("scheme=dcqcn, load=0.8")]
                .patches[0]
            )
            assert bar.get_height() == pytest.approx(runs[f"fct.acc.{b}.fct_{stat}_us"].mean())
    # A colour names one series: each scheme a hue, its loads shades of it, standing together.
    bars = [c.patches[0] for c in axes[0].containers]
    colors = [bar.get_facecolor() for bar in bars]
    assert len(set(colors)) == len(SERIES)
    hue = [max(range(3), key=lambda k: c[k]) for c in colors]  # strongest channel
    assert hue[0] == hue[1] and hue[2] == hue[3] and hue[0] != hue[2]
    x = [bar.get_x() for bar in bars]
    assert x[1] - x[0] == pytest.approx(1) and x[2] - x[1] == pytest.approx(1.5)
    # One scheme: its loads are the only series, each in a colour of its own.
    one = plots.render(res.where({"scheme": "dcqcn"}), "fct_bars").get_axes()[0]
    hue = [max(range(3), key=lambda k: c.patches[0].get_facecolor()[k]) for c in one.containers]
    assert len(hue) == 2 and hue[0] != hue[1]


def test_fct_cdf_ends_at_one_per_series(res: SweepResult) -> None:
    (ax,) = plots.render(res, "fct_cdf").get_axes()
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "CDF"
    assert line_labels(ax) == SERIES
    finished = res.flows[res.flows.fct_ps >= 0]
    for line, label in zip(ax.get_lines(), SERIES):
        y = np.asarray(line.get_ydata())
        # From 0 at the shortest FCT to 1 at the longest, one step per flow.
        assert y[0] == 0 and y[-1] == pytest.approx(1.0) and (np.diff(y) >= 0).all()
        scheme, load = (part.split("=")[1] for part in label.split(", "))
        n = ((finished["cc.scheme"] == scheme) & (finished["workload.0.load"] == float(load))).sum()
        assert len(y) == n + 1


@pytest.mark.parametrize(
    ("kind", "ylabel"), [("queue", "queue length (KB)"), ("utilization", "link utilization")]
)
def test_port_time_series_one_panel_per_series(res: SweepResult, kind: str, ylabel: str) -> None:
    axes = plots.render(res, kind).get_axes()
    assert len(axes) == len(SERIES)
    for ax, label in zip(axes, SERIES):
        assert ax.get_title().startswith(f"{label} (seed 1)")
        assert ax.get_ylabel() == ylabel
        lines = ax.get_lines()
        assert 1 <= len(lines) <= plots.MAX_LINES
        assert all("->" in name for name in line_labels(ax))
        peak = max(np.nanmax(line.get_ydata()) for line in lines)
        assert peak > 0
        if kind == "utilization":  # each bit counts in the interval it is serialized in
            assert peak <= 1.0 + 1e-9
    assert axes[-1].get_xlabel() == "time (µs)"


def test_rate_draws_every_probed_flow(res: SweepResult) -> None:
    axes = plots.render(res, "rate").get_axes()
    assert len(axes) == len(SERIES)
    seed1 = res.runs[res.runs["seed"] == 1].set_index(["cc.scheme", "workload.0.load"])
    for ax, label in zip(axes, SERIES):
        scheme, load = (part.split("=")[1] for part in label.split(", "))
        rid = seed1.loc[(scheme, float(load)), "run_id"]
        flows = res.rates[res.rates.run_id == rid].flow.nunique()
        assert len(ax.get_lines()) == flows > 0
        assert max(np.max(line.get_ydata()) for line in ax.get_lines()) <= 100.0  # Gb/s
    assert axes[0].get_ylabel() == "CC rate (Gb/s)"


def test_goodput_adds_up_to_the_bytes_the_engine_saw_acknowledged(res: SweepResult) -> None:
    # Goodput x the 20 us probe interval, summed over a flow's samples, is the payload the
    # engine counted as acknowledged (every flow done before the run's last sample).
    axes = plots.render(res, "goodput").get_axes()
    assert axes[0].get_ylabel() == "goodput (Gb/s)"
    seed1 = res.runs[res.runs["seed"] == 1].set_index(["cc.scheme", "workload.0.load"])
    checked = 0
    for ax, label in zip(axes, SERIES):
        scheme, load = (part.split("=")[1] for part in label.split(", "))
        rid = seed1.loc[(scheme, float(load)), "run_id"]
        flows = res.flows[res.flows.run_id == rid].set_index("id")
        last_sample_us = res.rates[res.rates.run_id == rid].time_us.max()
        for line in ax.get_lines():
            flow = flows.loc[int(line.get_label().split()[1])]
            if flow["finish_us"] <= last_sample_us:
                acked = np.sum(line.get_ydata()) * 1e9 * 20e-6 / 8
                assert acked == pytest.approx(flow["bytes_acked"], abs=1.0)
                checked += 1
    assert checked > 20


def test_vs_param_draws_the_seed_mean_and_range_against_load(res: SweepResult) -> None:
    axes = plots.render(res, "vs_param").get_axes()
    assert axes[-1].get_xlabel() == "load" and axes[-1].get_ylabel() == "PAUSE frames sent"
    runs = res.ok_runs
    for ax in axes:
        pauses = ax.get_ylabel() == "PAUSE frames sent"
        bin_ = None if pauses else ax.get_ylabel().split("\n")[1]
        metric = "pfc.pauses_sent" if pauses else f"fct.acc.{bin_}.slowdown_p99"
        bars = {c.get_label(): c for c in ax.containers}  # one errorbar container per line
        for scheme in ("dcqcn", "none"):
            bar = bars[f"scheme={scheme}" if pauses else f"scheme={scheme} p99"]
            line, _, (ranges,) = bar.lines
            mine = runs[runs["cc.scheme"] == scheme]
            per_load = mine[metric].astype(float).groupby(mine["workload.0.load"])
            assert list(line.get_xdata()) == [0.3, 0.8]
            assert np.allclose(line.get_ydata(), per_load.mean().to_numpy())
            # The bars run from the lowest to the highest seed.
            spans = [seg[:, 1] for seg in ranges.get_segments()]
            assert np.allclose([s.min() for s in spans], per_load.min().to_numpy())
            assert np.allclose([s.max() for s in spans], per_load.max().to_numpy())


def test_pfc_layers_stack_to_the_engine_counts(res: SweepResult) -> None:
    (ax,) = plots.render(res, "pfc_layers").get_axes()
    assert [c.get_label() for c in ax.containers] == ["host", "tor", "agg", "core"]
    assert [t.get_text() for t in ax.get_yticklabels()] == SERIES
    totals = np.sum([[p.get_width() for p in c.patches] for c in ax.containers], axis=0)
    runs = res.runs.assign(label=res.runs["run_id"].map(plots.series_labels(res)))
    expected = runs.groupby("label")["pfc.pauses_received"].mean()
    assert totals.tolist() == pytest.approx([expected[s] for s in SERIES])
    assert totals[-1] > totals[1]  # no CC at 80% load pauses far more than DCQCN


def test_pfc_map_has_a_row_per_paused_port(res: SweepResult) -> None:
    axes = plots.render(res, "pfc_map").get_axes()
    assert len(axes) == len(SERIES)
    seed1 = res.runs[res.runs["seed"] == 1].set_index(["cc.scheme", "workload.0.load"])
    for ax, label in zip(axes, SERIES):
        scheme, load = (part.split("=")[1] for part in label.split(", "))
        events = res.pfc_events[res.pfc_events.run_id == seed1.loc[(scheme, float(load)), "run_id"]]
        # One data class here: the priority is in the title, not on every row.
        ports = {f"{e.to_node}->{e.node}" for e in events.itertuples()}
        assert {t.get_text() for t in ax.get_yticklabels()} == ports
        assert ax.get_title().endswith(", priority 3")
        bars = sum(len(c.get_paths()) for c in ax.collections)
        assert bars == (events.kind == "pause").sum() > 0
    assert axes[-1].get_xlabel() == "time (µs)"


def test_cli_writes_png_and_svg(sweep_dir: Path, tmp_path: Path) -> None:
    import matplotlib.image

    proc = ccsim_cli(
        "plot",
        str(sweep_dir),
        "--kind",
        "pfc_layers",
        "--where",
        "load=0.8",
        "--out",
        "p",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    # A filtered figure has its own name (the unfiltered one is kept) and says its filter.
    png = tmp_path / "p" / "pfc_layers.where-load=0.8.png"
    svg = tmp_path / "p" / "pfc_layers.where-load=0.8.svg"
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [png.name, svg.name]
    image = matplotlib.image.imread(png)
    assert image.shape[0] > 200 and image.shape[1] > 300 and image.std() > 0.05
    text = svg.read_text()
    assert text.startswith("<?xml") and "scheme=dcqcn" in text and "load=0.3" not in text
    assert "where load=0.8" in text


def test_cli_writes_pdf_on_request_the_same_bytes_each_time(
    sweep_dir: Path, tmp_path: Path
) -> None:
    for out in ("a", "b"):
        args = ["plot", str(sweep_dir), "--kind", "fct_cdf", "--format", "pdf", "--out", out]
        proc = ccsim_cli(*args, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["fct_cdf.pdf"]
    pdf = (tmp_path / "a" / "fct_cdf.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf == (tmp_path / "b" / "fct_cdf.pdf").read_bytes()


def test_one_legend_when_every_panel_draws_the_same_series() -> None:
    from matplotlib.figure import Figure

    def panels(names: list[list[str]]) -> list[object]:
        axes = Figure().subplots(len(names), 1)
        for ax, labels in zip(axes, names):
            for label in labels:
                ax.plot([0, 1], [0, 1], label=label)
        plots._legends(axes)
        return [ax.get_legend() is not None for ax in axes] + [len(axes[0].figure.legends)]

    # The same series everywhere: one legend for the figure, below its panels.
    assert panels([["flow 0", "flow 1"]] * 3) == [False, False, False, 1]
    assert panels([["flow 0", "flow 1"], ["flow 2", "flow 3"]]) == [True, True, 0]
    assert panels([["sw0->h1"], ["sw0->h2"]]) == [False, False, 0]  # the title names the port


def test_paper_style_draws_one_column_wide_with_small_fonts(
    sweep_dir: Path, tmp_path: Path
) -> None:
    import matplotlib.image

    args = ["plot", str(sweep_dir), "--kind", "fct_cdf", "--style", "paper", "--out", "p"]
    proc = ccsim_cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    height, width = matplotlib.image.imread(tmp_path / "p" / "fct_cdf.png").shape[:2]
    assert width == round(3.5 * 300) and height < width  # 3.5 in at 300 dpi, same aspect
    (figures, _) = plots.render_all(ccsim.load(sweep_dir), ["fct_cdf", "queue"], "paper")
    (ax,) = figures["fct_cdf"].get_axes()
    assert ax.title.get_fontsize() == 7 and ax.xaxis.label.get_fontsize() == 7
    # Panel titles keep the series and drop the seed and what the figure shows.
    titles = [a.get_title() for a in figures["queue"].get_axes()]
    assert titles[0] == SERIES[0] and all("seed" not in t and ":" not in t for t in titles)


def text_collisions(fig: object) -> list[str]:
    """Every pair of drawn text elements whose boxes overlap, and every one that leaves the
    figure (matplotlib's renderer gives the boxes; tick labels off the axis view are not
    drawn and are left out)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # type: ignore[attr-defined]
    hidden = set()
    for ax in fig.axes:  # type: ignore[attr-defined]
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - 1e-9 * (hi - lo) <= tick.get_loc() <= hi + 1e-9 * (hi - lo):
                    hidden.update((id(tick.label1), id(tick.label2)))
    boxes = {}
    for t in fig.findobj(Text):  # type: ignore[attr-defined]
        if id(t) in hidden or not t.get_visible() or not t.get_text().strip():
            continue
        box = t.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            boxes[id(t)] = (t.get_text(), box)
    found, items, page = [], list(boxes.values()), fig.bbox  # type: ignore[attr-defined]
    for text, b in items:
        if (
            b.x0 < page.x0 - 0.5
            or b.y0 < page.y0 - 0.5
            or b.x1 > page.x1 + 0.5
            or b.y1 > page.y1 + 0.5
        ):
            found.append(f"{text!r} leaves the figure")
    for i, (text_a, a) in enumerate(items):
        for text_b, b in items[i + 1 :]:
            if min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5:
                found.append(f"{text_a!r} overlaps {text_b!r}")
    return found


@pytest.mark.parametrize("style", ["paper", "paper-wide"])
def test_paper_styles_draw_no_text_over_text_or_off_the_page(res: SweepResult, style: str) -> None:
    figures, skipped = plots.render_all(res, None, style)
    assert len(figures) >= 11, skipped
    collisions = {name: text_collisions(fig) for name, fig in figures.items()}
    assert not {name: c for name, c in collisions.items() if c}


def test_pfc_layers_without_pauses_says_so(res: SweepResult) -> None:
    dcqcn = res.where({"cc.scheme": "dcqcn"})
    dcqcn.runs[[c for c in dcqcn.runs.columns if c.startswith("pfc.by_layer.")]] = 0
    (ax,) = plots.render(dcqcn, "pfc_layers").get_axes()
    assert ax.get_xlim() == (0, 1)
    assert [t.get_text() for t in ax.texts] == ["no PFC PAUSE in these runs"]


def test_single_run_directory_plots_what_it_has(tmp_path: Path) -> None:
    scenario = {
        "name": "one",
        "topology": {"kind": "star", "hosts": 3, "link": {"rate": "100Gbps", "delay": "1us"}},
        "cc": {"scheme": "dcqcn"},
        "flows": [{"src": 0, "dst": 2, "size": "100KB", "start": "0us"}],
    }
    ccsim.run(scenario, out=tmp_path / "run")
    proc = ccsim_cli("plot", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    made = sorted(p.name for p in (tmp_path / "run" / "plots").glob("*.png"))
    assert made == ["fct_bars.png", "fct_cdf.png", "pfc_layers.png", "slowdown.png"]
    assert "rate" in proc.stderr and "skipped" in proc.stderr  # no rate probes in this scenario
    proc = ccsim_cli("plot", "run", "--kind", "rate", cwd=tmp_path)
    assert proc.returncode == 2 and "rates" in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["nowhere"], "nowhere"),
        (["SWEEP", "--kind", "pie"], "pie"),
        (["SWEEP", "--where", "colour=1"], "colour"),
        (
            ["SWEEP", "--where", "scheme=hpcc"],
            "no run has scheme = hpcc; the values there are: dcqcn, none",
        ),
    ],
)
def test_bad_plot_input_is_one_line(
    sweep_dir: Path, tmp_path: Path, args: list[str], needle: str
) -> None:
    args = [str(sweep_dir) if a == "SWEEP" else a for a in args]
    proc = ccsim_cli("plot", *args, "--out", str(tmp_path / "p"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccsim: error: ") and needle in lines[0]


def test_goodput_finer_than_a_few_packets_is_averaged_and_says_so() -> None:
    # 4 KB packets at 10G acknowledged per 10 us sample: 0.8 packets per sample on average, so
    # raw samples are blocks of 0 / 3.2 / 6.4 Gb/s. The plot averages ceil(10 / 0.8) = 13.
    import pandas as pd

    step = 4000 * 8 / 10e-6
    raw = pd.Series([step, step, 0, step, step, step, step, 0, step, step] * 20, dtype=float)
    assert plots._goodput_window(raw) == 13
    # A probe whose samples hold 10 packets or more is drawn as it is.
    assert plots._goodput_window(pd.Series([12 * step, 10 * step, 11 * step])) == 1


def test_fct_figures_say_how_many_flows_a_cut_run_finished(tmp_path: Path) -> None:
    import copy
    import warnings

    from helpers import SWEEP_BASE

    cut = copy.deepcopy(SWEEP_BASE)
    cut["duration"] = "300us"  # stops with flows still open
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccsim.ScenarioWarning)  # some start after the cut
        flows = ccsim.run(cut, out=tmp_path / "cut").summary["flows"]
    assert 0 < flows["finished"] < flows["total"]
    res = SweepResult.from_run(ccsim.load(tmp_path / "cut"))
    note = f"dcqcn ({flows['finished']} of {flows['total']} flows finished)"
    for kind in ("slowdown", "fct_cdf", "fct_bars"):
        fig = plots.render(res, kind)
        assert [t.get_text() for leg in fig.legends for t in leg.get_texts()] == [note], kind
    from ccsim.report import write_report

    page = write_report(res, tmp_path / "report.html", kinds=["fct_cdf"]).read_text()
    assert f"{flows['finished']} of {flows['total']} flows finished: FCTs count" in page


def test_a_flow_keeps_its_colour_across_panels_and_others_look_like_no_flow(
    res: SweepResult,
) -> None:
    seen: dict[str, tuple] = {}
    for ax in plots.render(res, "goodput").get_axes():
        for line in ax.get_lines():
            style = (line.get_color(), line.get_linestyle())
            assert seen.setdefault(line.get_label(), style) == style, line.get_label()
    assert len(seen) > 1
    flows = {plots._flow_style(i) for i in range(40)}
    assert ("black", ":") not in flows and all(c != "#7f7f7f" for c, _ in flows)
