"""The Ray backend: each run a task on a Ray cluster, or on a local Ray started for the sweep."""

from __future__ import annotations

import os
from typing import Any

from ccsim.api import ScenarioError
from ccsim.sweeps.job import Job, ResultFn, execute


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
    # One core per task: a run's `threads = "auto"` takes its share from CCSIM_CORES.
    env = {"env_vars": {"CCSIM_CORES": "1"}}
    remote = ray.remote(num_cpus=1, max_retries=3, runtime_env=env)(execute)
    refs = {remote.remote(*j.args()): j for j in jobs}
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
