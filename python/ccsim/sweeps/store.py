"""The results directory: its layout, atomic per-run writes, the driver's lock and resume keys.

``out/sweep.json`` describes the sweep; ``out/runs/<run_id>/`` holds one run, written into a
temporary directory and renamed into place, so it is either complete or absent. A run's key
hashes the engine build (:func:`_engine_id`) and the resolved scenario: a stored successful run
with the same key is not run again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ccsim import api
from ccsim.api import ScenarioError
from ccsim.sweeps.spec import RunSpec, _param_columns

SWEEP_JSON = "sweep.json"
RUNS_DIR = "runs"
SUMMARY_PARQUET = "summary.parquet"
STATUS_OK = "ok"
STATUS_FAILED = "failed"
_TMP_PREFIX = ".tmp-"
_OLD_PREFIX = ".old-"


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
        files = {}
        for name, df in payload["tables"].items():
            table = df.copy()
            for i, (col, value) in enumerate(head.items()):
                table.insert(i, col, [value] * len(table))
            path = tmp / f"{name}.parquet"
            pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path)
            files[path.name] = {**api.file_record(path.read_bytes()), "rows": len(table)}
        (tmp / "config.toml").write_text(payload["config"], encoding="utf-8")
        files["config.toml"] = api.file_record((tmp / "config.toml").read_bytes())
        summary = {**payload["summary"], "files": files}
        (tmp / "summary.json").write_text(
            json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
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
    """The key of a finished, successful run stored whole in ``run_dir`` (None if there is none,
    or if a file of it cannot be read or differs from its record: resume runs it again)."""
    import pyarrow.parquet as pq

    path = run_dir / SUMMARY_PARQUET
    if not path.is_file():
        return None
    try:
        row = pq.read_table(path, columns=["status", "run_key"]).to_pylist()[0]
        if row["status"] != STATUS_OK:
            return None
        api.check_files(run_dir, api.read_summary(run_dir))
    except (ScenarioError, OSError, ValueError, KeyError, IndexError) as e:
        print(f"run {run_dir.name} is damaged ({e}); running it again", file=sys.stderr)
        return None
    return row["run_key"]


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
