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
from ccsim._core import ScenarioError

SWEEP_FILE_KEYS = ("name", "base", "set", "grid")


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
