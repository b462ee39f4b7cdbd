"""ccsim: a fast packet-level simulator for datacenter congestion control.

The engine is Rust (``ccsim._core``); this package is its front door::

    import ccsim
    r = ccsim.run("scenarios/incast-16to1.toml", overrides={"cc.scheme": "dcqcn"}, out="results/x")
    r.flows.fct_us.describe()

See :func:`run`, :func:`sweep`, :func:`validate`, :func:`load`, :func:`catalog`, and
``ccsim --help``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccsim._core import ScenarioError, SimulationError
from ccsim.api import RunResult, ScenarioWarning, catalog, run, to_toml, validate
from ccsim.results import load

if TYPE_CHECKING:
    from ccsim.sweeps import SweepResult, sweep

    __version__: str


def __getattr__(name: str) -> Any:
    # Sweeps and the version are looked up on first use: `ccsim run` needs neither.
    if name in ("sweep", "SweepResult"):
        from ccsim import sweeps

        return getattr(sweeps, name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("ccsim")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module 'ccsim' has no attribute {name!r}")


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
