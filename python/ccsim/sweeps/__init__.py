"""Sweeps: a base scenario x a parameter grid -> runs in parallel -> one Parquet dataset.

One concept per module; everything is importable from ``ccsim.sweeps`` as before:

- :mod:`~ccsim.sweeps.spec`: the sweep file format, grid expansion and deterministic run ids
- :mod:`~ccsim.sweeps.driver`: running a sweep (:func:`sweep`, :func:`run_sweep`) and resume
- :mod:`~ccsim.sweeps.job`: a run handed to a backend, and running it in a worker
- :mod:`~ccsim.sweeps.local`: the local backend, a pool of worker processes over pipes
- :mod:`~ccsim.sweeps.ray`: the Ray backend
- :mod:`~ccsim.sweeps.store`: the results directory, atomic per-run writes, lock, resume keys
- :mod:`~ccsim.sweeps.result`: reading a sweep back (:class:`SweepResult`)
"""

# ruff: noqa: F401 -- this module re-exports; the private names too stay importable from here
# as before the split (local workers start with `from ccsim.sweeps import _worker_main`).

from __future__ import annotations

from ccsim.sweeps.driver import BACKENDS, run_sweep, sweep
from ccsim.sweeps.job import Job, ResultFn, execute
from ccsim.sweeps.local import (
    MAX_WORKER_DEATHS,
    _read_frame,
    _run_local,
    _start_worker,
    _worker_main,
    _write_frame,
)
from ccsim.sweeps.ray import _run_ray
from ccsim.sweeps.result import SweepResult, _concat, load_runs, load_sweep, short_names
from ccsim.sweeps.spec import (
    CASE,
    MAX_RUNS,
    SWEEP_FILE_KEYS,
    RunSpec,
    Sweep,
    _canonical,
    _column_value,
    _param_columns,
    _quote_key,
    run_id,
)
from ccsim.sweeps.store import (
    _OLD_PREFIX,
    _TMP_PREFIX,
    RUNS_DIR,
    STATUS_FAILED,
    STATUS_OK,
    SUMMARY_PARQUET,
    SWEEP_JSON,
    _clean_partial_writes,
    _engine_id,
    _lock,
    _stored_key,
    _write_json_atomic,
    _write_run,
    flatten,
)

__all__ = [
    "BACKENDS",
    "CASE",
    "MAX_RUNS",
    "MAX_WORKER_DEATHS",
    "RUNS_DIR",
    "STATUS_FAILED",
    "STATUS_OK",
    "SUMMARY_PARQUET",
    "SWEEP_FILE_KEYS",
    "SWEEP_JSON",
    "Job",
    "ResultFn",
    "RunSpec",
    "Sweep",
    "SweepResult",
    "execute",
    "flatten",
    "load_runs",
    "load_sweep",
    "run_id",
    "run_sweep",
    "short_names",
    "sweep",
]
