"""DAG workload files (``[[workload]] kind = "dag"``): one flow per line,
``id src dst size after delay``, where ``after`` is the ids the flow waits for, joined by
commas (``-``: none), and ``delay`` the time from the last of them to its start (``-``: 0).

The engine checks a file when a scenario uses it (unknown or repeated ids, a flow waiting for
itself, cycles, hosts and units), naming the line; :func:`ccsim.validate` runs those checks
without simulating.

Examples
--------
>>> from ccsim.dag import write_dag, read_dag
>>> write_dag("step.txt", [
...     {"id": "a", "src": 0, "dst": 1, "size": "1MB"},
...     {"id": "b", "src": 1, "dst": 2, "size": 1_000_000, "after": ["a"], "delay": "5us"},
... ])  # doctest: +SKIP
>>> read_dag("step.txt").after.tolist()  # doctest: +SKIP
[[], ['a']]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccsim import api
from ccsim.api import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

HEADER = "# id src dst size after delay"
COLUMNS = ("id", "src", "dst", "size", "after", "delay")


def write_dag(path: str | os.PathLike[str], flows: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``flows`` (mappings with id, src, dst, size and optionally after, a list of ids,
    and delay, e.g. ``"5us"``) as a DAG file; a size is bytes or a string with a unit."""
    lines = [HEADER]
    for k, f in enumerate(flows):
        missing = [c for c in ("id", "src", "dst", "size") if c not in f]
        if missing:
            raise ScenarioError(f"write_dag: flow {k} has no {', '.join(missing)}")
        fid = str(f["id"])
        if not fid or any(c.isspace() or c in ",#" for c in fid) or fid == "-":
            raise ScenarioError(f"write_dag: flow {k}: id {fid!r} must be one word without , or #")
        after = ",".join(str(a) for a in f.get("after", ())) or "-"
        delay = str(f.get("delay") or "-")
        lines.append(f"{fid} {int(f['src'])} {int(f['dst'])} {f['size']} {after} {delay}")
    out = Path(path)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def read_dag(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A DAG file as a DataFrame: id, src, dst (ints), size and delay as written, and after as
    a list of ids (empty for none). Comments and blank lines are skipped; a line without six
    fields is an error naming it."""
    import pandas as pd

    rows = []
    text = api.read_text(Path(path))
    for n, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != len(COLUMNS):
            raise ScenarioError(
                f"{path}: line {n}: {len(fields)} fields, expected {' '.join(COLUMNS)}"
            )
        fid, src, dst, size, after, delay = fields
        try:
            hosts = int(src), int(dst)
        except ValueError:
            raise ScenarioError(f"{path}: line {n}: src and dst are host numbers") from None
        rows.append(
            {
                "id": fid,
                "src": hosts[0],
                "dst": hosts[1],
                "size": size,
                "after": [] if after == "-" else after.split(","),
                "delay": None if delay == "-" else delay,
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))
