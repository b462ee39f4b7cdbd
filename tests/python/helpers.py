"""Shared test helper: run the CLI in a fresh interpreter (tests import this module by name)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def ccsim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m ccsim.cli ARGS`` in ``cwd`` and capture its output (never raises)."""
    env = {k: v for k, v in os.environ.items() if k != "CCSIM_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "ccsim.cli", *args],
        cwd=cwd,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
