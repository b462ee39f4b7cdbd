"""Running a sweep: validate every run, skip those already stored, hand the rest to a backend
and write each result as it arrives."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ccsim import api
from ccsim.api import ScenarioError
from ccsim.sweeps.job import Job
from ccsim.sweeps.local import _run_local
from ccsim.sweeps.ray import _run_ray
from ccsim.sweeps.result import load_runs
from ccsim.sweeps.spec import BACKENDS, RunSpec, Sweep, _column_value, _param_columns
from ccsim.sweeps.store import (
    RUNS_DIR,
    STATUS_FAILED,
    STATUS_OK,
    SWEEP_JSON,
    _clean_partial_writes,
    _engine_id,
    _lock,
    _stored_key,
    _write_json_atomic,
    _write_run,
)

if TYPE_CHECKING:
    import pandas as pd


def sweep(
    base: api.Scenario,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    cases: Mapping[str, Mapping[str, Any]] | None = None,
    name: str | None = None,
    out: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = False,
    force: bool = False,
    allow_long: bool = False,
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
    cases : dict of name -> dict, optional
        Named bundles of overrides that go together; every case runs the whole grid, and the
        runs get a ``case`` parameter (see :class:`Sweep`).
    name : str, optional
        The sweep's name (default: the base scenario's name); results go to ``results/<name>``.
    out : str or Path, optional
        The results directory. Finished runs already there are skipped (resume); a sweep there
        with other settings is an error unless ``force``.
    backend : ``"local"`` or ``"ray"``
        A local process pool, or Ray: the cluster at ``address`` or a local Ray started here.
    workers : int, optional
        Parallel runs (default: all cores; ignored when joining an existing Ray cluster).
    progress : bool
        Draw a progress line on stderr.
    allow_long : bool, default False
        Run even runs estimated at over 1e12 events (a day or more), which otherwise fail with
        the warning that names their setting (as :func:`ccsim.run`).

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
    examples = {
        "grid": "{'seed': [1, 2]}",
        "overrides": "{'cc.scheme': 'dcqcn'}",
        "cases": "{'web': {'workload.0.cdf': 'websearch'}}",
    }
    for arg, value in (("grid", grid), ("overrides", overrides), ("cases", cases)):
        if value is not None and not isinstance(value, Mapping):
            raise ScenarioError(
                f"ccsim.sweep: {arg}: expected a dict, e.g. {examples[arg]}; "
                f"got {type(value).__name__} {value!r}"
            )
    if name is None:
        name = api.scenario_name(api.validate(base, overrides=overrides)) or "sweep"
    spec = Sweep(
        name,
        base,
        dict(grid or {}),
        dict(overrides or {}),
        source="ccsim.sweep",
        cases=dict(cases or {}),
    )
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
            force=force,
            allow_long=allow_long,
        )
    finally:
        if bar is not None:
            bar.close()


_NO_TRACE = (
    "output.trace: sweeps keep tables only; trace one run with `ccsim run SCENARIO --set ...`, "
    'and drop the trace from the sweep: unset = ["output.trace"] in the sweep file, '
    '--unset output.trace, or {"output.trace": None} in Python'
)


def run_sweep(
    sweep: Sweep,
    out: str | os.PathLike[str],
    *,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: Callable[[int, int, int, int, float], None] | None = None,
    validating: Callable[[int, int], None] | None = None,
    force: bool = False,
    allow_long: bool = False,
) -> pd.DataFrame:
    """Run every run of ``sweep`` not yet finished in ``out``; return the runs table (its
    ``attrs["skipped"]``: the runs found finished and not run again).

    ``out`` holding a sweep with other settings (base, set, grid or cases) is an error unless
    ``force``.

    Runs are validated first: an invalid run (e.g. a bad value in the grid) is recorded as failed
    with its error and the others go on; if every run is invalid, the sweep itself is, and
    ScenarioError is raised before anything runs. Each finished run is written atomically to
    ``out/runs/<run_id>/``; a run already there with the same resolved scenario and engine build
    is skipped, so an interrupted sweep resumes where it stopped. Failed runs are tried again.

    ``progress(done, failed, running, total, sim_time_ps)`` is called as runs finish (``done``
    includes skipped and failed runs; ``sim_time_ps`` is the simulated time run so far), and
    ``validating(checked, total)`` every 64 runs while they are validated.
    """
    if backend not in BACKENDS:
        raise ScenarioError(
            f"backend: unknown backend `{backend}`; use one of {', '.join(BACKENDS)}"
        )
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or workers < 1
    ):
        raise ScenarioError(f"workers: {workers!r} is not a whole number >= 1 of processes")
    specs = sweep.runs()
    text, _ = api._scenario_text(sweep.base)
    engine = _engine_id()
    jobs: list[Job] = []
    invalid: list[tuple[RunSpec, str]] = []
    for i, spec in enumerate(specs):
        if validating is not None and i % 64 == 0:
            validating(i, len(specs))
        scenario = sweep.scenario_of(spec)
        try:
            config = api.validate(scenario, overrides=sweep.run_overrides(spec))
        except ScenarioError as e:
            invalid.append((spec, str(e)))
            continue
        if "trace" in api.read_toml_text(config, "resolved scenario").get("output", {}):
            invalid.append((spec, _NO_TRACE))
            continue
        key = hashlib.sha256(f"{engine}\n{config}".encode()).hexdigest()[:16]
        jobs.append(Job(spec, config, api._scenario_dir(scenario), key, allow_long))
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
    meta = {
        "name": sweep.name,
        "base": text,
        # Overrides as written (tables as tables), for the report; grid values as table cells.
        "set": {k: v for k, v in sweep.overrides.items() if v is not None},
        "grid": {k: [_column_value(v) for v in vs] for k, vs in sweep.grid.items()},
        "cases": sweep.cases,
        "params": sweep.params,
        "runs": [{"run_id": s.run_id, "params": _param_columns(s)} for s in specs],
    }
    unset = [k for k, v in sweep.overrides.items() if v is None]
    if unset:
        meta["unset"] = unset
    with _lock(out):
        if not force:
            _refuse_other_sweep(out, meta)
        _clean_partial_writes(runs_dir)
        _write_json_atomic(out / SWEEP_JSON, meta)
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
    runs = load_runs(out)
    runs.attrs["skipped"] = len(jobs) - len(pending)
    return runs


def _refuse_other_sweep(out: Path, meta: dict[str, Any]) -> None:
    """Raise ScenarioError if ``out`` holds a sweep with other settings than ``meta``."""
    try:
        old = json.loads((out / SWEEP_JSON).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError) as e:  # cut short or garbled: rewritten below
        print(f"{out / SWEEP_JSON} is unreadable ({e}); writing it again", file=sys.stderr)
        return
    new = json.loads(json.dumps(meta))
    # `set` and cases are compared as table cells, the form older sweep.json files hold them in.
    for m in (old, new):
        if isinstance(m.get("set"), dict):
            m["set"] = {k: _column_value(v) for k, v in m["set"].items()}
        if isinstance(m.get("cases"), dict):
            m["cases"] = {
                c: {k: _column_value(v) for k, v in o.items()} if isinstance(o, dict) else o
                for c, o in m["cases"].items()
            }
    changed = [k for k in ("base", "set", "unset", "grid", "cases") if old.get(k) != new.get(k)]
    if changed:
        raise ScenarioError(
            f"--out {out}: holds the sweep `{old.get('name')}` with other settings "
            f"({', '.join(changed)} differ); choose another --out, or pass --force to run "
            "there anyway (finished runs with the same scenario are kept, not run again)"
        )
