"""ccsim: a fast packet-level simulator for datacenter congestion control.

The engine is Rust (``ccsim._core``); this package is its front door::

    import ccsim
    r = ccsim.run("scenarios/incast-16to1.toml", overrides={"cc.scheme": "dcqcn"}, out="results/x")
    r.flows.fct_us.describe()

See :func:`run`, :func:`sweep`, :func:`validate`, :func:`load`, :func:`catalog`, and
``ccsim --help``.
"""

from __future__ import annotations

from ccsim._core import ScenarioError, SimulationError
from ccsim.api import RunResult, ScenarioWarning, catalog, load, run, to_toml, validate
from ccsim.sweeps import SweepResult, sweep

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("ccsim")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "RunResult",
    "ScenarioError",
    "ScenarioWarning",
    "SimulationError",
    "SweepResult",
    "catalog",
    "load",
    "run",
    "sweep",
    "to_toml",
    "validate",
]
