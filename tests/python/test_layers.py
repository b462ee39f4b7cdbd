"""The Python package's modules import only downward (the layer map in docs/design.md): every
``ccsim`` module a module imports, at the top or inside a function, is of a lower layer or of
its own package."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "ccsim"

#: Layer of each module, bottom up.
LAYERS = {
    "_core": 0,
    "progress": 0,
    "examples": 0,
    "provenance": 0,
    "api": 1,
    "bench": 1,
    "hpcc_import": 2,
    "dag": 2,
    "sweeps": 2,
    "results": 3,
    "measures": 3,
    "plots": 3,
    "fidelity": 4,
    "report": 4,
    "experiments": 5,
    "gallery": 5,
    "cli": 6,
    "__init__": 7,
    "__main__": 7,
}


def imported_modules(source: str) -> set[str]:
    """The top-level ``ccsim`` modules ``source`` imports (``from ccsim.x import``,
    ``from ccsim import x``, ``import ccsim.x``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ccsim"):
            parts = node.module.split(".")
            if len(parts) > 1:
                found.add(parts[1])
            else:
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("ccsim."))
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "examples":
            continue
        own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        assert own in LAYERS, f"{rel}: no layer; add it to LAYERS and docs/design.md"
        for dep in imported_modules(path.read_text(encoding="utf-8")):
            if dep != own and LAYERS[dep] >= LAYERS[own] and own not in ("__init__", "__main__"):
                upward.append(f"{rel}: ccsim.{dep}")
    assert not upward, "imports at or above their layer:\n" + "\n".join(upward)


def test_the_check_sees_every_import_form() -> None:
    src = "from ccsim.sweeps.spec import CASE\nfrom ccsim import plots\nimport ccsim.api\n"
    src += "def f():\n    from ccsim import report\n"
    assert imported_modules(src) == {"sweeps", "plots", "api", "report"}
