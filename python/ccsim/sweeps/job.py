"""A run handed to a backend (:class:`Job`) and running it in a worker (:func:`execute`).

Both backends call :func:`execute` in their workers and hand each result payload to the
driver's ``ResultFn``: ``{"status": "ok", "tables", "summary", "config"}`` or
``{"status": "failed", "error"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ccsim import api
from ccsim.sweeps.spec import RunSpec
from ccsim.sweeps.store import STATUS_FAILED, STATUS_OK

ResultFn = Callable[["Job", dict[str, Any]], None]


@dataclass(frozen=True)
class Job:
    """A validated run ready for a worker: the resolved scenario and the key it is stored under."""

    spec: RunSpec
    config: str
    base_dir: str
    key: str
    #: Run even past the lifetime bound (``ccsim.sweep(allow_long=True)``).
    allow_long: bool = False

    def args(self) -> tuple[str, str, bool]:
        """What a worker's :func:`execute` takes."""
        return self.config, self.base_dir, self.allow_long


def execute(config: str, base_dir: str, allow_long: bool = False) -> dict[str, Any]:
    """Run one resolved scenario in a worker; never raises: an error becomes a failed result."""
    try:
        tables, summary, config = api.run_text(config, base_dir, allow_long=allow_long)
    except Exception as e:  # noqa: BLE001 -- a failing run is data, not a crash of the sweep
        return {"status": STATUS_FAILED, "error": f"{type(e).__name__}: {e}"}
    return {"status": STATUS_OK, "tables": tables, "summary": summary, "config": config}
