"""The sweep and its runs: the sweep file format, grid expansion and deterministic run ids.

A parameter value is hashed in canonical form (:func:`run_id`) and stored as a table cell
(:func:`_column_value`); both live here so the two never disagree.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim import api
from ccsim.api import ScenarioError

SWEEP_FILE_KEYS = ("name", "base", "set", "unset", "cases", "grid")

#: The run parameter that names a run's case (see :class:`Sweep`).
CASE = "case"
#: The case key that names the case's own base scenario.
BASE = "base"
#: Most runs a sweep expands to unless told otherwise (``max_runs``, ``--max-runs``).
MAX_RUNS = 10_000
#: Where a sweep's runs can go (``backend``, ``--backend``).
BACKENDS = ("local", "ray")


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
    product, in key order. ``cases`` names bundles of overrides that go together (e.g. a
    workload mix and its load); with cases, every case runs the whole grid, and the runs have
    a ``case`` parameter. A run's overrides are the case's, then ``overrides``, then its grid
    values; an override whose value is None removes the key (a file's ``unset`` list). A case's
    ``base`` (a scenario file) replaces the sweep's base scenario for its runs.
    ``source`` names where the sweep came from, for error messages.
    """

    name: str
    base: api.Scenario
    grid: dict[str, list[Any]] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    source: str = "sweep"
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_runs: int = MAX_RUNS
    #: Each case's own base scenario, resolved (the case's ``base`` is relative to the file).
    case_bases: dict[str, api.Scenario] = field(default_factory=dict)

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
        if not isinstance(self.cases, Mapping) or not all(
            isinstance(c, Mapping) and c for c in self.cases.values()
        ):
            raise ScenarioError(
                f"{self.source}: cases: expected named tables of overrides, e.g. "
                f'[cases.websearch] "workload.0.cdf" = "websearch"'
            )
        if CASE in self.grid:
            raise ScenarioError(f"{self.source}: grid.{CASE}: `{CASE}` names a case; rename it")
        self.grid = {k: list(v) for k, v in self.grid.items()}
        self.overrides = dict(self.overrides)
        self.cases = {str(k): dict(v) for k, v in self.cases.items()}

    @property
    def params(self) -> list[str]:
        """The parameters that tell runs apart: ``case`` (with cases), then the grid's keys."""
        return ([CASE] if self.cases else []) + list(self.grid)

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
        cases = data.get("cases", {})
        bases = {}
        for case, table in cases.items() if isinstance(cases, Mapping) else ():
            if isinstance(table, Mapping) and BASE in table:
                bases[str(case)] = _case_base(table[BASE], case, base_dir, source)
        name = data.get("name", default_name)
        if not isinstance(name, str) or not name:
            raise ScenarioError(f'{source}: name: expected a non-empty string, e.g. name = "x"')
        unset = data.get("unset", [])
        if not isinstance(unset, list) or not all(isinstance(k, str) and k for k in unset):
            raise ScenarioError(
                f'{source}: unset: expected a list of keys to remove, e.g. unset = ["output.trace"]'
            )
        overrides = data.get("set", {})
        if isinstance(overrides, Mapping):  # a key in both is refused below
            both = sorted(set(overrides) & set(unset))
            if both:
                raise ScenarioError(f"{source}: `{both[0]}` is both set and unset; keep one")
            overrides = {**overrides, **dict.fromkeys(unset)}  # None: removed (see api)
        return cls(
            name=name,
            base=base,
            grid=data.get("grid", {}),
            overrides=overrides,
            source=source,
            cases=cases,
            case_bases=bases,
        )

    def runs(self) -> list[RunSpec]:
        """Each case (if any) times the grid's cartesian product in key order, each with its
        id (which hashes the case's overrides too, so editing a case re-runs it)."""
        keys = list(self.grid)
        n = max(1, len(self.cases)) * math.prod(len(v) for v in self.grid.values())
        if n > self.max_runs:
            raise ScenarioError(
                f"{self.source}: the grid expands to {n} runs, more than {self.max_runs}; "
                "narrow it, or allow more with --max-runs N (max_runs=N in Python)"
            )
        out = []
        for case in self.cases or [None]:
            for values in itertools.product(*(self.grid[k] for k in keys)):
                params = dict(zip(keys, values))
                if case is None:
                    out.append(RunSpec(run_id(params), params))
                else:
                    hashed = {**params, CASE: {case: self.cases[case]}}
                    out.append(RunSpec(run_id(hashed), {CASE: case, **params}))
        return out

    def run_overrides(self, spec: RunSpec) -> dict[str, Any]:
        """The overrides of one run: its case's, the sweep's ``overrides`` (``[set]``), then its
        grid values."""
        params = dict(spec.params)
        case = self.cases.get(params.pop(CASE, None), {})
        return {**{k: v for k, v in case.items() if k != BASE}, **self.overrides, **params}

    def scenario_of(self, spec: RunSpec) -> api.Scenario:
        """The scenario a run starts from: its case's ``base``, or the sweep's."""
        return self.case_bases.get(spec.params.get(CASE, ""), self.base)


def _case_base(base: Any, case: str, base_dir: Path, source: str) -> Path:
    """A case's ``base``: a scenario path relative to the sweep file."""
    path = base_dir / str(base)
    if not isinstance(base, str) or not path.is_file():
        raise ScenarioError(
            f"{source}: cases.{case}.base: {path} is not a file; give a scenario path relative "
            f"to {source}"
        )
    return path


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


def _param_columns(spec: RunSpec) -> dict[str, Any]:
    return {k: _column_value(v) for k, v in spec.params.items()}


def _column_value(value: Any) -> Any:
    """A parameter as a table cell: scalars as they are, tables and lists as TOML text."""
    if isinstance(value, (str, bool, numbers.Real)):
        return value
    return api.inline_toml(value)


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
