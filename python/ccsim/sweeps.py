"""Sweeps: a base scenario x a parameter grid -> runs in parallel -> one Parquet dataset.

Owns the sweep file format, grid expansion and deterministic run ids, the atomic per-run write
and resume, the two backends (a local process pool; a Ray cluster) and reading a sweep back.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import numbers
import os
import pickle
import selectors
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

from ccsim import api
from ccsim._core import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

SWEEP_JSON = "sweep.json"
RUNS_DIR = "runs"
SUMMARY_PARQUET = "summary.parquet"
BACKENDS = ("local", "ray")
STATUS_OK = "ok"
STATUS_FAILED = "failed"
SWEEP_FILE_KEYS = ("name", "base", "set", "grid")
# A run whose local worker process dies this many times is recorded as failed.
MAX_WORKER_DEATHS = 2
_TMP_PREFIX = ".tmp-"
_OLD_PREFIX = ".old-"

ResultFn = Callable[["Job", dict[str, Any]], None]


# --- the sweep and its runs ----------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    """One point of the grid: its id (a hash of ``params``) and the values it sets."""

    run_id: str
    params: dict[str, Any]


@dataclass
class Sweep:
    """A base scenario, overrides applied to every run (``[set]`` in a file) and a grid.

    ``grid`` maps an override key (any dotted scenario key, e.g. ``cc.scheme``,
    ``workload.0.load``, ``seed``) to the list of its values; the runs are the grid's cartesian
    product, in key order. ``source`` names where the sweep came from, for error messages.
    """

    name: str
    base: api.Scenario
    grid: dict[str, list[Any]] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    source: str = "sweep"

    def __post_init__(self) -> None:
        if not isinstance(self.overrides, Mapping):
            raise ScenarioError(f"{self.source}: set: expected a table of key = value overrides")
        if not isinstance(self.grid, Mapping):
            raise ScenarioError(f"{self.source}: grid: expected a table of key = [values]")
        for key, values in self.grid.items():
            where = f"{self.source}: grid.{_quote_key(key)}"
            if isinstance(values, Mapping):
                raise ScenarioError(
                    f"{where}: expected a list of values; quote dotted keys, e.g. "
                    f'"cc.scheme" = ["dcqcn", "none"]'
                )
            if not isinstance(values, (list, tuple)) or not values:
                raise ScenarioError(f"{where}: expected a non-empty list of values, e.g. [1, 2]")
            canon = [_canonical(v) for v in values]
            if len(set(canon)) != len(canon):
                raise ScenarioError(f"{where}: a value is listed twice; list each value once")
            if key in self.overrides:
                raise ScenarioError(f"{where}: also set for every run; keep it in one place")
        self.grid = {k: list(v) for k, v in self.grid.items()}
        self.overrides = dict(self.overrides)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read a sweep file: ``base`` (a scenario path relative to the file), ``[set]``,
        ``[grid]`` and an optional ``name`` (default: the file's stem).

        Examples
        --------
        >>> Sweep.from_file("sweeps/websearch-load.toml").runs()[0].params  # doctest: +SKIP
        {'cc.scheme': 'dcqcn', 'workload.0.load': 0.3, 'seed': 1}
        """
        path = Path(path)
        data = api.read_toml(path)
        return cls.from_table(data, path.parent, source=str(path), default_name=path.stem)

    @classmethod
    def from_table(
        cls, data: Mapping[str, Any], base_dir: Path, *, source: str, default_name: str
    ) -> Sweep:
        """A sweep from a parsed table (a sweep file, or an experiment's ``[sweep]``)."""
        unknown = sorted(set(data) - set(SWEEP_FILE_KEYS))
        if unknown:
            raise ScenarioError(
                f"{source}: unknown key `{unknown[0]}`; a sweep has {', '.join(SWEEP_FILE_KEYS)}"
            )
        if not isinstance(data.get("base"), str):
            raise ScenarioError(f'{source}: base: give the base scenario file, base = "x.toml"')
        base = base_dir / data["base"]
        if not base.is_file():
            raise ScenarioError(
                f"{source}: base: {base} is not a file; give a scenario path relative to {source}"
            )
        name = data.get("name", default_name)
        if not isinstance(name, str) or not name:
            raise ScenarioError(f'{source}: name: expected a non-empty string, e.g. name = "x"')
        return cls(
            name=name,
            base=base,
            grid=data.get("grid", {}),
            overrides=data.get("set", {}),
            source=source,
        )

    def runs(self) -> list[RunSpec]:
        """The grid's cartesian product in key order, each with its id."""
        keys = list(self.grid)
        out = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            params = dict(zip(keys, values))
            out.append(RunSpec(run_id(params), params))
        return out

    def run_overrides(self, spec: RunSpec) -> dict[str, Any]:
        """The overrides of one run: the sweep's ``overrides`` (``[set]``), then its grid values."""
        return {**self.overrides, **spec.params}


def sweep(
    base: api.Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    name: str | None = None,
    out: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run a base scenario over a grid of overrides, in parallel; return one row per run.

    Parameters
    ----------
    base : str, Path or dict
        The base scenario, as for :func:`ccsim.run`.
    grid : dict of key -> list of values
        Any dotted scenario key, e.g. ``{"cc.scheme": ["dcqcn", "none"], "seed": [1, 2]}``;
        the runs are the cartesian product.
    overrides : dict, optional
        Applied to every run, before the grid's values.
    name : str, optional
        The sweep's name (default: the base scenario's name); results go to ``results/<name>``.
    out : str or Path, optional
        The results directory. Finished runs already there are skipped (resume).
    backend : ``"local"`` or ``"ray"``
        A local process pool, or Ray: the cluster at ``address`` or a local Ray started here.
    workers : int, optional
        Parallel runs (default: all cores; ignored when joining an existing Ray cluster).
    progress : bool
        Draw a progress line on stderr.

    Returns
    -------
    DataFrame
        The runs table (see :class:`SweepResult`); ``ccsim.load(out)`` gives every table.

    Examples
    --------
    >>> runs = ccsim.sweep("scenarios/incast-16to1.toml", {"cc.scheme": ["dcqcn", "none"]},
    ...                    out="results/incast-schemes")  # doctest: +SKIP
    >>> runs[["cc.scheme", "fct.all.fct_p99_us"]]  # doctest: +SKIP
    """
    if name is None:
        name = api.scenario_name(api.validate(base, overrides=overrides)) or "sweep"
    spec = Sweep(name, base, dict(grid or {}), dict(overrides or {}), source="ccsim.sweep")
    bar = None
    if progress:
        from ccsim.progress import SweepProgress

        bar = SweepProgress()
    try:
        return run_sweep(
            spec,
            out if out is not None else Path("results") / name,
            backend=backend,
            workers=workers,
            address=address,
            progress=bar,
        )
    finally:
        if bar is not None:
            bar.close()


def run_id(params: Mapping[str, Any]) -> str:
    """A run's id: a hash of its parameter values, independent of grid order and position.

    Examples
    --------
    >>> run_id({"seed": 1, "cc.scheme": "dcqcn"}) == run_id({"cc.scheme": "dcqcn", "seed": 1})
    True
    >>> len(run_id({}))
    12
    """
    return hashlib.sha256(_canonical(dict(params)).encode()).hexdigest()[:12]


# --- running a sweep -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """A validated run ready for a worker: the resolved scenario and the key it is stored under."""

    spec: RunSpec
    config: str
    base_dir: str
    key: str


def run_sweep(
    sweep: Sweep,
    out: str | os.PathLike[str],
    *,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: Callable[[int, int, int, int, float], None] | None = None,
) -> pd.DataFrame:
    """Run every run of ``sweep`` not yet finished in ``out``; return the runs table.

    Runs are validated first: an invalid run (e.g. a bad value in the grid) is recorded as failed
    with its error and the others go on; if every run is invalid, the sweep itself is, and
    ScenarioError is raised before anything runs. Each finished run is written atomically to
    ``out/runs/<run_id>/``; a run already there with the same resolved scenario and engine build
    is skipped, so an interrupted sweep resumes where it stopped. Failed runs are tried again.

    ``progress(done, failed, running, total, sim_time_ps)`` is called as runs finish (``done``
    includes skipped and failed runs; ``sim_time_ps`` is the simulated time run so far).
    """
    if backend not in BACKENDS:
        raise ScenarioError(
            f"backend: unknown backend `{backend}`; use one of {', '.join(BACKENDS)}"
        )
    if workers is not None and workers < 1:
        raise ScenarioError(f"workers: {workers} is not >= 1; give a number of processes")
    specs = sweep.runs()
    text, base_dir = api._scenario_text(sweep.base)
    engine = _engine_id()
    jobs: list[Job] = []
    invalid: list[tuple[RunSpec, str]] = []
    for spec in specs:
        try:
            config = api.validate(sweep.base, overrides=sweep.run_overrides(spec))
        except ScenarioError as e:
            invalid.append((spec, str(e)))
            continue
        key = hashlib.sha256(f"{engine}\n{config}".encode()).hexdigest()[:16]
        jobs.append(Job(spec, config, base_dir, key))
    if not jobs:
        raise ScenarioError(f"{sweep.source}: every run is invalid; the first: {invalid[0][1]}")

    out = Path(out)
    runs_dir = out / RUNS_DIR
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScenarioError(
            f"--out {out}: cannot write there ({e.strerror or e}); choose a writable directory"
        ) from None
    with _lock(out):
        _clean_partial_writes(runs_dir)
        _write_json_atomic(
            out / SWEEP_JSON,
            {
                "name": sweep.name,
                "base": text,
                "set": {k: _column_value(v) for k, v in sweep.overrides.items()},
                "grid": {k: [_column_value(v) for v in vs] for k, vs in sweep.grid.items()},
                "params": list(sweep.grid),
                "runs": [{"run_id": s.run_id, "params": _param_columns(s)} for s in specs],
            },
        )
        for spec, error in invalid:
            _write_run(
                runs_dir, spec, "", {"status": STATUS_FAILED, "error": f"ScenarioError: {error}"}
            )
        pending = [job for job in jobs if _stored_key(runs_dir / job.spec.run_id) != job.key]
        counts = {"done": len(specs) - len(pending), "failed": len(invalid), "sim_ps": 0.0}
        running = min(len(pending), workers or os.cpu_count() or 1)

        def on_result(job: Job, payload: dict[str, Any]) -> None:
            _write_run(runs_dir, job.spec, job.key, payload)
            counts["done"] += 1
            if payload["status"] != STATUS_OK:
                counts["failed"] += 1
            else:
                counts["sim_ps"] += payload["summary"].get("sim_time_ps", 0)
            if progress is not None:
                left = len(specs) - counts["done"]
                progress(
                    counts["done"],
                    counts["failed"],
                    min(running, left),
                    len(specs),
                    counts["sim_ps"],
                )

        if progress is not None:
            progress(counts["done"], counts["failed"], running, len(specs), 0.0)
        if pending:
            if backend == "ray":
                _run_ray(pending, workers, address, on_result)
            else:
                _run_local(pending, workers, on_result)
    return load_runs(out)


def execute(config: str, base_dir: str) -> dict[str, Any]:
    """Run one resolved scenario in a worker; never raises: an error becomes a failed result."""
    try:
        tables, summary, config = api.run_text(config, base_dir)
    except Exception as e:  # noqa: BLE001 -- a failing run is data, not a crash of the sweep
        return {"status": STATUS_FAILED, "error": f"{type(e).__name__}: {e}"}
    return {"status": STATUS_OK, "tables": tables, "summary": summary, "config": config}


def _run_local(jobs: list[Job], workers: int | None, on_result: ResultFn) -> None:
    """Worker processes (fresh interpreters), one run at a time each: the job goes in on
    the worker's stdin, the result comes back on its stdout. A worker that dies (killed, crashed)
    is replaced and its run tried again; a run whose worker died ``MAX_WORKER_DEATHS`` times is
    recorded as failed. A worker exits by itself when the driver dies (its stdin closes)."""
    queue = list(reversed(jobs))
    deaths: dict[str, int] = {}
    busy: dict[int, tuple[subprocess.Popen[bytes], Job]] = {}
    pool: list[subprocess.Popen[bytes]] = []
    selector = selectors.DefaultSelector()
    try:
        for _ in range(min(workers or os.cpu_count() or 1, len(jobs))):
            pool.append(_start_worker())
        while queue or busy:
            for proc in pool:
                if queue and proc.pid not in busy:
                    job = queue.pop()
                    busy[proc.pid] = (proc, job)
                    assert proc.stdin is not None
                    _write_frame(proc.stdin, (job.config, job.base_dir))
                    selector.register(proc.stdout, selectors.EVENT_READ, proc.pid)  # type: ignore[arg-type]
            for key, _ in selector.select():
                proc, job = busy.pop(key.data)
                selector.unregister(key.fileobj)
                payload = _read_frame(key.fileobj)  # type: ignore[arg-type]
                if payload is not None:
                    on_result(job, payload)
                    continue
                pool.remove(proc)  # the worker died while running `job`
                code = proc.wait()
                pool.append(_start_worker())
                rid = job.spec.run_id
                deaths[rid] = deaths.get(rid, 0) + 1
                if deaths[rid] < MAX_WORKER_DEATHS:
                    queue.append(job)
                else:
                    error = f"worker process died running it {deaths[rid]} times (exit code {code})"
                    on_result(job, {"status": STATUS_FAILED, "error": error})
    finally:
        selector.close()
        for proc in pool:
            if proc.pid in busy:
                proc.kill()
            elif proc.stdin is not None:
                proc.stdin.close()  # an idle worker exits at end of input
        for proc in pool:
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def _start_worker() -> subprocess.Popen[bytes]:
    code = "import sys; from ccsim.sweeps import _worker_main; sys.exit(_worker_main())"
    return subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )


def _worker_main() -> int:
    """A local worker: run each job read from stdin, write its result to stdout, until EOF."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries result frames only
    try:
        while (job := _read_frame(inp)) is not None:
            _write_frame(out, execute(*job))
    except BrokenPipeError:  # the driver is gone
        pass
    return 0


def _write_frame(stream: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "little") + data)
    stream.flush()


def _read_frame(stream: BinaryIO) -> Any:
    """The next pickled object, or None at end of stream (the other side is gone)."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "little")
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def _run_ray(
    jobs: list[Job], workers: int | None, address: str | None, on_result: ResultFn
) -> None:
    """Tasks on a Ray cluster (``address``) or on a local Ray started for this sweep; Ray retries
    a task whose worker died."""
    try:
        import ray
    except ImportError:
        raise ScenarioError(
            "backend: `ray` needs the Ray package; install it with pip install 'ccsim[ray]'"
        ) from None
    started = not ray.is_initialized()
    if started:
        init: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
        if address is None:
            init["num_cpus"] = workers or os.cpu_count() or 1
        ray.init(address=address, **init)
    remote = ray.remote(num_cpus=1, max_retries=3)(execute)
    refs = {remote.remote(j.config, j.base_dir): j for j in jobs}
    lost: list[str] = []
    try:
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            job = refs.pop(done[0])
            try:
                payload = ray.get(done[0])
            except ray.exceptions.RayError as e:  # the task's worker died past its retries
                lost.append(f"{job.spec.run_id} ({type(e).__name__})")
                continue
            on_result(job, payload)
    finally:
        for ref in refs:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
    if lost:
        raise RuntimeError(
            f"Ray lost {len(lost)} runs: {', '.join(lost)}; start the sweep again to resume them"
        )


# --- the results directory -----------------------------------------------------------------------


def _write_run(runs_dir: Path, spec: RunSpec, key: str, payload: Mapping[str, Any]) -> None:
    """Write one run into a temporary directory, then move it into place: a run directory is
    either complete or absent, whatever kills the process."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = runs_dir / f"{_TMP_PREFIX}{spec.run_id}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    head = {"run_id": spec.run_id, **_param_columns(spec)}
    row: dict[str, Any] = {
        **head,
        "status": payload["status"],
        "error": payload.get("error"),
        "run_key": key,
    }
    if payload["status"] == STATUS_OK:
        summary = {k: v for k, v in payload["summary"].items() if k != "perf"}
        row.update({k: v for k, v in flatten(summary).items() if k not in row})
        for name, df in payload["tables"].items():
            table = df.copy()
            for i, (col, value) in enumerate(head.items()):
                table.insert(i, col, [value] * len(table))
            pq.write_table(
                pa.Table.from_pandas(table, preserve_index=False), tmp / f"{name}.parquet"
            )
        (tmp / "summary.json").write_text(
            json.dumps(payload["summary"], indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        (tmp / "config.toml").write_text(payload["config"], encoding="utf-8")
    pq.write_table(pa.Table.from_pylist([row]), tmp / SUMMARY_PARQUET)
    final = runs_dir / spec.run_id
    if final.exists():  # a failed or outdated run being replaced
        old = runs_dir / f"{_OLD_PREFIX}{spec.run_id}"
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old)
    else:
        tmp.rename(final)


def _stored_key(run_dir: Path) -> str | None:
    """The key of a finished, successful run stored in ``run_dir`` (None if there is none)."""
    import pyarrow.parquet as pq

    path = run_dir / SUMMARY_PARQUET
    if not path.is_file():
        return None
    row = pq.read_table(path, columns=["status", "run_key"]).to_pylist()[0]
    return row["run_key"] if row["status"] == STATUS_OK else None


def _clean_partial_writes(runs_dir: Path) -> None:
    for p in runs_dir.iterdir():
        if p.name.startswith((_TMP_PREFIX, _OLD_PREFIX)):
            shutil.rmtree(p, ignore_errors=True)


@contextlib.contextmanager
def _lock(out: Path) -> Iterator[None]:
    """One driver per results directory (the lock dies with its process, even on SIGKILL)."""
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform: run one driver at a time
        yield
        return
    with open(out / ".lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ScenarioError(
                f"--out {out}: another sweep is writing there; wait for it or choose another --out"
            ) from None
        yield


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _engine_id() -> str:
    """A fingerprint of the engine build: results from another build are not reused."""
    from ccsim import _core

    h = hashlib.sha256()
    with open(_core.__file__, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


# --- reading a sweep back ------------------------------------------------------------------------


class SweepResult:
    """A sweep's results: one row per run in :attr:`runs`, and each engine table of every finished
    run concatenated, with ``run_id`` and the run's parameters as leading columns.

    Tables are read from the Parquet files on first access. A single run (:class:`RunResult`)
    converts with :meth:`from_run`, so plots and reports handle both the same way.

    Attributes
    ----------
    name : str
    params : list of str
        The grid keys (parameter columns), in grid order.
    runs : DataFrame
        run_id, the parameters, status (``ok`` / ``failed``), error, and the engine's summary
        flattened to dotted columns (``fct.acc.<100KB.slowdown_p99``, ``pfc.pauses_sent``, ...).
    missing : list of str
        Run ids of the sweep not (yet) in the directory, e.g. after an interrupted sweep.

    Examples
    --------
    >>> s = ccsim.load("results/websearch-load")  # doctest: +SKIP
    >>> s.flows.groupby("workload.0.load").slowdown.mean()  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str,
        params: list[str],
        runs: pd.DataFrame,
        read_table: Callable[[str], pd.DataFrame],
        configs: Mapping[str, str],
        out_dir: Path | None = None,
        missing: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.params = params
        self.runs = runs
        self.configs = dict(configs)
        self.out_dir = out_dir
        self.missing = list(missing)
        self._read_table = read_table
        self._tables: dict[str, pd.DataFrame] = {}

    def table(self, name: str) -> pd.DataFrame:
        """Engine table ``name`` (one of ``ccsim.api.TABLES``) of every finished run."""
        if name not in self._tables:
            df = self._read_table(name)
            api.add_us_columns(name, df)
            self._tables[name] = df
        return self._tables[name]

    flows = property(lambda self: self.table("flows"))
    pfc_events = property(lambda self: self.table("pfc_events"))
    pfc_ports = property(lambda self: self.table("pfc_ports"))
    queues = property(lambda self: self.table("queues"))
    rates = property(lambda self: self.table("rates"))

    @property
    def ok_runs(self) -> pd.DataFrame:
        """The runs that finished without error."""
        return self.runs[self.runs["status"] == STATUS_OK]

    def param(self, name: str) -> str:
        """The parameter column called ``name``: its full key or its short name (``load``).

        Raises ScenarioError naming the parameters there are."""
        if name in self.params:
            return name
        full = [p for p, short in short_names(self.params).items() if short == name]
        if full:
            return full[0]
        have = ", ".join(f"{short_names(self.params)[p]} ({p})" for p in self.params) or "none"
        raise ScenarioError(f"unknown parameter `{name}`; this sweep's parameters: {have}")

    def where(self, filters: Mapping[str, Any]) -> SweepResult:
        """The runs whose parameters equal ``filters`` (keys: full or short parameter names)."""
        if not filters:
            return self
        mask = self.runs["status"].notna()
        for name, value in filters.items():
            mask &= self.runs[self.param(name)] == value
        keep = set(self.runs.loc[mask, "run_id"])
        parent = self

        def read(table: str) -> pd.DataFrame:
            df = parent.table(table)
            return df[df["run_id"].isin(keep)].reset_index(drop=True) if len(df) else df

        return SweepResult(
            self.name,
            self.params,
            self.runs[mask].reset_index(drop=True),
            read,
            {k: v for k, v in self.configs.items() if k in keep},
            self.out_dir,
        )

    @classmethod
    def from_run(cls, result: api.RunResult, name: str | None = None) -> SweepResult:
        """A one-run sweep (no parameters) holding a single run's results."""
        import pandas as pd

        rid = name or str(result.summary.get("name", "run"))
        summary = {k: v for k, v in result.summary.items() if k != "perf"}
        runs = pd.DataFrame(
            [{"run_id": rid, "status": STATUS_OK, "error": None, **flatten(summary)}]
        )

        def read(table: str) -> pd.DataFrame:
            df = getattr(result, table).copy()
            df.insert(0, "run_id", [rid] * len(df))
            return df

        return cls(rid, [], runs, read, {rid: result.config}, result.out_dir)

    def __repr__(self) -> str:
        counts = self.runs["status"].value_counts().to_dict() if len(self.runs) else {}
        return (
            f"<SweepResult {self.name!r}: {len(self.runs)} runs "
            f"({counts.get(STATUS_OK, 0)} ok, {counts.get(STATUS_FAILED, 0)} failed, "
            f"{len(self.missing)} missing)>"
        )


def load_sweep(out: str | os.PathLike[str]) -> SweepResult:
    """Read a sweep's results directory (see :class:`SweepResult`)."""
    import pandas as pd

    out = Path(out)
    meta = json.loads((out / SWEEP_JSON).read_text(encoding="utf-8"))
    runs = load_runs(out)
    present = set(runs["run_id"])
    missing = [r["run_id"] for r in meta["runs"] if r["run_id"] not in present]
    ok_ids = list(runs.loc[runs["status"] == STATUS_OK, "run_id"])

    def read(table: str) -> pd.DataFrame:
        frames = [pd.read_parquet(out / RUNS_DIR / rid / f"{table}.parquet") for rid in ok_ids]
        return _concat(frames)

    configs = {
        rid: (out / RUNS_DIR / rid / "config.toml").read_text(encoding="utf-8") for rid in ok_ids
    }
    return SweepResult(meta["name"], list(meta["params"]), runs, read, configs, out, missing)


def load_runs(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The runs table of a sweep directory, in grid order; runs not yet written are absent."""
    import pandas as pd

    out = Path(out)
    meta = json.loads((out / SWEEP_JSON).read_text(encoding="utf-8"))
    rows = []
    for r in meta["runs"]:
        path = out / RUNS_DIR / r["run_id"] / SUMMARY_PARQUET
        if path.is_file():
            rows.append(pd.read_parquet(path))
    return _concat(rows).reset_index(drop=True)


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts to one level with dotted keys; lists are kept as JSON text.

    Examples
    --------
    >>> flatten({"pfc": {"by_layer": {"tor": {"pauses_sent": 3}}}, "name": "x"})
    {'pfc.by_layer.tor.pauses_sent': 3, 'name': 'x'}
    """
    out: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)):
            out[name] = json.dumps(value)
        else:
            out[name] = value
    return out


def short_names(params: Sequence[str]) -> dict[str, str]:
    """A short name per parameter column for legends and claims: the last dotted part
    (``workload.0.load`` -> ``load``), or the full key where two would clash.

    Examples
    --------
    >>> short_names(["cc.scheme", "workload.0.load", "workload.1.load", "seed"])
    {'cc.scheme': 'scheme', 'workload.0.load': 'workload.0.load', 'workload.1.load': \
'workload.1.load', 'seed': 'seed'}
    """
    last = [p.rsplit(".", 1)[-1] for p in params]
    return {p: s if last.count(s) == 1 else p for p, s in zip(params, last)}


def _param_columns(spec: RunSpec) -> dict[str, Any]:
    return {k: _column_value(v) for k, v in spec.params.items()}


def _column_value(value: Any) -> Any:
    """A parameter as a table cell: scalars as they are, tables and lists as TOML text."""
    if isinstance(value, (str, bool, numbers.Real)):
        return value
    return api._toml_value(value)


def _canonical(value: Any) -> str:
    """Canonical JSON for hashing (float 1.0 and int 1 stay distinct, as in TOML)."""

    def norm(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {str(k): norm(x) for k, x in sorted(v.items())}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if isinstance(v, float):
            return {"float": repr(v)} if math.isfinite(v) else {"float": str(v)}
        return v

    return json.dumps(norm(value), sort_keys=True, default=str)


def _quote_key(key: str) -> str:
    return key if "." not in key else json.dumps(key)


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate, ignoring empty frames (their all-float columns would widen int columns)."""
    import pandas as pd

    full = [f for f in frames if len(f)]
    if full:
        return pd.concat(full, ignore_index=True)
    return frames[0].iloc[0:0] if frames else pd.DataFrame()
