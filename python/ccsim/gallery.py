"""The gallery of ``ccsim reproduce --all``: one HTML page over every catalog entry run (per
paper figure: its plots, its claims with the paper's statement and ccsim's numbers side by side,
and the verdicts), and the same claims as a Markdown table.

It reads what ``ccsim reproduce`` left in each entry's results directory (``claims.json`` and
``plots/*.png``); the page links the PNGs by relative path, so it opens offline from the
results folder.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ccsim import api
from ccsim.report import _STYLE, CLAIMS_JSON, _num

# Plots two to a row under each entry's claims.
_GRID = "figure.g { display: inline-block; width: 48%; margin: 0.5em 1%; vertical-align: top; }"


def entry_summary(out_dir: Path, name: str, error: str | None = None) -> dict[str, Any]:
    """What the gallery shows of one entry: its claims.json (if it got that far), its plots, and
    the error that stopped it, if one did."""
    path = out_dir / CLAIMS_JSON
    claims = api.read_json(path, "run the entry again to rewrite it") if path.is_file() else {}
    return {
        "name": name,
        "dir": out_dir,
        "claims": claims,
        "plots": sorted((out_dir / "plots").glob("*.png")) if (out_dir / "plots").is_dir() else [],
        "error": error,
    }


def write_gallery(entries: Sequence[dict[str, Any]], path: Path, size: str) -> Path:
    """Write the gallery page for ``entries`` (from :func:`entry_summary`) to ``path``."""
    held, total = _tally(entries)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        (
            f"<title>ccsim paper experiments ({_e(size)})</title><style>{_STYLE}{_GRID}</style>"
            "</head><body>"
        ),
        f"<h1>ccsim paper experiments ({_e(size)} size)</h1>",
        (
            f'<p class="meta">{len(entries)} catalog entries; {held} of {total} claims hold. '
            "Each claim states the paper's number; ccsim's measured numbers stand beside it.</p>"
        ),
        "<table><tr>"
        + "".join(f'<th class="l">{h}</th>' for h in ("entry", "paper", "figure", "claims hold"))
        + "</tr>",
    ]
    for e in entries:
        c = e["claims"]
        n_held, n = _tally([e])
        status = f"{n_held} of {n}" if not e["error"] else "error"
        parts.append(
            f'<tr><td class="l"><a href="#{_e(e["name"])}">{_e(e["name"])}</a></td>'
            f'<td class="l">{_e(c.get("paper", ""))}</td>'
            f'<td class="l">{_e(c.get("figure", ""))}</td><td>{_e(status)}</td></tr>'
        )
    parts.append("</table>")
    for e in entries:
        parts += _entry_section(e, path.parent)
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    api.write_atomic(path, "\n".join(parts) + "\n")
    return path


def claims_markdown(entries: Sequence[dict[str, Any]], size: str) -> str:
    """Every entry's claims as one Markdown table: the paper's statement, ccsim's numbers, the
    verdict."""
    held, total = _tally(entries)
    lines = [
        f"# ccsim paper experiments: claims at the {size} size",
        "",
        (
            f"`ccsim reproduce --all{' --quick' if size == 'quick' else ''}`: {held} of {total} "
            "claims hold. Each claim states the paper's number; the measured column is ccsim's."
        ),
        "",
        "| entry | claim (the paper) | ccsim measured | verdict |",
        "|---|---|---|---|",
    ]
    for e in entries:
        if e["error"]:
            lines.append(f"| {e['name']} | | {_md(e['error'])} | error |")
        for c in e["claims"].get("claims", []):
            lines.append(
                f"| {e['name']} | {_md(c['text'])} | {_md(_measured(c))} | {c['status']} |"
            )
    return "\n".join(lines) + "\n"


def _entry_section(e: dict[str, Any], root: Path) -> list[str]:
    c = e["claims"]
    out = [f'<h2 id="{_e(e["name"])}">{_e(e["name"])}: {_e(c.get("title", ""))}</h2>']
    if c:
        out.append(f'<p class="meta">{_e(c["paper"])}; {_e(c["figure"])}</p>')
    if e["error"]:
        out.append(f'<p class="failed">{_e(e["error"])}</p>')
    report = e["dir"] / "report.html"
    if report.is_file():
        out.append(f'<p><a href="{_e(_rel(report, root))}">full report</a> (runs, configs)</p>')
    rows = []
    for claim in c.get("claims", []):
        rows.append(
            f'<tr class="{_e(claim["status"])}"><td class="l">{_e(claim["text"])}</td>'
            f'<td class="l">{_e(_measured(claim))}</td><td class="l">{_e(claim["status"])}</td></tr>'
        )
    if rows:
        head = ("claim (the paper)", "ccsim measured", "verdict")
        out += [
            "<table><tr>" + "".join(f'<th class="l">{h}</th>' for h in head) + "</tr>",
            *rows,
            "</table>",
        ]
    for png in e["plots"]:
        out.append(
            f'<figure class="g"><img alt="{_e(png.stem)}" src="{_e(_rel(png, root))}">'
            f"<figcaption>{_e(png.stem)}</figcaption></figure>"
        )
    return out


def _measured(claim: dict[str, Any]) -> str:
    """ccsim's numbers for a claim (or why it could not be measured)."""
    return claim.get("message") or "; ".join(
        f"{expr} = {_num(v)}" for expr, v in claim.get("measured", [])
    )


def _tally(entries: Sequence[dict[str, Any]]) -> tuple[int, int]:
    claims = [c for e in entries for c in e["claims"].get("claims", [])]
    return sum(c["status"] == "holds" for c in claims), len(claims)


def _rel(path: Path, root: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def _md(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)
