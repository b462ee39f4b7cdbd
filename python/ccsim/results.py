"""Reading results back: a run directory (``ccsim run``) or a sweep's results directory
(``ccsim sweep``, ``ccsim reproduce``), whichever a path holds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ccsim import api
from ccsim.api import RunResult, ScenarioError

if TYPE_CHECKING:  # the sweep machinery (and pandas) load only when a sweep is read
    from ccsim.sweeps import SweepResult


def load(results_dir: str | os.PathLike[str]) -> RunResult | SweepResult:
    """Read a run directory (``ccsim run``) or a sweep's results directory (``ccsim sweep``).

    A run directory gives a :class:`RunResult`; a table whose CSV file is absent loads as an
    empty DataFrame. A sweep directory gives a :class:`ccsim.sweeps.SweepResult`: its tables
    are every finished run's, concatenated, with ``run_id`` and the run's parameters as columns.

    Raises
    ------
    FileNotFoundError
        If ``results_dir`` is neither (no ``summary.json``, no ``sweep.json``).

    Examples
    --------
    >>> r = ccsim.load("results/incast-16to1")  # doctest: +SKIP
    >>> r.summary["perf"]["events_per_s"]  # doctest: +SKIP
    """
    from ccsim import sweeps

    d = Path(results_dir)
    try:
        if (d / sweeps.SWEEP_JSON).is_file():
            return sweeps.load_sweep(d)
        return api.load_run(d)
    except ScenarioError:  # already names the file and what to do
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise ScenarioError(
            f"{d}: not a readable ccsim results directory ({type(e).__name__}: {e}); "
            "run the scenario or sweep again to rewrite it"
        ) from None
