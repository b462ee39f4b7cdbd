"""Sweeps: a base scenario x a parameter grid -> runs in parallel -> one Parquet dataset.

One concept per module; everything is importable from ``ccsim.sweeps``, which imports a module
only when one of its names is first used (so ``ccsim run`` does not pay for sweeps):

- :mod:`~ccsim.sweeps.spec`: the sweep file format, grid expansion and deterministic run ids
- :mod:`~ccsim.sweeps.driver`: running a sweep (:func:`sweep`, :func:`run_sweep`) and resume
- :mod:`~ccsim.sweeps.job`: a run handed to a backend, and running it in a worker
- :mod:`~ccsim.sweeps.local`: the local backend, a pool of worker processes over pipes
- :mod:`~ccsim.sweeps.ray`: the Ray backend
- :mod:`~ccsim.sweeps.store`: the results directory, atomic per-run writes, lock, resume keys
- :mod:`~ccsim.sweeps.result`: reading a sweep back (:class:`SweepResult`)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the public names, for type checkers
    from ccsim.sweeps.driver import run_sweep, sweep
    from ccsim.sweeps.job import Job, ResultFn, execute
    from ccsim.sweeps.local import MAX_WORKER_DEATHS
    from ccsim.sweeps.result import SweepResult, load_runs, load_sweep, short_names
    from ccsim.sweeps.spec import BACKENDS, CASE, MAX_RUNS, SWEEP_FILE_KEYS, RunSpec, Sweep, run_id
    from ccsim.sweeps.store import (
        RUNS_DIR,
        STATUS_FAILED,
        STATUS_OK,
        SUMMARY_PARQUET,
        SWEEP_JSON,
        flatten,
    )

# Where each name lives.
_WHERE = {
    "BACKENDS": "spec",
    "run_sweep": "driver",
    "sweep": "driver",
    "Job": "job",
    "ResultFn": "job",
    "execute": "job",
    "MAX_WORKER_DEATHS": "local",
    "_read_frame": "local",
    "_run_local": "local",
    "_start_worker": "local",
    "_worker_main": "local",
    "_write_frame": "local",
    "_run_ray": "ray",
    "SweepResult": "result",
    "_concat": "result",
    "load_runs": "result",
    "load_sweep": "result",
    "short_names": "result",
    "CASE": "spec",
    "MAX_RUNS": "spec",
    "SWEEP_FILE_KEYS": "spec",
    "RunSpec": "spec",
    "Sweep": "spec",
    "_canonical": "spec",
    "_column_value": "spec",
    "_param_columns": "spec",
    "_quote_key": "spec",
    "run_id": "spec",
    "_OLD_PREFIX": "store",
    "_TMP_PREFIX": "store",
    "RUNS_DIR": "store",
    "STATUS_FAILED": "store",
    "STATUS_OK": "store",
    "SUMMARY_PARQUET": "store",
    "SWEEP_JSON": "store",
    "_clean_partial_writes": "store",
    "_engine_id": "store",
    "_lock": "store",
    "_stored_key": "store",
    "_write_json_atomic": "store",
    "_write_run": "store",
    "flatten": "store",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ccsim.sweeps' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ccsim.sweeps.{module}"), name)
    globals()[name] = value
    return value


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
