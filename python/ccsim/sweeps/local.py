"""The local backend: a pool of worker processes (fresh interpreters) fed over pipes.

A job goes to a worker's stdin and its result comes back on its stdout, each as one
length-prefixed pickle frame. The worker's entry point is :func:`_worker_main`, started by
:func:`_start_worker` as ``python -c "... from ccsim.sweeps import _worker_main ..."``.
"""

from __future__ import annotations

import os
import pickle
import selectors
import subprocess
import sys
from typing import Any, BinaryIO

from ccsim.sweeps.job import Job, ResultFn, execute
from ccsim.sweeps.store import STATUS_FAILED

# A run whose local worker process dies this many times is recorded as failed.
MAX_WORKER_DEATHS = 2
# The cores a run may use (the engine's `threads = "auto"`, `scenario::config::CORES_ENV`).
CORES_ENV = "CCSIM_CORES"


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
    finished = False
    count = min(workers or os.cpu_count() or 1, len(jobs))
    env = _worker_env(count)
    try:
        for _ in range(count):
            pool.append(_start_worker(env))
        while queue or busy:
            for proc in pool:
                if queue and proc.pid not in busy:
                    job = queue.pop()
                    busy[proc.pid] = (proc, job)
                    assert proc.stdin is not None
                    _write_frame(proc.stdin, job.args())
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
                pool.append(_start_worker(env))
                rid = job.spec.run_id
                deaths[rid] = deaths.get(rid, 0) + 1
                if deaths[rid] < MAX_WORKER_DEATHS:
                    queue.append(job)
                else:
                    error = f"worker process died running it {deaths[rid]} times (exit code {code})"
                    on_result(job, {"status": STATUS_FAILED, "error": error})
        finished = True
    finally:
        selector.close()
        for proc in pool:
            # Interrupted (Ctrl-C, an error): kill every worker, since one may be blocked
            # writing a result into a pipe the driver no longer reads, and wait would hang.
            if not finished:
                proc.kill()
            elif proc.stdin is not None:
                proc.stdin.close()  # an idle worker exits at end of input
        for proc in pool:
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def _worker_env(workers: int) -> dict[str, str]:
    """The workers' environment: each run's share of the cores (``CCSIM_CORES``, which a run's
    ``threads = "auto"`` takes and a larger ``threads`` is warned against), so that the workers'
    threads together do not outnumber the cores. A share the caller set is divided the same
    way."""
    try:
        cores = int(os.environ.get(CORES_ENV, ""))
    except ValueError:
        cores = 0
    if cores < 1:
        cores = os.cpu_count() or 1
    return {**os.environ, CORES_ENV: str(max(1, cores // max(1, workers)))}


def _start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    code = "import sys; from ccsim.sweeps import _worker_main; sys.exit(_worker_main())"
    return subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
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
