"""The Python API: run or validate a scenario, load a run directory, list what the engine offers.

Everything here converts: scenarios in (TOML file, or a dict serialized to TOML text), columnar
tables out (pandas DataFrames). The engine (``ccsim._core``) owns the scenario schema, the
simulation and every metric; this module never re-implements any of them.
"""

from __future__ import annotations

import json
import numbers
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Union

from ccsim import _core
from ccsim._core import ScenarioError

if TYPE_CHECKING:  # pandas is imported lazily so `python -m ccsim.bench` stays small
    import pandas as pd

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Overrides = Union[Mapping[str, Any], Sequence[str], None]
ProgressFn = Callable[[int, int, int, int, int], Union[bool, None]]

_VOCABULARY = _core.vocabulary()
TABLES: tuple[str, ...] = tuple(_VOCABULARY["tables"])
"""The engine's result tables, in output order (``<name>.csv`` in a run directory)."""
SIZE_BINS: tuple[tuple[str, str, int, int | None], ...] = tuple(_VOCABULARY["size_bins"])
"""The engine's FCT size bins: (family, label, lower bytes, upper bytes exclusive or None)."""
LAYERS: tuple[str, ...] = tuple(_VOCABULARY["layers"])
"""The engine's fabric layers, host first: the ``layer`` column and ``pfc.by_layer`` keys."""
PROGRESS_EVERY_EVENTS = 1 << 18
_FLOW_TIMES = ("start", "finish", "fct", "ideal_fct")


class EngineTables:
    """The engine's tables (``TABLES``) as attributes: each becomes a DataFrame, with its
    ``*_us`` columns added, when first read. A subclass says how to read one
    (``_read_table``)."""

    _tables: dict[str, pd.DataFrame]

    def _read_table(self, name: str) -> pd.DataFrame:
        raise NotImplementedError

    def table(self, name: str) -> pd.DataFrame:
        """Engine table ``name`` (one of ``TABLES``)."""
        if name not in self._tables:
            df = self._read_table(name)
            add_us_columns(name, df)
            self._tables[name] = df
        return self._tables[name]

    flows = property(lambda self: self.table("flows"))
    pfc_events = property(lambda self: self.table("pfc_events"))
    pfc_ports = property(lambda self: self.table("pfc_ports"))
    queues = property(lambda self: self.table("queues"))
    flow_queues = property(lambda self: self.table("flow_queues"))
    rates = property(lambda self: self.table("rates"))
    halts = property(lambda self: self.table("halts"))
    collectives = property(lambda self: self.table("collectives"))


class RunResult(EngineTables):
    """Results of one run: five tables, the summary and the resolved scenario.

    Times in tables are integer picoseconds in ``*_ps`` columns; the float ``*_us`` columns are
    conveniences added here (NaN where the ``_ps`` value is -1, i.e. the flow did not finish).

    Attributes
    ----------
    flows : DataFrame
        One row per flow: id, src, dst, size_bytes, start_ps, finish_ps, fct_ps, ideal_fct_ps,
        slowdown, bytes_acked, plus start_us, finish_us, fct_us, ideal_fct_us.
    pfc_events, pfc_ports, queues, flow_queues, rates, halts : DataFrame
        PFC pause/resume events, per-port PFC counters, queue samples, each flow's bytes in the
        probed queues (with ``output.queues.by_flow``), rate samples, and ACC's source halts
        (flow, start_ps, end_ps, rate_bps, sent_bytes, acked_bytes; empty for other schemes);
        ``time_us`` is added wherever a ``time_ps`` column exists.
    collectives : DataFrame
        One row per iteration of a collective workload (``allreduce``, ``alltoall``): job (its
        ``[[workload]]`` index), kind, iteration, hosts, flows, start_ps, completion_ps (-1 if a
        flow did not finish), ideal_ps (the most payload one host sends or receives, at its
        link rate) and slowdown; plus start_us, completion_us, ideal_us.
    summary : dict
        The engine's summary (``summary.json``); ``summary["perf"]`` is the only part that differs
        between two runs of the same scenario and seed.
    config : str
        The fully resolved scenario as TOML; re-running it reproduces this result.
    out_dir : Path or None
        The run directory, if one was written.
    trace : bytes or None
        The pcapng packet trace of ``output.trace`` (``trace.pcapng`` in the run directory).

    The tables become DataFrames when first read, so a run that only needs its summary never
    imports pandas.

    Examples
    --------
    >>> r = ccsim.run("scenarios/incast-16to1.toml")  # doctest: +SKIP
    >>> r.flows.groupby("size_bytes").fct_us.mean()  # doctest: +SKIP
    """

    def __init__(
        self,
        summary: dict[str, Any],
        config: str,
        out_dir: Path | None = None,
        trace: bytes | None = None,
        **tables: Any,
    ) -> None:
        self.summary = summary
        self.config = config
        self.out_dir = out_dir
        self.trace = trace
        # Each table as given (the engine's columns, or a DataFrame read from a directory)
        # until it is first read.
        self._given = tables
        self._tables = {}

    def _read_table(self, name: str) -> pd.DataFrame:
        t = self._given.pop(name)
        return _frame(t) if isinstance(t, Mapping) else t

    def __repr__(self) -> str:
        name = self.summary.get("name", "?")
        where = f", out_dir={str(self.out_dir)!r}" if self.out_dir is not None else ""
        return (
            f"<RunResult {name!r}: {self.summary.get('flows', {}).get('total', '?')} flows{where}>"
        )


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    overrides: Overrides = None,
    out: str | os.PathLike[str] | None = None,
    progress: ProgressFn | bool | None = None,
    allow_long: bool = False,
) -> RunResult:
    """Run a scenario to completion and return its results.

    Parameters
    ----------
    scenario : str, Path or dict
        Path to a TOML scenario file (relative paths inside it resolve against its directory),
        the name of a built-in example (``ccsim examples``, e.g. ``"incast-16to1"``), or the
        scenario as a dict (relative paths resolve against the current directory).
    seed : int, optional
        Replaces the scenario's seed.
    overrides : dict or list of str, optional
        ``{"cc.scheme": "dcqcn"}`` or ``["cc.scheme=dcqcn"]``; values are TOML literals.
    out : str or Path, optional
        Write the run directory here (CSV tables, ``summary.json``, resolved ``config.toml``).
    progress : callable or bool, optional
        ``progress(sim_now_ps, events_processed, stop_ps, flows_done, flows_total)`` is called
        every few hundred thousand events (``stop_ps`` is 0 when the run ends with its flows);
        returning False cancels the run (raises KeyboardInterrupt). ``True`` draws a progress
        line on stderr.
    allow_long : bool, default False
        Run even a scenario whose build estimates over 1e12 events (a day or more): one that a
        timer under a packet time or a huge flow without a duration makes that long. Without it,
        such a run is refused with the warning that names the setting.

    Returns
    -------
    RunResult

    Raises
    ------
    ScenarioError
        The scenario or an override is invalid, ``out`` is not writable, or the run would take
        over 1e12 events without ``allow_long``.

    Examples
    --------
    >>> r = ccsim.run({
    ...     "name": "one", "duration": "200us",
    ...     "topology": {"kind": "star", "hosts": 2, "link": {"rate": "100Gbps", "delay": "1us"}},
    ...     "cc": {"scheme": "none"},
    ...     "flows": [{"src": 0, "dst": 1, "size": "100KB", "start": "0us"}],
    ... })  # doctest: +SKIP
    >>> r.flows[["fct_us", "ideal_fct_us", "slowdown"]]  # doctest: +SKIP
    """
    text, base_dir = _scenario_text(scenario)
    bar = None
    if progress is True:
        from ccsim.progress import ProgressLine

        progress = bar = ProgressLine()
    said: list[str] = []

    def built(notes: list[str]) -> None:  # said before the run: one may be why it is long
        _warn(notes)
        said.extend(notes)

    try:
        raw = _run_raw(
            text,
            base_dir,
            seed=seed,
            overrides=overrides,
            out=out,
            progress=progress or None,
            on_built=built,
            allow_long=allow_long,
        )
    finally:
        if bar is not None:
            bar.close()
    summary = json.loads(raw["summary"])
    _warn([w for w in summary.get("warnings", []) if w not in said])  # those the run added
    out_dir = None if out is None else Path(out)
    tables = {t: raw["tables"][t] for t in TABLES}
    return RunResult(summary, raw["config"], out_dir, raw["trace"], **tables)


def run_text(
    text: str, base_dir: str, *, allow_long: bool = False
) -> tuple[dict[str, pd.DataFrame], dict[str, Any], str]:
    """Run a resolved scenario's TOML text; return the engine's tables (no added ``_us``
    columns), its summary and the resolved scenario (the sweep workers' entry)."""
    raw = _run_raw(
        text, base_dir, seed=None, overrides=None, out=None, progress=None, allow_long=allow_long
    )
    tables = {name: _frame(raw["tables"][name]) for name in TABLES}
    return tables, json.loads(raw["summary"]), raw["config"]


def _run_raw(
    text: str,
    base_dir: str,
    *,
    seed: int | None,
    overrides: Overrides,
    out: str | os.PathLike[str] | None,
    progress: ProgressFn | None,
    on_built: Callable[[list[str]], None] | None = None,
    allow_long: bool = False,
) -> dict[str, Any]:
    return _core.run(
        text,
        base_dir,
        seed,
        _override_list(overrides),
        None if out is None else os.fspath(out),
        progress,
        PROGRESS_EVERY_EVENTS,
        on_built,
        allow_long,
    )


def validate(
    scenario: Scenario, *, seed: int | None = None, overrides: Overrides = None, build: bool = True
) -> str:
    """Check a scenario without running it; return it fully resolved, as TOML text.

    Parameters
    ----------
    scenario, seed, overrides
        As for :func:`run`.
    build : bool, default True
        Also build the fabric and the flows, which finds every error a run would; False checks
        and resolves the settings only (fast on a large fabric).

    Raises
    ------
    ScenarioError
        With a one-line message naming the bad field and the fix.

    Examples
    --------
    >>> ccsim.validate("scenarios/incast-16to1.toml", overrides={"cc.scheme": "x"})  # doctest: +SKIP
    ScenarioError: cc.scheme: unknown scheme `x`; use one of: none, dcqcn, dcqcn_paper
    """
    text, base_dir = _scenario_text(scenario)
    resolved, notes = _core.validate(text, base_dir, seed, _override_list(overrides), build)
    _warn(notes)
    return resolved


class ScenarioWarning(UserWarning):
    """A default the scenario relies on that its author may not expect (names the field)."""


def _warn(notes: Sequence[str]) -> None:
    for note in notes:
        warnings.warn(note, ScenarioWarning, stacklevel=3)


def catalog() -> dict[str, Any]:
    """The schemes (description, paper, parameter defaults), topologies and workloads available.

    Examples
    --------
    >>> sorted(ccsim.catalog()["schemes"])  # doctest: +SKIP
    ['dcqcn', 'dcqcn_paper', 'none']
    """
    return _core.catalog()


def load_run(d: str | os.PathLike[str]) -> RunResult:
    """Read a run directory: ``ccsim run``'s (CSV tables) or one run of a sweep
    (``OUT/runs/<id>``: Parquet tables, with the run's id and parameters as leading columns);
    a table with neither file loads as an empty DataFrame. :func:`ccsim.load` reads sweeps
    too.

    Every file is checked against the size and CRC-32 the run recorded in ``summary.json``;
    a summary without that record (written by hand, or by a ccsim before it kept one) is checked
    for what it can be: ``flows.csv`` must hold the summary's count of flows and the columns
    ccsim reads. A file that fails raises ScenarioError naming it and what is wrong."""
    d = Path(d)
    if not (d / "summary.json").is_file():
        raise FileNotFoundError(
            2,
            "not a results directory (no summary.json or sweep.json); pass a directory written by "
            "`ccsim run`, `ccsim sweep` or `ccsim reproduce`",
            str(d),
        )
    summary = read_summary(d)
    check_files(d, summary)
    if summary.get("partial"):
        flows = summary.get("flows", {})
        _warn(
            [
                (
                    f"{d}: an interrupted run: partial results, {flows.get('finished', '?')} "
                    f"of {flows.get('total', '?')} flows finished"
                )
            ]
        )
    config_path = d / "config.toml"
    config = read_text(config_path) if config_path.exists() else ""
    # A sweep's run: its tables lead with the run id and the sweep's parameters (sweep.json).
    sweep_file = d.parent.parent / "sweep.json"
    params = read_sweep_meta(d.parent.parent)["params"] if sweep_file.is_file() else []
    tables = {name: read_table(d, name, summary, ["run_id", *params]) for name in TABLES}
    _check_flows(d, summary, tables["flows"])
    listed = "files" not in summary or "trace.pcapng" in summary["files"]
    trace_path = d / "trace.pcapng"
    trace = trace_path.read_bytes() if listed and trace_path.is_file() else None
    return RunResult(summary, config, d, trace, **tables)


MAX_TABLE_BYTES = 4 << 30
"""The largest results table ccsim reads whose size the run's summary does not record."""
FLOW_COLUMNS = ("id", "src", "dst", "size_bytes", *(f"{t}_ps" for t in _FLOW_TIMES))
"""The flows table's columns that ccsim's readers rely on."""


def table_path(d: Path, name: str) -> Path:
    """Where run directory ``d`` keeps table ``name``: ``name.csv`` (``ccsim run``) or
    ``name.parquet`` (a sweep's run); the CSV path if neither exists."""
    parquet = d / f"{name}.parquet"
    return parquet if parquet.exists() and not (d / f"{name}.csv").exists() else d / f"{name}.csv"


def read_table(
    d: Path, name: str, summary: Mapping[str, Any], sweep_columns: Sequence[str] = ()
) -> pd.DataFrame:
    """Table ``name`` of run directory ``d`` (see :func:`table_path`; a sweep's run has its
    ``sweep_columns`` dropped), or an empty DataFrame if it has none. A file that is not such a
    table, or is over ``MAX_TABLE_BYTES`` with no size recorded in ``summary``, raises
    ScenarioError naming it."""
    import pandas as pd

    path = table_path(d, name)
    if not path.exists():
        return pd.DataFrame()
    if not path.is_file():
        raise ScenarioError(f"{path}: not a regular file (a pipe, a device or a directory)")
    size, limit = path.stat().st_size, MAX_TABLE_BYTES
    total = summary["flows"].get("total")
    if name == "flows" and isinstance(total, int):
        limit = min(limit, 4096 + 1024 * total)  # a header, and a row per flow
    if size > limit and path.name not in summary.get("files", {}):
        raise ScenarioError(
            f"{path}: {size} bytes, over the {limit} ccsim reads of this table unless the run's "
            "summary records its size; run it again"
        )
    try:
        df = pd.read_csv(path, encoding="utf-8") if path.suffix == ".csv" else pd.read_parquet(path)
    except (ValueError, OSError) as e:  # UnicodeDecodeError and pandas' parser errors included
        what = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else f"{type(e).__name__}: {e}"
        raise ScenarioError(f"{path}: not a ccsim {name} table ({what}); run it again") from None
    return df.drop(columns=[c for c in sweep_columns if c in df.columns])


def _check_flows(d: Path, summary: Mapping[str, Any], flows: pd.DataFrame) -> None:
    """The flows table holds the summary's count of flows, with the columns ccsim reads."""
    path = table_path(d, "flows")
    total = summary.get("flows", {}).get("total")
    if isinstance(total, int) and len(flows) != total:
        state = f"{len(flows)} rows" if path.exists() else "missing"
        raise ScenarioError(
            f"{path}: {state} where the run's summary counts {total} flows (cut short, replaced "
            "or deleted since); run it again"
        )
    missing = [c for c in FLOW_COLUMNS if c not in flows.columns]
    if len(flows) and missing:
        raise ScenarioError(
            f"{path}: not a ccsim flows table (no column {', '.join(missing)}); run it again"
        )


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``path`` whole or not at all (a full disk or a kill leaves the old file or none,
    never a part): into a temporary file beside it, then renamed over it."""
    path = Path(path)
    tmp = path.with_name(f".tmp-{path.name}")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_summary(d: Path, rerun: str = "run it again") -> dict[str, Any]:
    """A run directory's summary.json; a file that is not one raises ScenarioError naming it
    and saying what to do (``rerun``)."""
    path = d / "summary.json"
    summary = read_json(path, rerun)
    if not isinstance(summary.get("sim_time_ps"), int):
        raise ScenarioError(f"{path}: not a ccsim run summary (no sim_time_ps); {rerun}")
    if not isinstance(summary.get("flows"), dict):
        raise ScenarioError(f"{path}: not a ccsim run summary (no flows record); {rerun}")
    return summary


def read_json(path: Path, rerun: str) -> dict[str, Any]:
    """A JSON object ccsim wrote (a summary, sweep.json, claims.json); a file that is not one
    raises ScenarioError naming it and saying what to do (``rerun``)."""
    text = read_text(path)  # names a file that is not UTF-8 text, or too large
    try:
        data = json.loads(text)
    except ValueError as e:  # not JSON: cut short, or not ccsim's
        raise ScenarioError(f"{path}: not JSON ({e}); {rerun}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: not a JSON object; {rerun}")
    return data


def read_sweep_meta(out: Path) -> dict[str, Any]:
    """``out/sweep.json``, checked: its name, parameters and runs (each with its run id). A file
    that is not one raises ScenarioError naming it."""
    path = out / "sweep.json"
    again = "run the sweep again to rewrite it"
    meta = read_json(path, again)
    for key, kind in (("name", str), ("params", list), ("runs", list)):
        if not isinstance(meta.get(key), kind):
            raise ScenarioError(f"{path}: not a ccsim sweep (no `{key}` {kind.__name__}); {again}")
    if not all(isinstance(p, str) for p in meta["params"]):
        raise ScenarioError(f"{path}: its `params` are not all names; {again}")
    if not all(isinstance(r, dict) and isinstance(r.get("run_id"), str) for r in meta["runs"]):
        raise ScenarioError(f"{path}: a run without its `run_id`; {again}")
    return meta


def file_record(data: bytes) -> dict[str, int]:
    """What a run's summary records of one of its files: its size and CRC-32."""
    import zlib

    return {"bytes": len(data), "crc32": zlib.crc32(data)}


def _crc32(path: Path) -> int:
    """The CRC-32 of a file, read in chunks (a results table may not fit in memory twice)."""
    import zlib

    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


def check_files(d: Path, summary: Mapping[str, Any], rerun: str = "run it again") -> None:
    """Raise ScenarioError naming the first file of run directory ``d`` that is missing or
    differs from the record its summary.json keeps (``files``: bytes and CRC-32, written last
    by the run). Sizes are compared first, so a file of the wrong size is never read. When
    config.toml and another file both fail, the summary is named instead: it is from another
    run. A summary without records (written before ccsim kept them) checks nothing here."""
    files = summary.get("files", {})
    if not isinstance(files, Mapping) or not all(isinstance(r, Mapping) for r in files.values()):
        raise ScenarioError(f"{d / 'summary.json'}: its `files` record is garbled; {rerun}")
    wrong: dict[str, str] = {}
    for name, rec in files.items():
        path = d / name
        if not path.is_file():
            raise ScenarioError(f"{path}: missing, though the run wrote it; {rerun}")
        size = path.stat().st_size
        if size != rec.get("bytes"):
            wrong[name] = (
                f"{size} bytes where the run wrote {rec.get('bytes')} (cut short or changed since)"
            )
        elif _crc32(path) != rec.get("crc32"):
            wrong[name] = "its contents changed since the run wrote it (CRC-32 differs)"
    if "config.toml" in wrong and len(wrong) > 1:
        raise ScenarioError(
            f"{d / 'summary.json'}: from another run (its records fit neither config.toml nor "
            f"{', '.join(n for n in wrong if n != 'config.toml')}); {rerun}"
        )
    if wrong:
        name, what = next(iter(wrong.items()))
        raise ScenarioError(f"{d / name}: {what}; {rerun}")


def size_bin_labels(family: str) -> list[str]:
    """The engine's size-bin labels of ``family`` (``acc`` or ``pcn``), smallest first.

    Examples
    --------
    >>> size_bin_labels("acc")
    ['<100KB', '100KB-10MB', '>10MB']
    """
    return [label for fam, label, _, _ in SIZE_BINS if fam == family]


def scenario_name(resolved_toml: str) -> str | None:
    """The top-level ``name`` of a resolved scenario (as returned by :func:`validate`), if any.

    Examples
    --------
    >>> scenario_name('name = "incast"\\n[cc]\\nname = "x"\\n')
    'incast'
    """
    name = read_toml_text(resolved_toml, "resolved scenario").get("name")
    return name if isinstance(name, str) else None


def to_toml(data: Mapping[str, Any]) -> str:
    """Serialize a dict of scalars, lists and nested dicts to TOML text (with tomli-w).

    Enough TOML for scenarios: str, bool, int, float (incl. inf/nan), lists, nested tables and
    arrays of tables (a non-empty list of dicts); numpy scalars and paths are written as the
    plain values they hold. Key order is kept. ``None`` is rejected, since TOML has no null.

    Examples
    --------
    >>> print(to_toml({"name": "x", "cc": {"scheme": "dcqcn"}, "flows": [{"src": 0}]}))
    name = "x"
    flows = [
        { src = 0 },
    ]
    <BLANKLINE>
    [cc]
    scheme = "dcqcn"
    <BLANKLINE>
    """
    import tomli_w

    return tomli_w.dumps(_plain(data, []))


def inline_toml(value: Any) -> str:
    """``value`` as an inline TOML value (an override's right-hand side, a sweep's parameter
    cell): tables and arrays inline, keys and scalars as tomli-w writes them.

    Examples
    --------
    >>> inline_toml({"mode": "drop_tail", "a.b": [1, 2.5]})
    '{mode = "drop_tail", "a.b" = [1, 2.5]}'
    """
    import tomli_w

    def key(k: str) -> str:  # bare, or quoted where TOML needs it
        return tomli_w.dumps({k: 0}).rsplit(" = ", 1)[0]

    def inline(x: Any) -> str:
        if isinstance(x, dict):
            return "{" + ", ".join(f"{key(k)} = {inline(y)}" for k, y in x.items()) + "}"
        if isinstance(x, list):
            return "[" + ", ".join(inline(y) for y in x) + "]"
        return tomli_w.dumps({"v": x})[len("v = ") :].strip()

    return inline(_plain(value, []))


def _plain(v: Any, path: list[str], within: tuple[int, ...] = ()) -> Any:
    """``v`` with the values TOML writers take: numpy numbers as int/float, paths as str, ints
    checked against TOML's signed 64 bits. What TOML cannot hold (``None``, a key that is not a
    string, a table or list that contains itself, an object) is a ScenarioError naming its key.
    """
    where = ".".join(path) or "scenario"
    if isinstance(v, (Mapping, list, tuple)):
        if id(v) in within:
            raise ScenarioError(f"{where}: contains itself; a scenario is a tree of tables")
        within = (*within, id(v))
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{where}: key {k!r} is not a string; TOML keys are strings")
            out[k] = _plain(x, [*path, k], within)
        return out
    if isinstance(v, (list, tuple)):
        return [_plain(x, [*path, str(i)], within) for i, x in enumerate(v)]
    if isinstance(v, (str, bool)):
        return v
    if isinstance(v, numbers.Integral):
        if not -(2**63) <= int(v) < 2**63:
            raise ScenarioError(
                f"{where}: {v} does not fit a TOML integer (signed 64-bit); use a smaller value"
            )
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if v is None:
        raise ScenarioError(f"{where}: None has no TOML value; leave the key out")
    raise ScenarioError(f"{where}: cannot write {type(v).__name__} value {v!r} as TOML")


# --- helpers -------------------------------------------------------------------------------------


def scenario_path(arg: str | os.PathLike[str]) -> Path:
    """A scenario file, or the built-in example ``arg`` names (``ccsim examples``)."""
    path = Path(arg)
    if path.exists():
        return path
    from ccsim import examples

    builtin = examples.find_scenario(str(arg))
    if builtin is None:
        raise ScenarioError(
            f"{arg}: no such file and no built-in example of that name; "
            "`ccsim examples` lists the built-in ones"
        )
    return builtin


def _scenario_text(scenario: Scenario) -> tuple[str, str]:
    """(TOML text, base directory for the relative paths inside it)."""
    if isinstance(scenario, Mapping):
        return to_toml(scenario), _scenario_dir(scenario)
    return read_text(scenario_path(scenario)), _scenario_dir(scenario)


def _scenario_dir(scenario: Scenario) -> str:
    """The folder a scenario's relative paths start from: its file's, or the current one."""
    if isinstance(scenario, Mapping):
        return os.getcwd()
    return str(scenario_path(scenario).resolve().parent)


MAX_INPUT_BYTES = 1 << 30  # the most ccsim reads of one scenario, sweep or results file


def read_text(path: Path) -> str:
    """A text file's contents; a file that is not UTF-8 text, not a regular file (a FIFO would
    block, /dev/zero never end) or over ``MAX_INPUT_BYTES`` is a ScenarioError naming it."""
    if path.exists() and not path.is_file():
        raise ScenarioError(f"{path}: not a regular file (a pipe, a device or a directory)")
    if path.exists() and path.stat().st_size > MAX_INPUT_BYTES:
        raise ScenarioError(
            f"{path}: {path.stat().st_size} bytes, over the {MAX_INPUT_BYTES} ccsim reads of one file"
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(
            f"{path}: not a text file (not UTF-8); give a TOML scenario, sweep or results file"
        ) from None


def _override_list(overrides: Overrides) -> list[str]:
    """Normalize overrides to ``["dotted.key=value", ...]``; values from a dict become TOML.
    A key whose value is None is removed from the scenario (``"~dotted.key"``, as ``--unset``),
    so its default applies."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [
            f"~{key}" if value is None else f"{key}={inline_toml(value)}"
            for key, value in overrides.items()
        ]
    try:
        items = [overrides] if isinstance(overrides, str) else list(overrides)
    except TypeError:
        raise ScenarioError(
            f"overrides: {overrides!r}; give a dict {{key: value}} or a list of 'key=value'"
        ) from None
    for item in items:
        if not isinstance(item, str):
            raise ScenarioError(
                f"override {item!r} is not a 'key=value' text; write e.g. 'cc.scheme=dcqcn'"
            )
        key = item.partition("=")[0].strip()
        if item.startswith("~") and item[1:].strip():
            continue  # --unset KEY
        if "=" not in item or not key:
            raise ScenarioError(
                f"override {item!r} is not key=value; write e.g. --set cc.scheme=dcqcn"
            )
    return items


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """``["key=value", ...]`` to a dict; a value is a TOML literal, or else a plain string
    (as the engine reads ``--set``).

    Examples
    --------
    >>> parse_overrides(["seed=2", "cc.scheme=dcqcn", "topology.link.rate='10Gbps'"])
    {'seed': 2, 'cc.scheme': 'dcqcn', 'topology.link.rate': '10Gbps'}
    """
    out: dict[str, Any] = {}
    for item in _override_list(list(items)):
        if item.startswith("~"):  # --unset KEY
            out[item[1:].strip()] = None
            continue
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = read_toml_text(f"v = {value}", "--set")["v"]
        except ScenarioError:
            out[key.strip()] = value.strip()
    return out


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a syntax error is a ScenarioError naming the file."""
    return read_toml_text(read_text(path), str(path))


def read_toml_text(text: str, source: str) -> dict[str, Any]:
    """Parse TOML text; a syntax error is a ScenarioError naming ``source``."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{source}: {e}; fix the TOML syntax") from None


def _frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(dict(columns))


def add_us_columns(table: str, df: pd.DataFrame) -> None:
    """Add the float ``*_us`` convenience columns to engine table ``table`` (in place)."""
    bases = {
        "flows": _FLOW_TIMES,
        "halts": ("start", "end"),
        "collectives": ("start", "completion", "ideal"),
    }.get(table, ("time",))
    for base in bases:
        _add_us(df, f"{base}_ps", f"{base}_us")


def _add_us(df: pd.DataFrame, ps_col: str, us_col: str) -> None:
    if ps_col in df.columns:
        ps = df[ps_col]
        df[us_col] = (ps.astype("float64") / 1e6).where(ps >= 0)
