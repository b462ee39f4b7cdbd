"""The ``ccsim`` command: run, validate, list, bench.

A user error (invalid scenario, missing file, ``--set`` without ``=``, unwritable ``--out``)
prints one line ``ccsim: error: <message>`` on stderr and exits 2; Ctrl-C exits 130. Anything
else is a bug: one line, exit 1, and ``CCSIM_DEBUG=1`` shows the traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ccsim import api, bench
from ccsim._core import ScenarioError, SimulationError
from ccsim.progress import ProgressLine, format_count, format_duration, format_time_ps

EXIT_BUG = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
DEBUG_HINT = "(run with CCSIM_DEBUG=1 for a traceback)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ccsim`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except ScenarioError as e:
        return _fail(str(e), EXIT_USAGE)
    except SimulationError as e:
        return _fail(f"simulation failed: {e}", EXIT_BUG)
    except FileNotFoundError as e:
        return _fail(f"file not found: {e.filename or e}", EXIT_USAGE)
    except BrokenPipeError:  # e.g. `ccsim list | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BUG
    except OSError as e:
        return _fail(f"{e.filename}: {e.strerror}" if e.filename else str(e), EXIT_USAGE)
    except Exception as e:
        if os.environ.get("CCSIM_DEBUG"):
            raise
        return _fail(f"{type(e).__name__}: {e} {DEBUG_HINT}", EXIT_BUG)


# --- commands ------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    # Validate first, so a bad scenario fails before any directory is created.
    resolved = api.validate(path, seed=args.seed, overrides=args.set)
    if args.out is not None:
        out = Path(args.out)
    else:
        out = Path("results") / _dir_name(api.scenario_name(resolved) or path.stem)
    _check_writable(out)
    bar = ProgressLine(sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    try:
        result = api.run(path, seed=args.seed, overrides=args.set, out=out, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    print(out if args.quiet else format_summary(result))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    resolved = api.validate(path, seed=args.seed, overrides=args.set)
    ok = f"ok: {api.scenario_name(resolved) or path.stem}"
    if args.print:  # stdout stays a re-runnable TOML file; the verdict goes to stderr
        sys.stdout.write(resolved if resolved.endswith("\n") else resolved + "\n")
        print(ok, file=sys.stderr)
    else:
        print(ok)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    print(format_catalog(api.catalog()))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    rows = []
    for name in [args.only] if args.only else bench.BENCHMARKS:
        print(f"bench: running {name} ...", file=sys.stderr, flush=True)
        try:
            rows.append(bench.run_isolated(name))
        except RuntimeError as e:
            return _fail(str(e), EXIT_BUG)
    print("\n".join(json.dumps(r) for r in rows) if args.json else bench.format_table(rows))
    return 0


# --- output --------------------------------------------------------------------------------------


def format_summary(result: api.RunResult) -> str:
    """A few lines for a human: flows, FCT per size bin (ACC bins), PFC by layer, speed, output."""
    s = result.summary
    flows = s.get("flows", {})
    sim_time = format_time_ps(s.get("sim_time_ps", 0))
    head = f"{s.get('name', 'run')} ({s.get('scheme', '?')}): "
    head += f"{flows.get('finished', '?')}/{flows.get('total', '?')} flows finished, "
    lines = [head + f"{sim_time} simulated"]
    bins = s.get("fct", {}).get("acc", {})
    rows = [(label, st) for label, st in bins.items() if st.get("count")]
    if rows:
        lines.append(
            f"  {'FCT by size':<14}{'count':>8}{'avg us':>11}{'p99 us':>11}"
            f"{'avg slowdown':>14}{'p99 slowdown':>14}"
        )
        for label, st in sorted(rows, key=lambda r: _BIN_ORDER.get(r[0], 9)):
            lines.append(
                f"  {label:<14}{st['count']:>8}{st['fct_avg_us']:>11.1f}{st['fct_p99_us']:>11.1f}"
                f"{st['slowdown_avg']:>14.2f}{st['slowdown_p99']:>14.2f}"
            )
    pfc = s.get("pfc", {})
    by_layer = pfc.get("by_layer", {})
    layers = ", ".join(
        f"{name} {v.get('pauses_sent', 0)}/{v.get('pauses_received', 0)}"
        for name, v in sorted(by_layer.items(), key=lambda kv: _LAYER_ORDER.get(kv[0], 9))
    )
    lines.append(
        f"  PFC PAUSE frames: {pfc.get('pauses_sent', 0)} (sent/received by layer: {layers})"
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
    return "\n".join(lines)


_BIN_ORDER = {"<100KB": 0, "100KB-10MB": 1, ">10MB": 2}
_LAYER_ORDER = {"host": 0, "tor": 1, "agg": 2, "core": 3}


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


_FCT_KEY = re.compile(r"(^|_)(count|n|avg|mean|p99)(_|$)")


def _flat(stats: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """One level of nesting flattened: {"fct_ps": {"avg": 1}} -> [("fct_ps_avg", 1)]."""
    out: list[tuple[str, Any]] = []
    for k, v in stats.items():
        if isinstance(v, Mapping):
            out += [(f"{k}_{k2}", v2) for k2, v2 in v.items() if not isinstance(v2, Mapping)]
        elif not isinstance(v, list):
            out.append((k, v))
    return out


def _stat(key: str, value: Any) -> str:
    """``avg_fct_ps``, 1.2e6 -> ``avg_fct 1.20 us``; other numbers are shown plainly."""
    parts = key.split("_")
    if "ps" in parts and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{'_'.join(p for p in parts if p != 'ps')} {format_time_ps(value)}"
    if isinstance(value, float):
        return f"{key} {value:.3g}"
    return f"{key} {value}"


# --- plumbing ------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, like every other error
        self.exit(EXIT_USAGE, f"ccsim: error: {message} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ccsim", description="Packet-level datacenter congestion-control simulator.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def scenario_args(q: argparse.ArgumentParser) -> None:
        q.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
        q.add_argument("--seed", type=int, help="replace the scenario's seed")
        q.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override a field, e.g. --set cc.scheme=dcqcn (repeatable)",
        )

    q = sub.add_parser("run", help="run a scenario, write its results directory")
    scenario_args(q)
    q.add_argument("--out", metavar="DIR", help="results directory (default results/<name>)")
    q.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress or summary; print only the results directory",
    )
    q.set_defaults(func=_cmd_run)

    q = sub.add_parser("validate", help="check a scenario without running it")
    scenario_args(q)
    q.add_argument("--print", action="store_true", help="print the fully resolved scenario")
    q.set_defaults(func=_cmd_validate)

    q = sub.add_parser("list", help="list schemes, topologies and workloads")
    q.set_defaults(func=_cmd_list)

    q = sub.add_parser("bench", help="run the built-in benchmarks, one process each")
    q.add_argument("--only", choices=bench.BENCHMARKS, help="run just this benchmark")
    q.add_argument("--json", action="store_true", help="print one JSON line per benchmark")
    q.set_defaults(func=_cmd_bench)
    return p


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
