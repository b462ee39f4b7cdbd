"""One self-contained HTML page for a run's or a sweep's results: the experiment's claims (if
``ccsim reproduce`` wrote them), the plots as inline PNG, the runs table and the resolved
configs. No scripts, no external files: it opens offline in any browser.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccsim import api, plots
from ccsim.sweeps import SWEEP_JSON, SweepResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CLAIMS_JSON = "claims.json"
REPORT_HTML = "report.html"
_TABLE_COLUMNS = (
    ("flows.finished", "flows done", "{:.0f}"),
    ("flows.total", "flows", "{:.0f}"),
    ("fct.all.fct_avg_us", "avg FCT us", "{:.1f}"),
    ("fct.all.fct_p99_us", "p99 FCT us", "{:.1f}"),
    ("fct.all.slowdown_avg", "avg slowdown", "{:.2f}"),
    ("fct.all.slowdown_p99", "p99 slowdown", "{:.2f}"),
    ("pfc.pauses_sent", "PFC pauses", "{:.0f}"),
    ("sim_time_ps", "sim time ms", "{:.3g}"),
)
_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.meta { color: #555; } table { border-collapse: collapse; font-size: 13px; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.holds { background: #dff3df; } .fails, .error { background: #f8d7d7; } .failed { color: #b00; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 13px; } pre { background: #f7f7f7; padding: 0.6em; overflow: auto; }
details { margin: 0.3em 0; }
"""


def write_report(
    res: SweepResult,
    path: str | os.PathLike[str],
    *,
    kinds: Sequence[str] | None = None,
    figures: Mapping[str, Figure] | None = None,
    title: str | None = None,
) -> Path:
    """Write the report page for ``res`` to ``path``; returns the path.

    Claims come from ``claims.json`` in the results directory, if ``ccsim reproduce`` left one.
    ``kinds`` selects the plots (default: every kind the results have data for); ``figures``
    gives them already rendered (by :func:`ccsim.plots.plot`).

    Examples
    --------
    >>> write_report(ccsim.load("results/websearch-load"), "report.html")  # doctest: +SKIP
    """
    claims = _read_claims(res.out_dir)
    heading = title or (claims or {}).get("title") or res.name
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(heading)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(heading)}</h1>",
        f'<p class="meta">{_e(_subtitle(res, claims))}</p>',
    ]
    if claims:
        if claims.get("description"):
            parts.append(f"<p>{_e(' '.join(claims['description'].split()))}</p>")
        if claims.get("size_settings"):
            parts.append(
                f'<p class="meta">This run is the {_e(claims["size"])} size; its settings, over '
                f"the entry's sweep (the resolved configs below are what ran):</p>"
                f"<pre>{_e(claims['size_settings'])}</pre>"
            )
        parts += _claims_section(claims)
    if figures is None:
        figures, skipped = plots.render_all(res, kinds, labels=flow_labels(res.out_dir))
    else:
        skipped = {}
    parts += _figures_section(figures, skipped)
    parts += _runs_section(res)
    parts += _configs_section(res)
    parts.append("</body></html>")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    api.write_atomic(out, "\n".join(parts) + "\n")
    return out


def _subtitle(res: SweepResult, claims: Mapping[str, Any] | None) -> str:
    ok = int((res.runs["status"] == "ok").sum())
    n = len(res.runs)
    text = f"{n} run{'' if n == 1 else 's'} ({ok} ok, {n - ok} failed"
    text += f", {len(res.missing)} not run yet)" if res.missing else ")"
    partial = (
        int(res.runs["partial"].fillna(False).astype(bool).sum()) if "partial" in res.runs else 0
    )
    if partial:
        text += f"; {partial} interrupted: partial results (flows still open count as unfinished)"
    if res.out_dir is not None:
        text += f" from {res.out_dir}"
    if claims:
        text = f"{claims['paper']}, {claims['figure']} ({claims['size']} size). " + text
    return text


def _claims_section(claims: Mapping[str, Any]) -> list[str]:
    rows = []
    for c in claims["claims"]:
        measured = "; ".join(f"{expr} = {_num(v)}" for expr, v in c.get("measured", []))
        detail = c.get("message") or measured
        rows.append(
            f'<tr class="{_e(c["status"])}"><td class="l">{_e(c["status"])}</td>'
            f'<td class="l">{_e(c["text"])}</td><td class="l"><code>{_e(c["check"])}</code></td>'
            f'<td class="l">{_e(detail)}</td></tr>'
        )
    return [
        "<h2>Claims</h2>",
        "<table><tr>"
        + "".join(f'<th class="l">{h}</th>' for h in ("verdict", "claim", "check", "measured"))
        + "</tr>",
        *rows,
        "</table>",
    ]


def _figures_section(figures: Mapping[str, Figure], skipped: Mapping[str, str]) -> list[str]:
    out = ["<h2>Plots</h2>"]
    for kind, fig in figures.items():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        doc = (plots.KINDS[plots.kind_of(kind)].__doc__ or kind).split("\n\n")[0]
        caption = " ".join(doc.replace("``", "").split())
        out.append(
            f'<figure id="plot-{kind}"><img alt="{_e(kind)}" src="data:image/png;base64,{data}">'
            f"<figcaption><b>{_e(kind)}</b>: {_e(caption)}</figcaption></figure>"
        )
    out += [f'<p class="meta">{_e(kind)} skipped: {_e(why)}</p>' for kind, why in skipped.items()]
    return out


def _runs_section(res: SweepResult) -> list[str]:
    runs = res.runs
    cols = [(c, label, fmt) for c, label, fmt in _TABLE_COLUMNS if c in runs.columns]
    head = ["run", *res.params, "status", *(label for _, label, _ in cols)]
    rows = ["<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for _, r in runs.iterrows():
        cells = [f'<td class="l">{_e(r["run_id"])}</td>']
        cells += [f'<td class="l">{_e(str(r[p]))}</td>' for p in res.params]
        cls = "l" if r["status"] == "ok" else "l failed"
        status = r["status"] if r["status"] == "ok" else f"{r['status']}: {r['error']}"
        if r.get("partial") in (True, 1):
            cls, status = "l failed", "interrupted (partial results)"
        cells.append(f'<td class="{cls}">{_e(status)}</td>')
        for c, _, fmt in cols:
            value = r[c] / 1e9 if c == "sim_time_ps" else r[c]  # ps -> ms
            cells.append(f"<td>{_e(_num(value, fmt))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    out = ["<h2>Runs</h2>", "<table>", *rows, "</table>"]
    bins = _bin_table(res)
    if bins:
        out += ["<h3>FCT by size bin (mean over seeds)</h3>", *bins]
    return out


def _bin_table(res: SweepResult) -> list[str]:
    """Per series and ACC size bin: flows (over all seeds), average and p99 FCT (us) and
    slowdown (mean over seeds)."""
    runs = res.ok_runs
    bins = plots.size_bins(runs)
    if not bins:
        return []
    labels = plots.series_labels(res)
    stats = ("count", "fct_avg_us", "fct_p99_us", "slowdown_avg", "slowdown_p99")
    head = ["series", "size bin", "finished flows", *stats[1:]]
    rows = ["<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    tagged = runs.assign(_series=runs["run_id"].map(labels))
    for label in dict.fromkeys(tagged["_series"]):
        group = tagged[tagged["_series"] == label]
        for b in bins:
            values = [group[f"fct.acc.{b}.{s}"].mean() for s in stats]
            values[0] = group[f"fct.acc.{b}.count"].sum()
            cells = [f'<td class="l">{_e(label)}</td>', f'<td class="l">{_e(b)}</td>']
            cells += [f"<td>{_e(_num(v))}</td>" for v in values]
            rows.append("<tr>" + "".join(cells) + "</tr>")
    out = ["<table>", *rows, "</table>"]
    sized = runs["flows.total"].sum()
    if "flows.long_lived" in runs.columns:  # never finish: not counted
        sized -= runs["flows.long_lived"].sum()
    if runs["flows.finished"].sum() < sized:  # a cut run: say what the FCTs leave out
        out.append(
            f'<p class="meta">{runs["flows.finished"].sum():.0f} of {sized:.0f} flows finished: '
            "FCTs count finished flows only, and a bin without one is not shown.</p>"
        )
    return out


def _configs_section(res: SweepResult) -> list[str]:
    out = ["<h2>Resolved configs</h2>"]
    if res.out_dir is not None and (res.out_dir / SWEEP_JSON).is_file():
        meta = api.read_sweep_meta(res.out_dir)
        sweep = {k: meta[k] for k in ("set", "unset", "grid", "cases") if meta.get(k)}
        out.append(
            f"<details open><summary>sweep: base scenario, [set] and [grid]</summary>"
            f"<pre>{_e(api.to_toml(sweep))}</pre><pre>{_e(meta['base'])}</pre></details>"
        )
    for rid, config in res.configs.items():
        row = res.runs[res.runs["run_id"] == rid]
        params = ", ".join(f"{p}={row.iloc[0][p]}" for p in res.params) if len(row) else ""
        out.append(
            f"<details><summary>run {_e(rid)} {_e(params)}</summary><pre>{_e(config)}</pre></details>"
        )
    return out


def flow_labels(out_dir: Path | None) -> plots.FlowLabels:
    """The flow names of the catalog entry that wrote ``out_dir`` (its claims.json), if any."""
    table = (_read_claims(out_dir) or {}).get("labels")
    if not table:
        return plots.DEFAULT_LABELS
    return plots.FlowLabels.from_table(table, f"{out_dir / CLAIMS_JSON}: labels")


def _read_claims(out_dir: Path | None) -> dict[str, Any] | None:
    path = None if out_dir is None else out_dir / CLAIMS_JSON
    if path is None or not path.is_file():
        return None
    return api.read_json(path, "run the entry again to rewrite it")


def _num(value: Any, fmt: str = "{:.4g}") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return fmt.format(value)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)
