"""The experiment catalog: one declarative TOML entry per paper experiment in ``experiments/``
(its sweep, a quick and a full size, its plots, and its claims), and the claim checker.

A claim is the paper's statement as a check over measured results, written in a small language
parsed with ``ast`` and evaluated node by node (never ``eval``): numbers, strings, arithmetic,
comparisons, ``and``/``or``/``not`` and calls to the metric functions in :data:`FUNCTIONS`,
whose keyword arguments other than their own select runs by parameter (``load=0.8``).
"""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ccsim import fidelity
from ccsim.api import ScenarioError, read_toml
from ccsim.measures import MEASURES, ClaimError, aggregate, plain_value, select_runs
from ccsim.plots import KINDS as PLOT_KINDS
from ccsim.plots import STYLES, FlowLabels
from ccsim.sweeps import Sweep, SweepResult, short_names
from ccsim.sweeps.spec import CASE

ENV_CATALOG = "CCSIM_EXPERIMENTS"
SIZES = ("quick", "full")
ENTRY_KEYS = (
    "title",
    "paper",
    "figure",
    "description",
    "plots",
    "labels",
    "style",
    "sweep",
    "quick",
    "full",
    "claim",
    "reference",
)
SIZE_KEYS = ("set", "cases", "grid")
CLAIM_KEYS = ("text", "check", "size")
HOLDS, FAILS, ERROR = "holds", "fails", "error"


# --- the catalog ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One claim: the paper's statement (``text``) and its check (an expression)."""

    text: str
    check: str
    #: The size it is checked at (its runs exist only there), or None for both.
    size: str | None = None


@dataclass
class Experiment:
    """One catalog entry (see ``experiments/*.toml``)."""

    name: str
    path: Path
    title: str
    paper: str
    figure: str
    description: str
    plots: list[str]
    sweep_table: dict[str, Any]
    #: The figure style (``ccsim.plots.STYLES``): "screen", "paper" or "paper-wide".
    style: str
    #: How the per-flow plots name flows, as the paper does (``[labels]``).
    labels: FlowLabels
    sizes: dict[str, dict[str, Any]]
    claims: list[Claim] = field(default_factory=list)
    #: Case -> the HPCC ns-3 simulator's run it is compared with (``[reference]``, a folder as
    #: in tests/fidelity; see :mod:`ccsim.fidelity`).
    reference: dict[str, Path] = field(default_factory=dict)

    def claims_at(self, size: str) -> list[Claim]:
        """The claims checked at ``size``."""
        return [c for c in self.claims if c.size in (None, size)]

    def sweep(self, size: str) -> Sweep:
        """The entry's sweep at ``size`` (``quick`` or ``full``): the size's ``set`` and ``grid``
        entries replace the sweep's own, key by key."""
        table = dict(self.sweep_table)
        extra = self.sizes.get(size, {})
        for key in SIZE_KEYS:
            table[key] = {**table.get(key, {}), **extra.get(key, {})}
        table.setdefault("name", f"{self.name}-{size}")
        return Sweep.from_table(
            table, self.path.parent, source=f"{self.path} [{size}]", default_name=self.name
        )


def catalog_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where the catalog is: ``explicit``, else ``$CCSIM_EXPERIMENTS``, else ``./experiments``,
    else the catalog shipped with the package (``ccsim.examples``)."""
    from ccsim import examples

    where = explicit or os.environ.get(ENV_CATALOG)
    if where is not None:
        if not Path(where).is_dir():
            raise ScenarioError(
                f"--catalog: no experiment catalog at {where}; give the folder of experiments/*.toml"
            )
        return Path(where).resolve()
    here = Path("experiments")
    # Resolved, so that entries' relative paths are taken from where the files really are.
    return here.resolve() if here.is_dir() else examples.EXPERIMENTS


def list_experiments(directory: Path) -> list[Experiment]:
    """Every entry of the catalog, by name."""
    return [load_experiment(p.stem, directory) for p in sorted(directory.glob("*.toml"))]


def load_experiment(name: str, directory: Path) -> Experiment:
    """Read and check catalog entry ``name``: keys, sizes, plot kinds, and each claim's syntax."""
    path = directory / f"{name}.toml"
    if path.exists() and not path.is_file():
        raise ScenarioError(f"{path}: not a regular file; a catalog entry is a TOML file")
    if not path.is_file():
        names = ", ".join(p.stem for p in sorted(directory.glob("*.toml"))) or "none"
        raise ScenarioError(
            f"unknown experiment `{name}`; the catalog {directory} has: {names} "
            "(ccsim reproduce --list)"
        )
    data = read_toml(path)
    src = str(path)
    _check_keys(data, ENTRY_KEYS, src)
    for key in ("title", "paper", "figure"):
        if not isinstance(data.get(key), str):
            raise ScenarioError(f'{src}: {key}: required, a string, e.g. {key} = "..."')
    if not isinstance(data.get("sweep"), Mapping):
        raise ScenarioError(f'{src}: [sweep]: required, with base = "scenario.toml" and a [grid]')
    sizes = {}
    for size in SIZES:
        table = data.get(size, {})
        if not isinstance(table, Mapping):
            raise ScenarioError(f"{src}: [{size}]: expected a table with set and grid")
        _check_keys(table, SIZE_KEYS, f"{src}: [{size}]")
        for key, value in table.items():
            if not isinstance(value, Mapping):
                raise ScenarioError(
                    f"{src}: [{size}] {key}: expected a table, e.g. [{size}.{key}] or "
                    f"{key} = {{ ... }}; got `{value!r}`"
                )
        sizes[size] = dict(table)
    plots = data.get("plots", [])
    for kind in plots:
        if kind not in PLOT_KINDS:
            raise ScenarioError(
                f"{src}: plots: unknown plot kind `{kind}`; use any of {', '.join(PLOT_KINDS)}"
            )
    style = data.get("style", "screen")
    if style not in STYLES:
        raise ScenarioError(f"{src}: style: `{style}`; use one of {', '.join(STYLES)}")
    claims = []
    for i, c in enumerate(data.get("claim", [])):
        where = f"{src}: claim {i + 1}"
        _check_keys(c, CLAIM_KEYS, where)
        if not isinstance(c.get("text"), str) or not isinstance(c.get("check"), str):
            raise ScenarioError(f'{where}: give text = "the paper says ..." and check = "..."')
        parse_check(c["check"], where)
        if c.get("size", SIZES[0]) not in SIZES:
            raise ScenarioError(f"{where}: size: `{c['size']}`; use {' or '.join(SIZES)}")
        claims.append(Claim(c["text"], c["check"], c.get("size")))
    reference = {}
    cases = {c for t in (data["sweep"], *sizes.values()) for c in t.get("cases", {})}
    for case, folder in data.get("reference", {}).items():
        ref = path.parent / str(folder)
        if case not in cases or not ref.is_dir():
            raise ScenarioError(
                f"{src}: reference.{case}: name a case of the sweep and a folder of the "
                f"HPCC simulator's output, relative to {src}"
            )
        reference[case] = ref
    return Experiment(
        name=name,
        path=path,
        title=data["title"],
        paper=data["paper"],
        figure=data["figure"],
        description=data.get("description", ""),
        plots=list(plots),
        sweep_table=dict(data["sweep"]),
        style=style,
        labels=FlowLabels.from_table(data.get("labels", {}), f"{src}: [labels]"),
        sizes=sizes,
        claims=claims,
        reference=reference,
    )


def _check_keys(table: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ScenarioError(f"{where}: unknown key `{unknown[0]}`; use {', '.join(allowed)}")


# --- claims --------------------------------------------------------------------------------------


@dataclass
class ClaimResult:
    """A claim's verdict (holds / fails / error), the value of each metric call, and why."""

    claim: Claim
    status: str
    measured: list[tuple[str, Any]]
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.claim.text,
            "check": self.claim.check,
            "status": self.status,
            "measured": [[expr, plain_value(v)] for expr, v in self.measured],
            "message": self.message,
        }


def check_claims(
    claims: Sequence[Claim], res: SweepResult, reference: Mapping[str, Path] | None = None
) -> list[ClaimResult]:
    """Evaluate every claim over ``res`` (``reference``: the entry's, for ``ref_gap``); a claim
    that cannot be measured is an ``error``."""
    out = []
    for claim in claims:
        ev = _Evaluator(res, reference or {})
        try:
            value = ev.eval(parse_check(claim.check, claim.text).body)
        except ClaimError as e:
            out.append(ClaimResult(claim, ERROR, ev.measured, str(e)))
            continue
        except (ArithmeticError, ValueError, TypeError) as e:  # e.g. 1/0: this claim only
            why = f"cannot be evaluated: {type(e).__name__}: {e}"
            out.append(ClaimResult(claim, ERROR, ev.measured, why))
            continue
        if not isinstance(value, bool):
            out.append(
                ClaimResult(claim, ERROR, ev.measured, f"check gave {value!r}, not a verdict")
            )
            continue
        out.append(ClaimResult(claim, HOLDS if value else FAILS, ev.measured))
    return out


def check_claim_arguments(claims: Sequence[Claim], params: Sequence[str], src: str) -> None:
    """Before anything runs: every call in the claims' checks takes the arguments given, and a
    filter (``scheme='dcqcn'``) names a parameter of the sweep (full or short name), so a typo
    fails at once and not after the whole entry has run. Raises ScenarioError naming the claim.
    """
    import inspect

    known = {*params, *short_names(params).values()}
    for claim in claims:
        for node in ast.walk(parse_check(claim.check, f"{src}: claim")):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            name = node.func.id
            sig = inspect.signature(FUNCTIONS[name])
            keywords = {k.arg: None for k in node.keywords if k.arg is not None}
            if name == "ref_gap":
                keywords["reference"] = None  # given by the entry's [reference]
            where = f"{src}: claim `{claim.text[:60]}`: {ast.unparse(node)}"
            try:
                sig.bind(None, *node.args, **keywords)
            except TypeError as e:
                raise ScenarioError(f"{where}: {e}") from None
            own = [p for p in list(sig.parameters)[1:] if p != "where"]
            for key in keywords:
                if key not in sig.parameters and key not in known:
                    raise ScenarioError(
                        f"{where}: `{key}` is neither an argument of {name} ({', '.join(own)}) "
                        f"nor a parameter of the sweep ({', '.join(sorted(known)) or 'none'})"
                    )


def parse_check(check: str, where: str) -> ast.Expression:
    """Parse a check and allow only the claim language (raises ScenarioError naming ``where``)."""
    try:
        tree = ast.parse(check, mode="eval")
    except SyntaxError as e:
        raise ScenarioError(f"{where}: check: {e.msg} in `{check}`; fix the expression") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise ScenarioError(
                f"{where}: check: `{type(node).__name__}` is not allowed; a check is numbers, "
                f"strings, arithmetic, comparisons, and/or/not and calls to {', '.join(FUNCTIONS)}"
            )
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                name = ast.unparse(node.func)
                raise ScenarioError(
                    f"{where}: check: unknown function `{name}`; use {', '.join(FUNCTIONS)}"
                )
            if any(k.arg is None for k in node.keywords):
                raise ScenarioError(f"{where}: check: write keyword arguments as name=value")
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS:
            raise ScenarioError(
                f"{where}: check: unknown name `{node.id}`; metrics are function calls, "
                f"e.g. stat('pfc.pauses_sent')"
            )
    return tree


_ALLOWED_NODES = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Compare,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.Eq,
    ast.NotEq,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.keyword,
    ast.Constant,
)
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


class _Evaluator:
    """Walks a parsed check; records each metric call's value in :attr:`measured`."""

    def __init__(self, res: SweepResult, reference: Mapping[str, Path]) -> None:
        self.res = res
        self.reference = reference
        self.measured: list[tuple[str, Any]] = []

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BoolOp):
            values = [self.eval(v) for v in node.values]  # all measured, for the report
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand)
            return (
                (not v)
                if isinstance(node.op, ast.Not)
                else (-v if isinstance(node.op, ast.USub) else v)
            )
        if isinstance(node, ast.BinOp):
            left, right = self.eval(node.left), self.eval(node.right)
            for v in (left, right):  # 'x' * 10000000000 would fill the memory
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ClaimError(f"`{ast.unparse(node)}`: arithmetic takes numbers, not {v!r}")
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.Compare):
            left, ok = self.eval(node.left), True
            for op, comp in zip(node.ops, node.comparators):
                right = self.eval(comp)
                ok = ok and bool(_COMPARE[type(op)](left, right))
                left = right
            return ok
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg is not None}
            if node.func.id == "ref_gap":
                kwargs["reference"] = self.reference
            try:
                value = FUNCTIONS[node.func.id](self.res, *args, **kwargs)
            except TypeError as e:
                raise ClaimError(f"{ast.unparse(node)}: {e}") from None
            self._record(ast.unparse(node), value)
            if node.func.id in _FCT_FUNCTIONS or (
                node.func.id == "stat" and args and str(args[0]).startswith("fct.")
            ):
                self._completion(node.func.id, kwargs)
            return value
        raise ClaimError(f"cannot evaluate `{ast.unparse(node)}`")  # parse_check forbids it

    def _completion(self, name: str, kwargs: Mapping[str, Any]) -> None:
        """Beside an FCT, what it leaves out: the unfinished flows and the bytes delivered of
        the same runs (an FCT counts finished flows only)."""
        import inspect

        own = inspect.signature(FUNCTIONS[name]).parameters
        where = {k: v for k, v in kwargs.items() if k not in own}
        runs = select_runs(self.res, where).ok_runs
        cols = ("flows.unfinished", "flows.total", "flows.payload_bytes_delivered")
        if not all(c in runs.columns for c in cols):
            return
        label = ", ".join(f"{k}={v!r}" for k, v in where.items()) or "all runs"
        unfinished, total = int(runs[cols[0]].sum()), int(runs[cols[1]].sum())
        delivered = f"{runs[cols[2]].sum() / 1e9:.3g} GB delivered"
        self._record(f"unfinished flows ({label})", f"{unfinished} of {total}, {delivered}")

    def _record(self, expr: str, value: Any) -> None:
        """Keep a measured value for the report, once (a check may call a measure twice)."""
        if not any(e == expr for e, _ in self.measured):
            self.measured.append((expr, value))


#: Measures of finished flows only: the claim report adds the unfinished flows beside them.
_FCT_FUNCTIONS = ("fct_us", "completion_rate")


def ref_gap(
    res: SweepResult,
    metric: str,
    reference: Mapping[str, Path],
    absolute: bool = False,
    agg: str = "max",
    **where: Any,
) -> float:
    """The relative gap |ccsim - HPCC simulator| / simulator of ``metric`` (a row of
    ``reference_tables``, e.g. ``'slowdown_p99 <100KB'``) in each matching run, against its
    case's reference run (``absolute=True``: |ccsim - simulator| in the metric's unit, for
    values near zero); aggregated with ``agg`` (default: the worst)."""
    sel = select_runs(res, where)
    gaps = []
    for _, run in sel.ok_runs.iterrows():
        case = run.get(CASE)
        if case not in reference:
            raise ClaimError(f"ref_gap: case `{case}` has no [reference] run in the entry")
        rows = {m: (r, c, g) for m, r, c, g in _reference_rows(sel, run, reference[case])}
        if metric not in rows:
            raise ClaimError(f"ref_gap: no `{metric}` to compare; there are {', '.join(rows)}")
        r, c, g = rows[metric]
        gaps.append(abs(c - r) if absolute else abs(g))
    return aggregate(gaps, agg, "ref_gap")


def reference_tables(res: SweepResult, reference: Mapping[str, Path]) -> str:
    """Each run with a reference beside it: metric, the simulator's value, ccsim's, the gap."""
    out = []
    for _, run in res.ok_runs.iterrows():
        case = run.get(CASE)
        if case in reference:
            title = f"{case}: ccsim vs the HPCC simulator ({reference[case].name})"
            out.append(fidelity.format_table(title, _reference_rows(res, run, reference[case])))
    return "\n".join(out)


def _reference_rows(res: SweepResult, run: Any, folder: Path) -> list[Any]:
    one = res.where({CASE: run[CASE]}) if CASE in res.params else res
    one = one.where({p: run[p] for p in res.params if p != CASE})
    return fidelity.gaps(fidelity.reference(folder), fidelity.ccsim_run(one, run["scheme"]))


#: The functions a claim's check may call: the measures and the comparison with the reference.
FUNCTIONS: dict[str, Callable[..., Any]] = {**MEASURES, "ref_gap": ref_gap}
