"""``ccsim reproduce --all``: every catalog entry runs into its own folder, an entry that cannot
run is shown with its error, and one gallery page (plots, each claim with ccsim's numbers and
its verdict) and a Markdown claims table cover them all; headless Chromium shows the page."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ccsim_cli, screenshot

REPO = Path(__file__).resolve().parents[2]


def test_reproduce_all_writes_a_gallery(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    cat.mkdir()
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    entry = (REPO / "experiments" / "dcqcn-convergence.toml").read_text()
    (cat / "dcqcn-convergence.toml").write_text(entry)
    broken = entry.replace("../scenarios/", "../scenarios/no-such-")
    (cat / "zz-broken.toml").write_text(broken)
    proc = ccsim_cli(
        "reproduce", "--all", "--quick", "--catalog", "cat", "--out", "res", cwd=tmp_path
    )
    assert proc.returncode == 3, proc.stderr  # an entry could not run
    assert "zz-broken: error:" in proc.stderr
    page = tmp_path / "res" / "gallery-quick.html"
    text = page.read_text()
    assert 'href="#dcqcn-convergence"' in text and 'href="#zz-broken"' in text
    assert "5 of 5" in text and "<td>error</td>" in text
    srcs = re.findall(r'<img alt="[^"]*" src="([^"]+)"', text)
    assert srcs and all((page.parent / s).is_file() for s in srcs)
    table = (tmp_path / "res" / "gallery-quick.md").read_text()
    rows = [r for r in table.splitlines() if r.startswith("| dcqcn-convergence |")]
    assert len(rows) == 5 and all(r.endswith("| holds |") for r in rows)
    assert "| zz-broken |" in table and "| error |" in table
    rgb = screenshot(page, tmp_path)
    saturation = rgb.max(axis=-1) - rgb.min(axis=-1)
    assert (saturation > 0.3).mean() > 0.005  # the plots' coloured lines are drawn
