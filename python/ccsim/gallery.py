"""The galleries of paper experiments, both read from what ``ccsim reproduce`` left in each
entry's results directory (``claims.json`` and ``plots/*.png``):

- ``ccsim reproduce --all``: one HTML page over every entry run (per paper figure: its plots, its
  claims with the paper's statement and ccsim's numbers side by side, the verdicts), linking the
  PNGs by relative path so it opens offline from the results folder, and the claims as one
  Markdown table;
- ``ccsim gallery``: the documentation site's gallery (``docs/gallery/``), one Markdown page per
  catalog entry with its plots copied beside it, and an index with the claims that hold per
  paper. Each page shows the full size where stored results have it, else the quick size, and
  says which, with the commit and machine that made it.
"""

from __future__ import annotations

import html
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ccsim import api
from ccsim.provenance import describe
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
    """ccsim's numbers for a claim (or why it could not be measured), each term once."""
    terms = dict.fromkeys(f"{expr} = {_num(v)}" for expr, v in claim.get("measured", []))
    return claim.get("message") or "; ".join(terms)


def _tally(entries: Sequence[dict[str, Any]]) -> tuple[int, int]:
    claims = [c for e in entries for c in e["claims"].get("claims", [])]
    return sum(c["status"] == "holds" for c in claims), len(claims)


def _rel(path: Path, root: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def _md(text: Any) -> str:
    """One line of a Markdown table cell, its Markdown characters taken literally."""
    return _mdtext(" ".join(str(text).split())).replace("|", "\\|")


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


# --- the documentation site's gallery --------------------------------------------------------------

#: What the committed gallery (pages and plots) may weigh in all; ``tests/python/test_docs.py``
#: holds it to this.
SITE_BUDGET_BYTES = 20 * 2**20
SIZES_PREFERRED = ("full", "quick")
# The index's first line: a folder whose index.md starts so is the gallery's to rewrite.
_MARK = "<!-- written by `ccsim gallery`: regenerate, do not edit -->"


def write_site(results: Path, docs: Path, entries: Sequence[Any]) -> tuple[int, int]:
    """The documentation gallery in ``docs`` (``index.md`` and ``<name>.md`` with plots in
    ``<name>/``) for catalog ``entries`` (``ccsim.experiments.Experiment``), from the results in
    ``results/<name>-full`` or, where there are none, ``results/<name>-quick``.

    Every entry gets a page; one without stored results says how to make them. Pages and plots
    written before are replaced. Returns the claims that hold and the claims shown.
    """
    index = docs / "index.md"
    if docs.is_dir() and any(docs.iterdir()):
        if not (index.is_file() and index.read_text(encoding="utf-8").startswith(_MARK)):
            raise api.ScenarioError(
                f"gallery: {docs} holds files `ccsim gallery` did not write (no index.md of "
                "its own); give an empty folder or the gallery's"
            )
        for old in docs.iterdir():  # an earlier generation's, entries since removed included
            if old.is_dir():
                shutil.rmtree(old)
            elif old.suffix == ".md":
                old.unlink()
    docs.mkdir(parents=True, exist_ok=True)
    shown = []
    for exp in entries:
        found = next(
            (s for s in SIZES_PREFERRED if (results / f"{exp.name}-{s}" / CLAIMS_JSON).is_file()),
            None,
        )
        e = entry_summary(results / f"{exp.name}-{found}", exp.name) if found else None
        shown.append((exp, e))
        api.write_atomic(docs / f"{exp.name}.md", _entry_page(exp, e, docs))
    api.write_atomic(index, _site_index(shown))
    return _tally([e for _, e in shown if e])


def _entry_page(exp: Any, e: dict[str, Any] | None, docs: Path) -> str:
    lines = [
        f"# {exp.name}: {_mdtext(exp.title)}",
        "",
        f"**Paper:** {_mdtext(exp.paper)}  ",
        f"**Figure:** {_mdtext(exp.figure)}",
        "",
    ]
    if e is None:
        lines += [
            '!!! warning "Not run yet"',
            f"    No stored results. Make them with `ccsim reproduce {exp.name}` (full size) or",
            "    `--quick`, then regenerate the gallery with `ccsim gallery`.",
            "",
        ]
    else:
        c = e["claims"]
        held, total = _tally([e])
        lines += [
            f"**Shown:** the {_size_words(c['size'])}; made {describe(c.get('made'))}.  ",
            f"**Rerun:** `ccsim reproduce {exp.name}{' --quick' if c['size'] == 'quick' else ''}`",
            "",
            f"## Claims: {held} of {total} hold",
            "",
            "| claim (the paper's number) | ccsim measured | verdict |",
            "|---|---|---|",
        ]
        for claim in c["claims"]:
            verdict = f"**{claim['status']}**" if claim["status"] != "holds" else "holds"
            lines.append(f"| {_md(claim['text'])} | {_md(_measured(claim))} | {verdict} |")
        if held < total:
            lines += [
                "",
                (
                    "Why a claim fails, where the entry knows, is in its description below: "
                    "ccsim's reading, the paper's ambiguity or its own inconsistency, with numbers."
                ),
            ]
        lines.append("")
    lines += ["## Setup, readings and results", "", _mdtext(exp.description).strip(), ""]
    if e is not None and e["plots"]:
        lines += ["## Plots", ""]
        (docs / exp.name).mkdir(exist_ok=True)
        for png in e["plots"]:
            _write_small_png(png, docs / exp.name / png.name)
            lines += [f"![{png.stem}]({exp.name}/{png.name})", ""]
    return "\n".join(lines)


def _write_small_png(src: Path, dst: Path) -> None:
    """``src`` in 256 colours, without dithering: a plot's few colours and their anti-aliased
    edges survive, at about 40% of the size (the whole gallery fits its budget)."""
    from PIL import Image  # matplotlib's own dependency

    with Image.open(src) as im:
        small = im.convert("RGB").quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(dst, optimize=True)


def _by_size(entries: Sequence[dict[str, Any] | None]) -> str:
    """How many claims hold, at the full size and at the quick one."""
    parts = []
    for size in SIZES_PREFERRED:
        at = [e for e in entries if e and e["claims"]["size"] == size]
        if at:
            held, total = _tally(at)
            n = f"{len(at)} entr{'y' if len(at) == 1 else 'ies'}"
            parts.append(f"{held} of {total} claims hold at the {size} size ({n})")
    return "; ".join(parts) or "no entry run"


def _site_index(shown: Sequence[tuple[Any, dict[str, Any] | None]]) -> str:
    lines = [
        _MARK,
        "",
        "# Gallery: every paper experiment",
        "",
        (
            f"{len(shown)} catalog entries: {_by_size([e for _, e in shown])}. The full size is "
            "the paper's scale; the quick size is a small fabric for a first look, its numbers "
            "not the paper's. Each claim states the paper's number with a tolerance; ccsim's "
            "number stands beside it. Regenerate with `ccsim gallery RESULTS` from the folder "
            "`ccsim reproduce --all` fills (full size where stored, else quick)."
        ),
        "",
        _made_line([e["claims"].get("made") for _, e in shown if e]),
        "",
    ]
    papers: dict[str, list[tuple[Any, dict[str, Any] | None]]] = {}
    for exp, e in shown:
        papers.setdefault(exp.paper, []).append((exp, e))
    for paper, group in papers.items():
        lines += [
            f"## {_mdtext(paper)}",
            "",
            f"{_by_size([e for _, e in group])}.",
            "",
            "| entry | figure | size shown | claims hold |",
            "|---|---|---|---|",
        ]
        for exp, e in group:
            size = e["claims"]["size"] if e else "not run"
            n_held, n = _tally([e]) if e else (0, 0)
            lines.append(
                f"| [{exp.name}]({exp.name}.md) | {_md(exp.figure)} | {size} | "
                f"{f'{n_held} of {n}' if e else '-'} |"
            )
        lines.append("")
    return "\n".join(lines)


def _made_line(made: Sequence[dict[str, str] | None]) -> str:
    """Where and when the shown results were made, in one line (each page names its commit)."""
    recorded = [m for m in made if m]
    if not recorded:
        return "No shown result records where it was made." if made else "Nothing is stored yet."
    where = sorted({f"{m['date']} by ccsim {m['ccsim']} on {m['machine']}" for m in recorded})
    commits = len({m["commit"] for m in recorded})
    line = f"Made {'; '.join(where)}, at {commits} commit{'s' * (commits != 1)} (each page names its own)"
    unrecorded = len(made) - len(recorded)
    return line + (f"; {unrecorded} without a record." if unrecorded else ".")


def _size_words(size: str) -> str:
    return (
        "full size (the paper's scale)" if size == "full" else "quick size (not the paper's scale)"
    )


def _mdtext(text: Any) -> str:
    """Prose for a Markdown page, its Markdown characters taken literally."""
    out = str(text)
    for ch in "\\`*_[]#":
        out = out.replace(ch, "\\" + ch)
    return out.replace("<", "&lt;")
