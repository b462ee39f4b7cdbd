"""Shared fixtures: one small fat-tree sweep (8 runs), run once per test session on the local
backend; the sweep, plot, report and experiment tests all read it."""

from __future__ import annotations

from pathlib import Path

import ccsim
import pytest
from helpers import SWEEP_BASE, SWEEP_GRID, SWEEP_NAME


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "results"
    runs = ccsim.sweep(SWEEP_BASE, SWEEP_GRID, name=SWEEP_NAME, out=out, workers=2)
    assert (runs["status"] == "ok").all(), runs[["run_id", "error"]]
    return out
