"""``ccsim reproduce --all``: every catalog entry runs into its own folder, an entry that cannot
run is shown with its error, and one gallery page (plots, each claim with ccsim's numbers and
its verdict) and a Markdown claims table cover them all; headless Chromium shows the page. Then
``ccsim gallery`` turns the same folder into the documentation's pages."""

from __future__ import annotations

import json
import re
import shutil
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
    html_page = tmp_path / "res" / "gallery-quick.html"
    text = html_page.read_text()
    assert 'href="#dcqcn-convergence"' in text and 'href="#zz-broken"' in text
    assert "5 of 5" in text and "<td>error</td>" in text
    srcs = re.findall(r'<img alt="[^"]*" src="([^"]+)"', text)
    assert srcs and all((html_page.parent / s).is_file() for s in srcs)
    table = (tmp_path / "res" / "gallery-quick.md").read_text()
    rows = [r for r in table.splitlines() if r.startswith("| dcqcn-convergence |")]
    assert len(rows) == 5 and all(r.endswith("| holds |") for r in rows)
    assert "| zz-broken |" in table and "| error |" in table

    # The documentation's gallery from the same folder: the full size where it is stored (here a
    # copy of the quick results relabelled, one claim failing), a page for the entry without
    # results, and no page left from an earlier generation.
    quick = json.loads((tmp_path / "res" / "dcqcn-convergence-quick" / "claims.json").read_text())
    made = quick["made"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", made["date"]) and "cores" in made["machine"]
    shutil.copytree(
        tmp_path / "res" / "dcqcn-convergence-quick", tmp_path / "res" / "dcqcn-convergence-full"
    )
    full = {**quick, "size": "full"}
    full["claims"][0] = {**full["claims"][0], "status": "fails"}
    (tmp_path / "res" / "dcqcn-convergence-full" / "claims.json").write_text(json.dumps(full))
    site = tmp_path / "site"
    site.mkdir()
    (site / "notes.md").write_text("someone's page")
    proc = ccsim_cli("gallery", "res", "--catalog", "cat", "--docs", "site", cwd=tmp_path)
    assert proc.returncode == 2 and "did not write" in proc.stderr, proc.stderr
    assert (site / "notes.md").is_file()  # a folder it did not write is left alone
    (site / "notes.md").unlink()
    assert (
        ccsim_cli("gallery", "res", "--catalog", "cat", "--docs", "site", cwd=tmp_path).returncode
        == 0
    )
    (site / "removed-entry.md").write_text("stale")
    proc = ccsim_cli("gallery", "res", "--catalog", "cat", "--docs", "site", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 pages, 4 of 5 claims hold" in proc.stdout
    assert sorted(p.name for p in site.glob("*.md")) == [
        "dcqcn-convergence.md",
        "index.md",
        "zz-broken.md",
    ]
    page = (site / "dcqcn-convergence.md").read_text()
    assert "the full size (the paper's scale)" in page and made["commit"] in page
    assert "## Claims: 4 of 5 hold" in page and page.count("| holds |") == 4
    assert "| **fails** |" in page and "Why a claim fails" in page
    assert quick["description"].split()[0] in page
    pngs = re.findall(r"!\[[^]]*\]\(([^)]+)\)", page)
    assert pngs and all((site / p).is_file() for p in pngs)
    assert "Not run yet" in (site / "zz-broken.md").read_text()
    index = (site / "index.md").read_text()
    assert "2 catalog entries: 4 of 5 claims hold at the full size (1 entry)" in index
    proc = ccsim_cli("gallery", "nowhere", "--catalog", "cat", cwd=tmp_path)
    assert proc.returncode == 2 and "nowhere is not a folder" in proc.stderr, proc.stderr
    assert "| [dcqcn-convergence](dcqcn-convergence.md) |" in index and "| full | 4 of 5 |" in index

    # Last, as it is skipped without Chromium: the HTML gallery as a browser draws it.
    rgb = screenshot(html_page, tmp_path)
    saturation = rgb.max(axis=-1) - rgb.min(axis=-1)
    assert (saturation > 0.3).mean() > 0.005  # the plots' coloured lines are drawn
