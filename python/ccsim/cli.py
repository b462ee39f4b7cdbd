"""The ``ccsim`` command: run, validate, list, examples, bench, sweep, plot, report, reproduce,
gallery, import-hpcc, fct-txt, dissector.

A user error (invalid scenario or sweep, missing file, ``--set`` without ``=``, unwritable
``--out``) prints one line ``ccsim: error: <message>`` on stderr and exits 2; Ctrl-C exits 130.
A sweep with failed runs, or an experiment with a failing claim, exits 3. Anything else is a
bug: one line, exit 1, and ``CCSIM_DEBUG=1`` shows the traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import math
import os
import re
import shutil
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ccsim import api, bench, examples, hpcc_import, plots, provenance, results, sweeps
from ccsim._core import MAX_PARTITIONS, ScenarioError, SimulationError
from ccsim.progress import ProgressLine, format_count, format_duration, format_time_ps

if TYPE_CHECKING:
    import pandas as pd

EXIT_BUG = 1
EXIT_USAGE = 2
EXIT_FAILED_RUNS_OR_CLAIMS = 3
EXIT_INTERRUPTED = 130
DEBUG_HINT = "(run with CCSIM_DEBUG=1 for a traceback)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ccsim`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", api.ScenarioWarning)
            warnings.showwarning = _warning_printer()
            return args.func(args)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except ScenarioError as e:
        return _fail(str(e), EXIT_USAGE)
    except SimulationError as e:
        return _fail(f"simulation failed: {e}", EXIT_BUG)
    except FileNotFoundError as e:
        # A plain ENOENT names the file; our own FileNotFoundErrors also say what to pass instead.
        why = "" if e.strerror in (None, os.strerror(errno.ENOENT)) else f": {e.strerror}"
        return _fail(f"file not found: {e.filename or e}{why}", EXIT_USAGE)
    except BrokenPipeError:  # e.g. `ccsim list | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BUG
    except OSError as e:
        return _fail(f"{e.filename}: {e.strerror}" if e.filename else str(e), EXIT_USAGE)
    except Exception as e:
        if os.environ.get("CCSIM_DEBUG"):
            raise
        return _fail(f"{type(e).__name__}: {e} {DEBUG_HINT}", EXIT_BUG)


def _warning_printer() -> Callable[..., None]:
    """Print each distinct scenario warning once, as `warning: <field>: ...` on stderr."""
    seen: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        text = str(message)
        if issubclass(category, api.ScenarioWarning) and text in seen:
            return
        seen.add(text)
        print(f"warning: {text}", file=sys.stderr)

    return show


def _seed(text: str) -> int:
    """A seed: an integer in [0, 2^63) (a TOML integer, which is signed 64-bit)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not an integer") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text} is out of range; a seed is in [0, 2^63)")
    return value


def _threads_count(text: str) -> int:
    """A number of threads: an integer >= 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of threads (1, 2, 4 ...)")
    return int(text)


def _partitions(text: str) -> int:
    """A cap on a parallel run's partitions: an integer from 1 to the engine's most."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_PARTITIONS:
        raise argparse.ArgumentTypeError(
            f"`{text}` is not a number of partitions (1 to {MAX_PARTITIONS})"
        )
    return int(text)


def _thread_counts(text: str) -> list[int]:
    """Numbers of threads, comma-separated (``1,2,4,8,16``)."""
    return [_threads_count(part) for part in text.split(",")]


def _threads(text: str) -> str:
    """A run's threads: a number >= 1 or `auto`, as the TOML value of `threads`."""
    return '"auto"' if text == "auto" else str(_threads_count(text))


# --- commands ------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    path = api.scenario_path(args.scenario)
    if args.threads is not None:
        args.set = [*args.set, f"threads={args.threads}"]
    # Check the settings first (the fabric is built once, by the run), so a bad scenario fails
    # before any directory is created.
    resolved = api.validate(path, seed=args.seed, overrides=args.set, build=False)
    if args.out is not None:
        out = Path(args.out)
    else:
        # A run with overrides or another seed gets a directory of its own, named after them.
        settings = [*(args.set or []), *([f"seed={args.seed}"] if args.seed is not None else [])]
        name = "-".join([api.scenario_name(resolved) or path.stem, *settings])
        out = Path("results") / _dir_name(name)
    if not args.force:
        _refuse_other_run(out, resolved)
    created = not out.exists()
    _check_writable(out)
    summary = out / "summary.json"
    summary.unlink(missing_ok=True)  # so an interrupted run cannot pass off an old one
    bar = ProgressLine(sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    try:
        result = api.run(
            path,
            seed=args.seed,
            overrides=args.set,
            out=out,
            progress=bar,
            allow_long=args.allow_long,
        )
    except ScenarioError:
        if created and not any(out.iterdir()):
            out.rmdir()  # building found the error: leave no empty directory behind
        raise
    except KeyboardInterrupt:
        if not summary.is_file():
            raise
        # The engine writes what it measured, marked partial, before it gives up.
        if json.loads(summary.read_text()).get("partial"):
            what = "what was measured until then is in"
        else:
            what = "the run had finished: its complete output is in"
        return _fail(f"interrupted; {what} {out}", EXIT_INTERRUPTED)
    finally:
        if bar is not None:
            bar.close()
    print(out if args.quiet else format_summary(result))
    return 0


def _refuse_other_run(out: Path, resolved: str) -> None:
    """Raise ScenarioError if ``out`` holds a run of another resolved scenario."""
    if not (out / "config.toml").exists():
        return
    try:
        old = api.read_text(out / "config.toml")
    except ScenarioError as e:
        raise ScenarioError(
            f"--out {out}: holds a config.toml that is not a run's ({e}); choose another --out, "
            "or pass --force to replace it"
        ) from None
    if old == resolved:
        return
    changed = _changed_keys(
        api.read_toml_text(old, str(out / "config.toml")), api.read_toml_text(resolved, "scenario")
    )
    changed.sort(key=lambda k: (k.count("."), k))  # what the user set before what it implies
    raise ScenarioError(
        f"--out {out}: holds a run with other settings ({', '.join(changed[:4]) or 'format'}"
        f"{', ...' if len(changed) > 4 else ''} differ); choose another --out, or pass --force "
        "to replace it"
    )


def _changed_keys(a: Any, b: Any, prefix: str = "") -> list[str]:
    """The dotted keys whose values differ between two parsed TOML documents."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            k
            for key in sorted(set(a) | set(b))
            for k in _changed_keys(a.get(key), b.get(key), f"{prefix}{key}.")
        ]
    return [] if a == b else [prefix.rstrip(".")]


def _cmd_validate(args: argparse.Namespace) -> int:
    path = api.scenario_path(args.scenario)
    resolved = api.validate(path, seed=args.seed, overrides=args.set)
    ok = f"ok: {api.scenario_name(resolved) or path.stem}"
    if args.print:  # stdout stays a re-runnable TOML file; the verdict goes to stderr
        sys.stdout.write(resolved if resolved.endswith("\n") else resolved + "\n")
        print(ok, file=sys.stderr)
    else:
        print(ok)
    return 0


def _cmd_examples(args: argparse.Namespace) -> int:
    if args.copy is not None:
        for folder in examples.copy_to(Path(args.copy)):
            print(folder)
        return 0
    rows = [
        (name, _header_line(examples.SCENARIOS / f"{name}.toml"))
        for name in examples.scenario_names()
    ]
    width = max(len(n) for n, _ in rows)
    print("Built-in scenarios (`ccsim run NAME` from any directory):")
    for name, line in rows:
        print(f"  {name:<{width}}  {line}")
    print(
        f"Paper experiments: `ccsim reproduce --list`. Copy every example here to edit: "
        f"`ccsim examples --copy .` ({examples.ROOT})"
    )
    return 0


def _header_line(path: Path, width: int = 90) -> str:
    """The first sentence of a scenario's header comment, cut to ``width`` characters."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    text = " ".join(lines)
    # The first sentence: a ". " that ends it is not one after an abbreviation ("Fig. 6").
    first = re.split(r"(?<!\bFig)(?<!\bFigs)(?<!\bSec)(?<!\bEq)\. ", text)[0].rstrip(".")
    return first if len(first) <= width else first[: width - 3].rstrip() + "..."


def _cmd_list(args: argparse.Namespace) -> int:
    print(format_catalog(api.catalog()))
    return 0


def _cmd_import_hpcc(args: argparse.Namespace) -> int:
    config = Path(args.config)
    target = Path(args.out) if args.out else None
    folder = target.resolve().parent if target else Path.cwd()
    imported = hpcc_import.import_config(config, folder)
    notes = [f"# Imported by `ccsim import-hpcc` from the HPCC ns-3 simulator's {config.name}."]
    if imported.not_honoured:
        notes.append("# Not honoured (ccsim's behaviour instead):")
        notes += [f"#   {n}" for n in imported.not_honoured]
    text = "\n".join(notes) + "\n" + api.to_toml(imported.scenario)
    for n in imported.not_honoured:
        print(f"warning: not honoured: {n}", file=sys.stderr)
    if target is None:
        sys.stdout.write(text)
    else:
        target.write_text(text)
        print(f"wrote {target}", file=sys.stderr)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.partitions is not None and max(args.threads) == 1:
        return _fail(
            "--partitions cuts parallel runs only: add a thread count >= 2 (--threads 1,2)",
            EXIT_USAGE,
        )
    rows = []
    for name in [args.only] if args.only else bench.BENCHMARKS:
        for threads in args.threads:
            on = f" on {threads} threads" if threads > 1 else ""
            print(f"bench: running {name}{on} ...", file=sys.stderr, flush=True)
            try:
                rows.append(bench.run_isolated(name, threads, args.partitions))
            except RuntimeError as e:
                return _fail(str(e), EXIT_BUG)
    print("\n".join(json.dumps(r) for r in rows) if args.json else bench.format_table(rows))
    if args.page is not None:
        command = (
            " ".join(["ccsim", *sys.argv[1:]]) if sys.argv[1:2] == ["bench"] else "ccsim bench"
        )
        api.write_atomic(args.page, bench.markdown_page(rows, command, provenance.provenance()))
        print(f"bench: the table with its date, commit and machine is in {args.page}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    sweep, out, runs = _run_sweep(sweeps.Sweep.from_file(args.sweep), args)
    if args.quiet:
        print(out)
    else:
        print(format_sweep_summary(sweep.name, runs, out) + f"\n  results in {out}")
    return EXIT_FAILED_RUNS_OR_CLAIMS if (runs["status"] != sweeps.STATUS_OK).any() else 0


def _run_sweep(
    sweep: sweeps.Sweep, args: argparse.Namespace
) -> tuple[sweeps.Sweep, Path, pd.DataFrame]:
    """Run ``sweep`` with the ``--set``, ``--out`` and backend flags of ``args`` and a progress
    line; return the sweep as run, its results directory and its runs table."""
    extra = api.parse_overrides(args.set)
    sweep = dataclasses.replace(
        sweep,
        overrides={**sweep.overrides, **extra},
        max_runs=getattr(args, "max_runs", None) or sweep.max_runs,
    )
    out = Path(args.out) if args.out is not None else Path("results") / _dir_name(sweep.name)
    bar = None
    if not args.quiet and sys.stderr.isatty():
        from ccsim.progress import SweepProgress

        bar = SweepProgress(sys.stderr)
    try:
        runs = sweeps.run_sweep(
            sweep,
            out,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            progress=bar,
            validating=None if bar is None else bar.validating,
            force=args.force,
            allow_long=args.allow_long,
        )
    finally:
        if bar is not None:
            bar.close()
    if runs.attrs.get("skipped"):
        print(
            f"{_plural(runs.attrs['skipped'], 'run')} already finished in {out}: "
            "read back, not run again",
            file=sys.stderr,
        )
    return sweep, out, runs


def _cmd_plot(args: argparse.Namespace) -> int:
    from ccsim import report

    res = load_results(args.results, args.where)
    out = Path(args.out) if args.out is not None else Path(args.results) / "plots"
    formats = args.format or plots.FORMATS
    labels = report.flow_labels(res.out_dir)
    where = ", ".join(args.where or ())
    figures, skipped = plots.plot(res, out, args.kind or None, formats, args.style, labels, where)
    for name in figures:
        print(f"{name:<12} {' '.join(str(out / f'{name}.{fmt}') for fmt in formats)}")
    for kind, why in skipped.items():
        print(f"{kind:<12} skipped: {why}", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ccsim import report

    res = load_results(args.results, args.where)
    out = Path(args.out) if args.out is not None else Path(args.results) / report.REPORT_HTML
    print(report.write_report(res, out, kinds=args.kind or None))
    return 0


def _cmd_fct_txt(args: argparse.Namespace) -> int:
    res = results.load(args.results)
    if not isinstance(res, api.RunResult):
        raise ScenarioError(
            f"{args.results}: a sweep; give one of its runs, e.g. {args.results}/runs/<run_id>"
        )
    out = Path(args.out) if args.out is not None else Path(args.results) / "fct.txt"
    api.write_atomic(out, hpcc_import.fct_txt(res.flows))
    print(out)
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from ccsim import experiments

    directory = experiments.catalog_dir(args.catalog)
    if args.list:
        print(format_experiments(experiments.list_experiments(directory)))
        return 0
    size = "quick" if args.quick else "full"
    if args.all:
        if args.name is not None:
            raise ScenarioError("reproduce: name one experiment or give --all, not both")
        return _reproduce_all(experiments.list_experiments(directory), size, args)
    if args.name is None:
        raise ScenarioError("reproduce: name an experiment, --list them, or run --all")
    exp = experiments.load_experiment(args.name, directory)
    return _reproduce(exp, size, args)


def _reproduce(exp: Any, size: str, args: argparse.Namespace) -> int:
    """Run catalog entry ``exp`` at ``size``, plot it, check its claims, write its report."""
    from ccsim import experiments, report

    print(f"{exp.name} ({size}): {exp.title}\n  {exp.paper}; {exp.figure}", flush=True)
    experiments.check_claim_arguments(exp.claims_at(size), exp.sweep(size).params, str(exp.path))
    sweep, out, runs = _run_sweep(exp.sweep(size), args)
    res = load_results(str(out))
    verdicts = experiments.check_claims(exp.claims_at(size), res, exp.reference)
    info = {
        "title": exp.title,
        "paper": exp.paper,
        "figure": exp.figure,
        "description": exp.description,
        "size": size,
        "size_settings": api.to_toml(exp.sizes.get(size, {})),
        "labels": exp.labels.as_table(),
        "made": provenance.provenance(),
    }
    claims = {**info, "experiment": exp.name, "claims": [v.as_dict() for v in verdicts]}
    api.write_atomic(out / report.CLAIMS_JSON, json.dumps(claims, indent=2) + "\n")
    style = args.style or exp.style
    figures, _ = plots.plot(res, out / "plots", exp.plots or None, style=style, labels=exp.labels)
    page = report.write_report(res, out / report.REPORT_HTML, figures=figures)
    print(format_sweep_summary(sweep.name, runs, out))
    if exp.reference:
        tables = experiments.reference_tables(res, exp.reference)
        api.write_atomic(out / "reference.txt", tables + "\n")
        print(tables)
    print(format_claims(verdicts))
    print(f"  plots in {out / 'plots'}, report {page}")
    failed = (runs["status"] != sweeps.STATUS_OK).any()
    held = all(v.status == experiments.HOLDS for v in verdicts)
    return 0 if held and not failed else EXIT_FAILED_RUNS_OR_CLAIMS


def _reproduce_all(entries: Sequence[Any], size: str, args: argparse.Namespace) -> int:
    """Every catalog entry at ``size`` into OUT/<name>-<size>, then the gallery: one HTML page
    and a Markdown claims table (OUT/gallery-<size>.html, .md). An entry that cannot run is
    shown with its error; the others still run."""
    import copy

    from ccsim import gallery

    root = Path(args.out) if args.out is not None else Path("results")
    shown, code = [], 0
    for exp in entries:
        one = copy.copy(args)
        one.out = str(root / f"{exp.name}-{size}")
        try:
            code = max(code, _reproduce(exp, size, one))
            error = None
        except ScenarioError as e:
            print(f"  {exp.name}: error: {e}", file=sys.stderr)
            code, error = max(code, EXIT_FAILED_RUNS_OR_CLAIMS), str(e)
        shown.append(gallery.entry_summary(Path(one.out), exp.name, error))
    page = gallery.write_gallery(shown, root / f"gallery-{size}.html", size)
    table = root / f"gallery-{size}.md"
    api.write_atomic(table, gallery.claims_markdown(shown, size))
    held = sum(c["status"] == "holds" for e in shown for c in e["claims"].get("claims", []))
    total = sum(len(e["claims"].get("claims", [])) for e in shown)
    print(f"{len(shown)} entries, {held} of {total} claims hold; gallery {page}, claims {table}")
    return code


def _cmd_gallery(args: argparse.Namespace) -> int:
    from ccsim import experiments, gallery

    results_dir = Path(args.results)
    if not results_dir.is_dir():
        raise ScenarioError(
            f"gallery: {results_dir} is not a folder; give the one `ccsim reproduce --all` filled"
        )
    entries = experiments.list_experiments(experiments.catalog_dir(args.catalog))
    held, total = gallery.write_site(results_dir, Path(args.docs), entries)
    print(f"{len(entries)} pages, {held} of {total} claims hold: {Path(args.docs) / 'index.md'}")
    return 0


def load_results(path: str, where: Sequence[str] = ()) -> sweeps.SweepResult:
    """A run or sweep directory as a SweepResult, restricted to the runs matching ``where``."""
    res = results.load(path)
    if isinstance(res, api.RunResult):
        res = sweeps.SweepResult.from_run(res)
    return res.where(api.parse_overrides(where))


# --- output --------------------------------------------------------------------------------------


def format_summary(result: api.RunResult) -> str:
    """A few lines for a human: flows, FCT per size bin (ACC bins), PFC by layer, speed, output."""
    s = result.summary
    flows = s.get("flows", {})
    sim_time = format_time_ps(s.get("sim_time_ps", 0))
    head = f"{s.get('name', 'run')} ({s.get('scheme', '?')}): "
    long_lived = flows.get("long_lived", 0)
    sized = flows.get("total", 0) - long_lived
    if sized:
        head += f"{flows.get('finished', '?')}/{sized} flows finished, "
    if long_lived:
        head += f"{_plural(long_lived, 'long-lived flow')}, "
    lines = [head + f"{sim_time} simulated"]
    bins = s.get("fct", {}).get("acc", {})
    rows = [(label, st) for label, st in bins.items() if st.get("count")]
    if rows:
        lines.append(
            f"  {'FCT by size':<14}{'count':>8}{'avg us':>11}{'p99 us':>11}"
            f"{'avg slowdown':>14}{'p99 slowdown':>14}"
        )
        order = api.size_bin_labels("acc")
        for label, st in sorted(rows, key=lambda r: _rank(order, r[0])):
            lines.append(
                f"  {label:<14}{st['count']:>8}{st['fct_avg_us']:>11.1f}{st['fct_p99_us']:>11.1f}"
                f"{st['slowdown_avg']:>14.2f}{st['slowdown_p99']:>14.2f}"
            )
    pfc = s.get("pfc", {})
    by_layer = pfc.get("by_layer", {})
    layers = ", ".join(
        f"{name} {v.get('pauses_sent', 0)}/{v.get('pauses_received', 0)}"
        for name, v in sorted(by_layer.items(), key=lambda kv: _rank(api.LAYERS, kv[0]))
    )
    lines.append(
        f"  PFC PAUSE frames: {pfc.get('pauses_sent', 0)} (sent/received by layer: {layers})"
    )
    lines.append(
        f"  ECN: {s.get('ecn_marked', 0)} data packets marked CE; "
        f"{s.get('ctrl_sent', 0)} control packets (CNPs, feedback, grants) generated "
        "(per port: pfc_ports)"
    )
    perf = s.get("perf", {})
    if perf:
        lines.append(
            f"  {format_count(s.get('events', 0))} events in {format_duration(perf['wall_s'])}: "
            f"{format_count(perf['events_per_s'])} events/s, "
            f"{format_count(perf['traversals_per_s'])} link traversals/s"
        )
    if result.out_dir is not None:
        lines.append(f"  results in {result.out_dir}")
        if result.trace is not None:
            lines.append(
                f"  packet trace in {result.out_dir / 'trace.pcapng'} (Wireshark; the ccsim "
                "header's dissector: `ccsim dissector`)"
            )
    return "\n".join(lines)


def format_sweep_summary(name: str, runs: pd.DataFrame, out: Path) -> str:
    """The runs table for a human: parameters, status, flows, p99 slowdown, PFC pauses; then
    one line per failed run with its error."""
    ok = int((runs["status"] == sweeps.STATUS_OK).sum())
    lines = [f"{name}: {_plural(len(runs), 'run')}, {ok} ok, {len(runs) - ok} failed"]
    params = api.read_sweep_meta(out)["params"]
    header = ["run", *params, "status", "flows", "p99 slowdown", "PFC pauses"]
    rows = []
    for _, r in runs.iterrows():
        good = r["status"] == sweeps.STATUS_OK
        rows.append(
            [
                r["run_id"],
                *(str(r[p]) for p in params),
                r["status"],
                f"{r['flows.finished']:.0f}/{r['flows.total']:.0f}" if good else "-",
                _fmt(r.get("fct.all.slowdown_p99"), "{:.2f}") if good else "-",
                _fmt(r.get("pfc.pauses_sent"), "{:.0f}") if good else "-",
            ]
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    for _, r in runs[runs["status"] != sweeps.STATUS_OK].iterrows():
        lines.append(f"  failed {r['run_id']}: {r['error']}")
    return "\n".join(lines)


def format_claims(verdicts: Sequence[Any]) -> str:
    """Each claim as ``holds`` / ``FAILS`` / ``ERROR`` with its text and measured numbers."""
    lines = []
    for v in verdicts:
        mark = v.status if v.status == "holds" else v.status.upper()
        lines.append(f"  {mark:<6} {v.claim.text}")
        measured = "; ".join(f"{expr} = {_measured(value)}" for expr, value in v.measured)
        lines.append(f"         {v.claim.check}")
        if measured:
            lines.append(f"         measured: {measured}")
        if v.message:
            lines.append(f"         {v.message}")
    held = sum(v.status == "holds" for v in verdicts)
    lines.append(f"  {held} of {len(verdicts)} claims hold")
    return "\n".join(lines)


def format_experiments(entries: Sequence[Any]) -> str:
    """The catalog for ``ccsim reproduce --list``: name, title, paper and figure, sizes."""
    lines = []
    for e in entries:
        lines.append(f"{e.name}: {e.title}")
        lines.append(f"    paper: {e.paper}")
        lines.append(f"    figure: {e.figure}")
        for size in ("quick", "full"):
            lines.append(f"    {size}: {_plural(len(e.sweep(size).runs()), 'run')}")
    return "\n".join(lines)


def _measured(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_measured(v) for v in value) + "]"
    return str(value)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _rank(order: Sequence[str], name: str) -> int:
    """``name``'s position in the engine's ``order``; names it does not list go last."""
    return order.index(name) if name in order else len(order)


def _fmt(value: Any, pattern: str) -> str:
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    return "-" if missing else pattern.format(value)


def format_catalog(cat: Mapping[str, Any]) -> str:
    """The catalog as indented text: schemes (paper, parameters), topologies, workloads."""
    width = max(60, min(shutil.get_terminal_size().columns, 110))
    out: list[str] = []
    for section in ("schemes", "topologies", "workloads"):
        entries = cat.get(section, {})
        out.append(f"{section}:")
        pad = max((len(n) for n in entries), default=0) + 4
        for name in sorted(entries):
            info = entries[name]
            indent = " " * pad
            desc = info.get("description", "") if isinstance(info, Mapping) else str(info)
            out.append(
                textwrap.fill(
                    desc or "-",
                    width,
                    initial_indent=f"  {name:<{pad - 2}}",
                    subsequent_indent=indent,
                )
            )
            if isinstance(info, Mapping):
                if info.get("paper"):
                    out.append(
                        textwrap.fill(
                            f"paper: {info['paper']}",
                            width,
                            initial_indent=indent,
                            subsequent_indent=indent,
                        )
                    )
                params = info.get("params") or {}
                if params:
                    text = "params: " + ", ".join(f"{k}={params[k]}" for k in sorted(params))
                    out.append(
                        textwrap.fill(
                            text,
                            width,
                            initial_indent=indent,
                            subsequent_indent=indent + "  ",
                            break_on_hyphens=False,
                        )
                    )
        out.append("")
    return "\n".join(out).rstrip()


# --- plumbing ------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, like every other error
        self.exit(EXIT_USAGE, f"ccsim: error: {message} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ccsim", description="Packet-level datacenter congestion-control simulator.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    q = sub.add_parser("run", help="run a scenario, write its results directory")
    _scenario_args(q)
    q.add_argument(
        "--threads",
        type=_threads,
        metavar="N",
        help="threads of this run: N or auto, the default (N >= 2 cuts the fabric into "
        "partitions run in parallel; every N gives the same results; same as --set threads=N)",
    )
    q.add_argument("--out", metavar="DIR", help="results directory (default results/<name>)")
    _force_arg(q)
    _allow_long_arg(q)
    q.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress or summary; print only the results directory",
    )
    q.set_defaults(func=_cmd_run)

    q = sub.add_parser("validate", help="check a scenario without running it")
    _scenario_args(q)
    q.add_argument("--print", action="store_true", help="print the fully resolved scenario")
    q.set_defaults(func=_cmd_validate)

    q = sub.add_parser("list", help="list schemes, topologies and workloads")
    q.set_defaults(func=_cmd_list)

    q = sub.add_parser("examples", help="list the built-in example scenarios, or copy them out")
    q.add_argument(
        "--copy",
        metavar="DIR",
        help="copy scenarios/, experiments/, sweeps/ and fidelity/ into DIR",
    )
    q.set_defaults(func=_cmd_examples)

    q = sub.add_parser("sweep", help="run a base scenario over a parameter grid, in parallel")
    q.add_argument("sweep", metavar="SWEEP", help="sweep TOML file (base, [set], [grid])")
    _backend_args(q)
    _allow_long_arg(q)
    q.add_argument("--out", metavar="DIR", help="results directory (default results/<name>)")
    q.add_argument(
        "--quiet", "-q", action="store_true", help="no progress or table; print only the directory"
    )
    q.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help=f"allow a grid of up to N runs (default {sweeps.MAX_RUNS})",
    )
    q.set_defaults(func=_cmd_sweep)

    q = sub.add_parser("plot", help="plot a run's or a sweep's results (PNG and SVG, or PDF)")
    _results_args(q)
    _kind_arg(q)
    q.add_argument(
        "--format",
        action="append",
        choices=plots.ALL_FORMATS,
        help="write this format (repeatable; default png and svg)",
    )
    _style_arg(q)
    q.add_argument("--out", metavar="DIR", help="where to write (default RESULTS/plots)")
    q.set_defaults(func=_cmd_plot)

    q = sub.add_parser("report", help="write one self-contained HTML page for a run or sweep")
    _results_args(q)
    _kind_arg(q)
    q.add_argument("--out", metavar="FILE", help="the page (default RESULTS/report.html)")
    q.set_defaults(func=_cmd_report)

    q = sub.add_parser(
        "reproduce", help="run a paper experiment from the catalog, plot it, check its claims"
    )
    q.add_argument("name", metavar="NAME", nargs="?", help="the experiment (see --list)")
    q.add_argument("--list", action="store_true", help="list the experiments, papers and figures")
    q.add_argument("--quick", action="store_true", help="the quick size (about a minute)")
    q.add_argument(
        "--all",
        action="store_true",
        help="every entry, each into DIR/<name>-<size>, and a gallery page of them all",
    )
    _backend_args(q)
    _allow_long_arg(q)
    q.add_argument(
        "--out",
        metavar="DIR",
        help="results directory (default results/<name>-<size>; with --all, the folder of them)",
    )
    _catalog_arg(q)
    q.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    _style_arg(q, default=None)
    q.set_defaults(func=_cmd_reproduce)

    q = sub.add_parser(
        "gallery", help="write the documentation's gallery pages from stored reproduce results"
    )
    q.add_argument(
        "results",
        metavar="RESULTS",
        help="the folder `reproduce --all` fills, holding <name>-full and <name>-quick",
    )
    q.add_argument(
        "--docs", metavar="DIR", default="docs/gallery", help="the pages (default docs/gallery)"
    )
    _catalog_arg(q)
    q.set_defaults(func=_cmd_gallery)

    q = sub.add_parser(
        "import-hpcc", help="turn an HPCC ns-3 simulator config.txt into a ccsim scenario"
    )
    q.add_argument("config", metavar="CONFIG", help="the simulator's configuration file")
    q.add_argument(
        "--out",
        "-o",
        metavar="FILE",
        help="write the scenario here (default: stdout, with file paths relative to the "
        "current directory)",
    )
    q.set_defaults(func=_cmd_import_hpcc)

    q = sub.add_parser("fct-txt", help="write a run's flows as the HPCC ns-3 simulator's fct.txt")
    q.add_argument("results", metavar="RUN", help="a run's results directory")
    q.add_argument("--out", "-o", metavar="FILE", help="where to write (default RUN/fct.txt)")
    q.set_defaults(func=_cmd_fct_txt)

    q = sub.add_parser(
        "dissector", help="print the path of the Wireshark Lua dissector for packet traces"
    )
    q.set_defaults(func=_cmd_dissector)

    q = sub.add_parser("bench", help="run the built-in benchmarks, one process each")
    q.add_argument("--only", choices=bench.BENCHMARKS, help="run just this benchmark")
    q.add_argument("--json", action="store_true", help="print one JSON line per benchmark")
    q.add_argument(
        "--page",
        metavar="FILE",
        help="also write the table as a Markdown page with the date, commit and machine "
        "(the documentation's: docs/bench-latest.md)",
    )
    q.add_argument(
        "--threads",
        type=_thread_counts,
        default=[1],
        metavar="N[,N...]",
        help="run each benchmark on N threads (N >= 2: the parallel engine; default 1); "
        "with several counts, e.g. 1,2,4,8,16, the table adds each one's speed-up over 1",
    )
    q.add_argument(
        "--partitions",
        type=_partitions,
        metavar="N",
        help="cut each parallel run into N partitions (the scenario key `partitions`; "
        "default: one per thread, as the fabric's shape allows); speed only, never results",
    )
    q.set_defaults(func=_cmd_bench)
    return p


# Arguments several commands share.


def _scenario_args(q: argparse.ArgumentParser) -> None:
    q.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    q.add_argument("--seed", type=_seed, help="replace the scenario's seed")
    q.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field, e.g. --set cc.scheme=dcqcn (repeatable)",
    )
    _unset_arg(q)


def _allow_long_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--allow-long",
        action="store_true",
        help="run even a scenario estimated at over 1e12 events (a day or more), which is "
        "otherwise refused with the warning that names its setting",
    )


def _catalog_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--catalog",
        metavar="DIR",
        help="the experiments folder (default ./experiments, else the built-in catalog)",
    )


def _unset_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--unset",
        action="append",
        dest="set",
        type=lambda key: f"~{key}",
        metavar="KEY",
        help="remove a field, so its default applies, e.g. --unset output.trace (repeatable)",
    )


def _force_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--force",
        action="store_true",
        help="write into --out even if it holds results of other settings",
    )


def _backend_args(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--backend",
        choices=sweeps.BACKENDS,
        default="local",
        help="local: a process pool on this machine (default); ray: a Ray cluster",
    )
    q.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster to join, e.g. auto or HOST:6379 (default: start a local Ray)",
    )
    q.add_argument("--workers", type=int, metavar="N", help="parallel runs (default: all cores)")
    _force_arg(q)
    q.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field in every run, e.g. --set workload.0.stop=1ms (repeatable)",
    )
    _unset_arg(q)


def _results_args(q: argparse.ArgumentParser) -> None:
    q.add_argument("results", metavar="RESULTS", help="a run or sweep results directory")
    q.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="PARAM=VALUE",
        help="only the runs with this parameter value, e.g. --where scheme=dcqcn (repeatable)",
    )


def _style_arg(q: argparse.ArgumentParser, default: str | None = "screen") -> None:
    q.add_argument(
        "--style",
        choices=list(plots.STYLES),
        default=default,
        help="figure style: screen, or paper (one column, 3.5 in) / paper-wide (7 in) with "
        "small fonts",
    )


def _kind_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--kind",
        action="append",
        choices=list(plots.KINDS),
        help="plot only this kind (repeatable; default: every kind the results have data for)",
    )


def _cmd_dissector(args: argparse.Namespace) -> int:
    print(Path(__file__).parent / "wireshark" / "ccsim.lua")
    return 0


def _check_writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise ScenarioError(
            f"--out {out}: cannot write there ({e.strerror or e}); choose a writable directory"
        ) from None


def _dir_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "run"


def _fail(message: str, code: int) -> int:
    print("ccsim: error: " + " ".join(str(message).split("\n")), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
