"""The HTML report: one self-contained page (inline figures, no external references) with the
runs table and resolved configs, that headless Chromium opens offline and shows with figures."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import ccsim
import numpy as np
import pytest
from ccsim import plots, report
from helpers import ccsim_cli, screenshot


@pytest.fixture(scope="module")
def report_path(sweep_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    proc = ccsim_cli("report", str(sweep_dir), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    return out


def test_report_is_self_contained_with_every_plot_and_run(
    report_path: Path, sweep_dir: Path
) -> None:
    text = report_path.read_text()
    images = re.findall(r'<img alt="([a-z_]+)" src="data:image/png;base64,', text)
    # Every kind but the per-flow queue plot, whose probes (by_flow) this sweep does not enable,
    # and the collectives plot, which has no collective workload to draw: the report says so.
    assert images == [k for k in plots.KINDS if k not in ("flow_queue", "collectives")]
    assert "flow_queue skipped: plot flow_queue: no per-flow queue samples" in text
    assert "collectives skipped: plot collectives: no collective workload" in text
    assert not re.search(r"""(src|href)=["']?(https?:|file:|/)""", text)
    assert "<script" not in text
    runs = ccsim.load(sweep_dir).runs
    for rid in runs["run_id"]:
        assert f">{rid}<" in text  # in the runs table
        assert f"<summary>run {rid} " in text  # its resolved config
    assert text.count('<td class="l">ok</td>') == len(runs)
    assert "[topology]" in text and "FCT by size bin" in text


def test_report_opens_in_headless_chromium_and_shows_figures(
    report_path: Path, tmp_path: Path
) -> None:
    rgb = screenshot(report_path, tmp_path)
    not_white = (rgb < 0.9).any(axis=-1).mean()
    # Plot lines and bars are saturated colours; the page's text and tables are grey.
    saturation = rgb.max(axis=-1) - rgb.min(axis=-1)
    coloured = (saturation > 0.3).mean()
    assert rgb.std() > 0.1 and not_white > 0.05, (rgb.std(), not_white)
    assert coloured > 0.005, coloured
    assert np.isfinite(rgb).all()


def test_the_report_shows_a_sweeps_set_tables_as_tables(tmp_path: Path) -> None:
    star = {
        "name": "star",
        "topology": {"kind": "star", "hosts": 3, "link": {"rate": "10Gbps", "delay": "1us"}},
        "cc": {"scheme": "none"},
        "flows": [{"src": 0, "dst": 2, "size": "10KB"}],
    }
    link = {"rate": "25Gbps", "delay": "2us"}
    ccsim.sweep(star, {"seed": [1]}, overrides={"topology.link": link}, out=tmp_path / "s")
    meta = json.loads((tmp_path / "s" / "sweep.json").read_text())
    assert meta["set"] == {"topology.link": link}
    text = report.write_report(ccsim.load(tmp_path / "s"), tmp_path / "r.html").read_text()
    assert '[set."topology.link"]\nrate = "25Gbps"\ndelay = "2us"' in html.unescape(text)
