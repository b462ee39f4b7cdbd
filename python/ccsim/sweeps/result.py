"""Reading a sweep back: :class:`SweepResult` (the runs table and every run's tables) and the
short parameter names used in legends and claims."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ccsim import api
from ccsim.api import ScenarioError
from ccsim.sweeps.store import (
    RUNS_DIR,
    STATUS_FAILED,
    STATUS_OK,
    SUMMARY_PARQUET,
    flatten,
)

if TYPE_CHECKING:
    import pandas as pd


class SweepResult(api.EngineTables):
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
        self._read = read_table
        self._tables = {}

    def _read_table(self, name: str) -> pd.DataFrame:
        """Engine table ``name`` of every finished run, concatenated."""
        return self._read(name)

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
        """The runs whose parameters equal ``filters`` (keys: full or short parameter names).

        Raises ScenarioError naming the values there are if a filter's value matches no run."""
        if not filters:
            return self
        mask = self.runs["status"].notna()
        for name, value in filters.items():
            column = self.runs[self.param(name)]
            match = column == value
            if not match.any():
                have = ", ".join(str(v) for v in sorted(column.dropna().unique(), key=str))
                raise ScenarioError(
                    f"where: no run has {name} = {value}; the values there are: {have or 'none'}"
                )
            mask &= match
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

    out = Path(out)
    meta = api.read_sweep_meta(out)
    runs = load_runs(out)
    if not len(runs):
        raise ScenarioError(
            f"{out / RUNS_DIR}: none of the sweep's {len(meta['runs'])} runs is there (not run "
            "yet, or deleted); `ccsim sweep` on it again runs them"
        )
    present = set(runs["run_id"])
    missing = [r["run_id"] for r in meta["runs"] if r["run_id"] not in present]
    ok_ids = list(runs.loc[runs["status"] == STATUS_OK, "run_id"])

    summaries: dict[str, dict[str, Any]] = {}

    def run_dir(rid: str) -> Path:
        """A run's directory, its files checked against their record the first time."""
        d = out / RUNS_DIR / rid
        if rid not in summaries:
            again = "run the sweep again (resume re-runs it)"
            summaries[rid] = api.read_summary(d, again)
            api.check_files(d, summaries[rid], again)
        return d

    def read(table: str) -> pd.DataFrame:
        return _concat([api.read_table(run_dir(rid), table, summaries[rid]) for rid in ok_ids])

    configs = {rid: api.read_text(run_dir(rid) / "config.toml") for rid in ok_ids}
    if missing:
        api._warn(
            [
                (
                    f"{out}: {len(missing)} of {len(meta['runs'])} runs are not in runs/ (not run "
                    "yet, or deleted); what is read covers the others. `ccsim sweep` on it again "
                    "runs them"
                )
            ]
        )
    return SweepResult(meta["name"], list(meta["params"]), runs, read, configs, out, missing)


def load_runs(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The runs table of a sweep directory, in grid order; runs not yet written are absent."""
    import pandas as pd

    out = Path(out)
    meta = api.read_sweep_meta(out)
    rows = []
    for r in meta["runs"]:
        path = out / RUNS_DIR / r["run_id"] / SUMMARY_PARQUET
        if path.is_file():
            try:
                rows.append(pd.read_parquet(path))
            except (OSError, ValueError) as e:
                raise ScenarioError(
                    f"{path}: unreadable ({type(e).__name__}: {e}); run the sweep again (resume "
                    "re-runs it)"
                ) from None
    return _concat(rows).reset_index(drop=True)


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


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate, ignoring empty frames (their all-float columns would widen int columns)."""
    import pandas as pd

    full = [f for f in frames if len(f)]
    if full:
        return pd.concat(full, ignore_index=True)
    return frames[0].iloc[0:0] if frames else pd.DataFrame()
