"""What the Python API returns: plain result objects for scripts and notebooks.

Each result holds plain data (names, numbers in display units, unit texts,
booleans, strings), prints as the terminal prints it (``repr``), shows as an
HTML table in a notebook (``_repr_html_``) and becomes a pandas DataFrame with
``to_pandas()`` when pandas is installed (``pip install pandas``;
it is optional, and this is its one home). ``to_records()`` gives the rows
as dicts for anything else.

The API door (:mod:`planner.plan`) builds them from the questions' results.
"""

from __future__ import annotations

import operator
from fractions import Fraction

from ..compute.evaluation import format_value
from ..language.lazy import field  # dataclasses.field, for the classes made on first use
from ..language.lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Iterator, Optional, Sequence

Number = float | bool


# ---- a number with its unit -----------------------------------------------------

def _ordering(order):
    """``Value``'s ``<``, ``<=``, ``>`` or ``>=``: the two numbers once in the left value's unit."""
    def compare(self: "Value", other: Any) -> bool:
        n = self._same(other, "compare")
        return NotImplemented if n is NotImplemented else order(_number(self), n)
    return compare


@dataclass(frozen=True)
class Value:
    """A number with its unit, as a plan writes it: ``Value(4.8, "TB/s")``.

    Results give values in the quantity's display unit; an override may be a
    ``Value`` (or the text ``"4.8 TB/s"``). ``float(v)`` is the number,
    ``str(v)`` the number to 6 significant digits with its unit. A ``first(...)`` that finds nothing is
    ``Value.never(unit)``: ``str(v)`` is ``never``, ``v.is_never`` is true, ``float(v)`` is nan, and
    arithmetic or order on it is an error (it has no number)."""

    number: Number
    unit: str = ""
    is_never: bool = False  # a `first(...)` that found nothing ("never"): no number

    @classmethod
    def never(cls, unit: str = "") -> "Value":
        """The value of a ``first(...)`` that finds nothing, shown as ``never`` (as ``planner eval`` shows it)."""
        return cls(float("nan"), unit, True)

    def __float__(self) -> float:
        return float(self.number)

    # ---- units: conversion, arithmetic and order, checked ------------------------------------
    # A unit's text is read as a plan reads the unit after a number (``TB/s``, ``USD/month``); a
    # name planner does not know (a unit the plan declared) is a dimension of its own, so values
    # in it add and compare with each other, and converting it to anything else is refused.

    def to(self, unit: str) -> "Value":
        """This value in another unit of the same dimension: ``Value(4.8, "TB/s").to("GB/ms")``."""
        scale, dim = _unit(self.unit)
        other_scale, other_dim = _unit(unit)
        if dim != other_dim:
            from ..language.errors import UnitError

            raise UnitError(f"cannot convert {self.unit or 'a plain number'} to {unit or 'a plain number'}: "
                            f"{_what(dim)} is not {_what(other_dim)}")
        return Value(_number(self) * float(scale / other_scale), unit)

    def _same(self, other: Any, what: str) -> float:
        """``other``'s number in this value's unit (a plain number only where this one has no unit)."""
        if isinstance(other, Value):
            return _number(other.to(self.unit)) if other.unit != self.unit else _number(other)
        if isinstance(other, (int, float, Fraction)) and not isinstance(other, bool):
            if self.unit and _unit(self.unit)[1] != _unit("")[1]:
                from ..language.errors import UnitError

                raise UnitError(f"cannot {what} {self} and the plain number {other}: give it a unit, "
                                f"planner.Value({other}, {self.unit!r})")
            return float(other) / float(_unit(self.unit)[0])
        return NotImplemented

    def __add__(self, other: Any) -> "Value":
        n = self._same(other, "add")
        return NotImplemented if n is NotImplemented else Value(_number(self) + n, self.unit)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "Value":
        n = self._same(other, "subtract")
        return NotImplemented if n is NotImplemented else Value(_number(self) - n, self.unit)

    def __rsub__(self, other: Any) -> "Value":
        n = self._same(other, "subtract")
        return NotImplemented if n is NotImplemented else Value(n - _number(self), self.unit)

    def __mul__(self, other: Any) -> "Value":
        if isinstance(other, Value):
            return Value(_number(self) * _number(other), _combine(self.unit, other.unit, 1))
        if isinstance(other, (int, float, Fraction)) and not isinstance(other, bool):
            return Value(_number(self) * float(other), self.unit)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> "Value":
        if isinstance(other, Value):
            return Value(_number(self) / _number(other), _combine(self.unit, other.unit, -1))
        if isinstance(other, (int, float, Fraction)) and not isinstance(other, bool):
            return Value(_number(self) / float(other), self.unit)
        return NotImplemented

    def __rtruediv__(self, other: Any) -> "Value":
        if isinstance(other, (int, float, Fraction)) and not isinstance(other, bool):
            return Value(float(other) / _number(self), _combine("", self.unit, -1))
        return NotImplemented

    def __pow__(self, p: int) -> "Value":
        if not isinstance(p, int) or isinstance(p, bool):
            return NotImplemented
        return Value(_number(self) ** p, _combine("", self.unit, p) if p != 1 else self.unit)

    def __neg__(self) -> "Value":
        return Value(-_number(self), self.unit)

    def __abs__(self) -> "Value":
        return Value(abs(_number(self)), self.unit)

    __lt__ = _ordering(operator.lt)
    __le__ = _ordering(operator.le)
    __gt__ = _ordering(operator.gt)
    __ge__ = _ordering(operator.ge)

    def isclose(self, other: "Value", rel: float = 1e-9) -> bool:
        """Whether two values are equal within ``rel`` once in the same unit (``==`` compares number and unit text)."""
        n = self._same(other, "compare")
        a = _number(self)
        return abs(a - n) <= rel * max(abs(a), abs(n))

    def __bool__(self) -> bool:
        return bool(self.number)

    def __str__(self) -> str:
        return NEVER if self.is_never else format_value(self.number, self.unit)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        return html.escape(str(self))

    def __format__(self, spec: str) -> str:
        if not spec or self.is_never:
            return str(self)
        text = format(self.number, spec)
        return f"{text} {self.unit}".strip()

    def plan_text(self) -> str:
        """The value in plan syntax, at full precision (``4.8 TB/s``, ``true``, ``never``)."""
        if self.is_never:
            return NEVER
        if isinstance(self.number, bool):
            return "true" if self.number else "false"
        return f"{number_text(self.number)} {self.unit}".strip()


def number_text(value: Any) -> str:
    """A number in plan syntax at full precision: whole numbers as they are, else a float's shortest
    digits (``0.8``)."""
    if isinstance(value, Fraction):
        return str(value) if value.denominator == 1 else repr(float(value))
    return str(value) if isinstance(value, int) else repr(float(value))


NEVER = "never"  # a `first(...)` that found nothing, as every output shows it


def _number(v: "Value") -> float:
    if v.is_never:
        raise ValueError(f"a value that is {NEVER} (a `first(...)` that found nothing) has no number: "
                         "test `v.is_never` first")
    if isinstance(v.number, bool):
        raise TypeError(f"{v} is a truth value, not a number: no arithmetic on it")
    return float(v.number)


def _unit(text: str):
    """(scale to base units, dimension) of a unit's text; unknown names are dimensions of their own."""
    from ..language.errors import PlanError
    from ..language.lower import unit_from_text
    from ..language.source import Source
    from ..language.units import BUILTIN_UNITS, DIMENSIONLESS, Dim

    scale, dim = Fraction(1), DIMENSIONLESS
    text = text.strip()
    if not text:
        return scale, dim
    try:
        factors = unit_from_text(text, Source("<unit>", text), 0).factors
    except (PlanError, ValueError):
        factors = ()
    import re

    if not factors or any(not re.fullmatch(r"[^\W\d]\w*|%", f.name) for f in factors):
        from ..language.errors import UnitError

        raise UnitError(f"`{text}` is not a unit (write it as after a number in a plan: `TB/s`, `USD/month`)")
    for f in factors:
        unit = BUILTIN_UNITS.get(f.name)
        if unit is None:
            scale_f, dim_f = Fraction(1), Dim.of({f.name: 1})
        else:
            scale_f, dim_f = unit.scale, unit.dim
        scale *= scale_f ** f.power
        dim = dim * dim_f ** f.power
    return scale, dim


def _what(dim) -> str:
    return "a plain number" if dim.dimensionless else dim.describe()


def _combine(a: str, b: str, sign: int) -> str:
    """The unit text of a product (``sign`` 1), a quotient (-1) or a power (``sign`` p, ``a`` empty)."""
    from ..language.lower import unit_from_text
    from ..language.source import Source

    powers: dict[str, int] = {}
    for text, k in ((a, 1), (b, sign)):
        if text.strip():
            for f in unit_from_text(text.strip(), Source("<unit>", text.strip()), 0).factors:
                powers[f.name] = powers.get(f.name, 0) + f.power * k
    up = [n + (f"^{p}" if p != 1 else "") for n, p in powers.items() if p > 0]
    down = [n + (f"^{-p}" if p != -1 else "") for n, p in powers.items() if p < 0]
    if not up and down:  # a unit in the denominator only: `s^-1`
        return "*".join(f"{n}^{p}" for n, p in powers.items() if p)
    return "*".join(up) + "".join("/" + d for d in down)


def _plain(v: Any) -> Any:
    """Numbers as Python floats/bools (never numpy scalars), for records and DataFrames."""
    if isinstance(v, Value):
        return v.number
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, float, Fraction)):
        return float(v)
    if hasattr(v, "item"):  # numpy scalars
        return v.item()
    return v


# ---- tables -----------------------------------------------------------------------------

class _Rows:
    """Shared by the results: a sequence of row dataclasses (of type ``ROW``) with text, HTML and DataFrame
    forms; ``results[i]`` is a row, ``results[name]`` what :meth:`_named` finds. Each defines ``_table()``:
    (headers, rows of text, title, which columns are numbers), one table for HTML and Markdown."""

    ROW: type = object

    def __init__(self, rows: list, text: str, title: str = "") -> None:
        self.rows = rows
        self._text = text
        self.title = title

    def __getitem__(self, key):
        return self.rows[key] if isinstance(key, int) else self._named(key)

    def _named(self, key):
        raise KeyError(key)

    def __iter__(self) -> Iterator:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return self._text

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per row: plain names, numbers (in display units), units and texts."""
        from dataclasses import asdict

        return [{k: _plain(v) for k, v in asdict(r).items()} for r in self.rows]

    def to_pandas(self):
        """The rows as a pandas DataFrame (pandas is optional: ``pip install pandas``)."""
        return _pandas().DataFrame.from_records(self.to_records(), columns=self._columns())

    def _columns(self) -> list[str]:
        from dataclasses import fields

        return [f.name for f in fields(self.ROW)]

    def _repr_html_(self) -> str:
        return html_table(*self._table())

    def _repr_markdown_(self) -> str:
        headers, rows, title, _ = self._table()
        return markdown_table(headers, rows, title)


def _pandas():
    """pandas, which is optional: ``to_pandas()`` says how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install pandas") from None
    return pandas


def markdown_table(headers: list[str], rows: list[list[str]], title: str = "") -> str:
    """A GitHub-style Markdown table: each cell plain text by the report's escaping rule
    (:func:`planner.outputs.markup.text`), `|` escaped, on one line."""
    from .markup import text

    def cell(x: str) -> str:
        return text(str(x)).replace("|", "\\|").replace("\n", " ")

    out = [f"**{cell(title)}**", ""] if title else []
    out.append("| " + " | ".join(cell(h) for h in headers) + " |")
    out.append("|" + "---|" * len(headers))
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_value(v)
    return str(v)


PASS_STYLE = "color:#1a7f37;font-weight:bold"
FAIL_STYLE = "color:#cf222e;font-weight:bold"


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]], title: str = "",
               numeric: Sequence[bool] = ()) -> str:
    """A small, self-contained HTML table (escaped; ``pass``/``FAIL`` cells coloured)."""
    import html

    out = ["<div>"]
    if title:
        out.append(f"<p><b>{html.escape(title)}</b></p>")
    out.append('<table style="border-collapse:collapse">')
    out.append("<thead><tr>" + "".join(f'<th style="text-align:left;padding:2px 8px">{html.escape(h)}</th>'
                                       for h in headers) + "</tr></thead><tbody>")
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            style = "padding:2px 8px;vertical-align:top"
            if i < len(numeric) and numeric[i]:
                style += ";text-align:right;font-variant-numeric:tabular-nums"
            if cell == "pass":
                style += ";" + PASS_STYLE
            elif cell == "FAIL":
                style += ";" + FAIL_STYLE
            cells.append(f'<td style="{style}">{html.escape(cell)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


# ---- eval -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class QuantityRow:
    """One quantity: its values per scenario (display unit), unit, doc, tags and formula."""

    name: str
    kind: str  # "input" | "derived"
    unit: str
    values: dict[str, Number]  # scenario label -> value in the display unit
    doc: Optional[str]
    tags: tuple[str, ...]
    formula: str
    overridden: bool = False  # some scenario or override changed this input
    never: frozenset = frozenset()  # the scenarios where it is a `first(...)` that found nothing


class EvalResult(_Rows):
    """Every quantity per scenario. ``result["step_time"]`` is a :class:`Value`
    (a dict scenario -> Value when several scenarios were evaluated);
    ``result["step_time", "fp8"]`` and ``result.value("step_time", "fp8")`` pick one."""

    ROW = QuantityRow

    def __init__(self, title: str, path: str, scenarios: list[str], rows: list[QuantityRow], text: str,
                 series: Optional["SeriesResult"] = None,
                 styles: Optional[dict] = None) -> None:
        super().__init__(rows, text, title)
        self.path = path
        self.scenarios = scenarios
        self.series = series  # the plan's series over periods, if it has any (SeriesResult)
        self._by_name = {r.name: r for r in rows}
        self._styles = styles or {}  # each quantity's one number style, as the terminal's table writes it

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rows]

    def row(self, name: str) -> QuantityRow:
        if name not in self._by_name:
            from ..language.errors import UnknownNameError, suggest

            guess = suggest(name, self._by_name)
            raise UnknownNameError(f"no quantity `{name}` in {self.path}",
                                   hint=f"did you mean `{guess}`?" if guess else None)
        return self._by_name[name]

    def value(self, name: str, scenario: Optional[str] = None) -> Value:
        r = self.row(name)
        if scenario is None:
            if len(self.scenarios) != 1:
                from ..language.errors import UsageError

                raise UsageError(f"{len(self.scenarios)} scenarios were evaluated: say which",
                                 hint=f"result.value({name!r}, {self.scenarios[0]!r}); scenarios: "
                                      + ", ".join(self.scenarios))
            scenario = self.scenarios[0]
        if scenario not in r.values:
            from ..language.errors import ScenarioError, suggest

            guess = suggest(scenario, self.scenarios)
            raise ScenarioError(f"scenario `{scenario}` was not evaluated",
                                hint=(f"did you mean `{guess}`? " if guess else "") + "evaluated: "
                                + ", ".join(self.scenarios))
        return Value.never(r.unit) if scenario in r.never else Value(r.values[scenario], r.unit)

    def __getitem__(self, key):
        if isinstance(key, tuple):
            return self.value(*key)
        if isinstance(key, int):
            return self.rows[key]
        if len(self.scenarios) == 1:
            return self.value(key)
        return {s: self.value(key, s) for s in self.scenarios}

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per quantity and scenario (the long form): ``quantity``, ``scenario``, ``value``, ``unit``..."""
        return [{"quantity": r.name, "scenario": s, "value": NEVER if s in r.never else _plain(v), "unit": r.unit,
                 "kind": r.kind, "doc": r.doc, "tags": list(r.tags)} for r in self.rows for s, v in r.values.items()]

    def to_pandas(self):
        """A DataFrame indexed by quantity: one column per scenario (display units), then unit, kind and doc."""
        pandas = _pandas()
        data = {s: [NEVER if s in r.never else _plain(r.values[s]) for r in self.rows] for s in self.scenarios}
        data.update(unit=[r.unit for r in self.rows], kind=[r.kind for r in self.rows],
                    doc=[r.doc or "" for r in self.rows])
        frame = pandas.DataFrame(data, index=pandas.Index(self.names, name="quantity"))
        frame.attrs["units"] = {r.name: r.unit for r in self.rows}  # quantity -> its display unit
        frame.attrs["title"] = self.title
        return frame

    def _table(self) -> tuple:
        headers = ["quantity"] + self.scenarios + ["unit", "notes", "description"]
        rows = []
        for r in self.rows:
            notes = (["input*" if r.overridden else "input"] if r.kind == "input" else []) + list(r.tags)
            style = self._styles.get(r.name)
            rows.append([r.name] + [NEVER if s in r.never else
                                    style.text(r.values[s]) if style is not None and not isinstance(r.values[s], str)
                                    else format_value(r.values[s]) for s in self.scenarios]
                        + [r.unit, ", ".join(notes), r.doc or ""])
        numeric = [False] + [True] * len(self.scenarios)
        return (headers, rows, self.title, numeric)


class SeriesResult:
    """The series of an evaluation (quantities with a value per period), in display units:
    ``result.series["cash"]`` is a list of numbers, one per period (a dict scenario -> list when several
    scenarios were evaluated); ``to_pandas()`` a DataFrame indexed by period (its unit's name, such as
    ``month``), a column per series (per scenario and series when there are several scenarios)."""

    def __init__(self, period_unit: str, periods: dict[str, list[float]], values: dict[str, dict[str, list]],
                 units: dict[str, str]) -> None:
        self.period_unit = period_unit
        self.periods = periods  # scenario -> each period in the period unit (1, 2, ... for months)
        self.values = values  # scenario -> series -> values (display unit; nan where a period has none)
        self.units = units
        self.scenarios = list(values)

    @property
    def names(self) -> list[str]:
        return list(self.units)

    def __getitem__(self, name: str):
        if len(self.scenarios) == 1:
            return self.values[self.scenarios[0]][name]
        return {s: self.values[s][name] for s in self.scenarios}

    def __contains__(self, name: str) -> bool:
        return name in self.units

    def __repr__(self) -> str:
        return f"<series {', '.join(self.names)} over {len(next(iter(self.periods.values()), []))} periods>"

    def to_records(self) -> list[dict[str, Any]]:
        """The long form: one dict per scenario, series and period."""
        return [{"scenario": s, "series": n, "period": p, "value": _plain(v), "unit": self.units[n]}
                for s in self.scenarios for n in self.names
                for p, v in zip(self.periods[s], self.values[s][n])]

    def to_pandas(self):
        """A DataFrame indexed by period, a column per series (per scenario and series, as a two-level header,
        when several scenarios were evaluated); ``attrs["units"]`` gives each series' unit."""
        pandas = _pandas()
        first = self.scenarios[0]
        index = pandas.Index(self.periods[first], name=self.period_unit or "period")
        if len(self.scenarios) == 1:
            frame = pandas.DataFrame({n: self.values[first][n] for n in self.names}, index=index)
        else:
            columns = pandas.MultiIndex.from_tuples([(s, n) for s in self.scenarios for n in self.names],
                                                    names=["scenario", "series"])
            frame = pandas.DataFrame([[self.values[s][n][i] for s in self.scenarios for n in self.names]
                                      for i in range(len(index))], index=index, columns=columns)
        frame.attrs["units"] = dict(self.units)
        return frame


# ---- check ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckRow:
    check: str  # as written
    line: int
    scenario: Optional[str]
    passed: bool
    actual: Optional[Value]
    expected: Optional[Value]
    tolerance: str
    error: Optional[str]
    overrides: dict[str, str] = field(default_factory=dict)  # `with` inputs, as written
    describe: str = ""  # one line, as `planner check` prints a failure


class CheckResults(_Rows):
    """Every ``check`` per scenario. ``ok`` when all pass; ``failures`` lists the others."""

    ROW = CheckRow

    def __init__(self, path: str, rows: list[CheckRow], text: str) -> None:
        super().__init__(rows, text, f"checks of {path}")
        self.path = path

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.rows)

    @property
    def failed(self) -> int:
        return len(self.rows) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0

    @property
    def failures(self) -> list[CheckRow]:
        return [r for r in self.rows if not r.passed]

    def _table(self) -> tuple:
        headers = ["", "check", "scenario", "actual", "expected", "tolerance", "line"]
        rows = [["pass" if r.passed else "FAIL", r.check, r.scenario or "", "" if r.actual is None else str(r.actual),
                 "" if r.expected is None else str(r.expected), r.tolerance, str(r.line)] for r in self.rows]
        title = f"{self.passed} passed, {self.failed} failed ({self.path})"
        return (headers, rows, title, [False, False, False, True, True])


# ---- solve ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SolveRow:
    question: str  # as written
    alias: Optional[str]
    scenario: str
    target: str
    mode: str  # "root" | "min" | "max" | "maximize" | "minimize"
    value: Value  # the answer, in the target's display unit
    optimum: Optional[Value]  # the objective at the answer (maximize/minimize)
    closed_form: Optional[str]  # in plan syntax, over the other inputs as shown (their display units)
    closed_form_latex: Optional[str]
    method: str
    verification: str
    notes: tuple[str, ...] = ()


class SolveResults(_Rows):
    """The answers, one per question and scenario. ``results["breakeven_alpha"]`` is the
    answer named so (a dict scenario -> Value when it was asked in several scenarios);
    ``errors`` holds the questions that have no answer (each a :class:`planner.PlanError`)."""

    ROW = SolveRow

    def __init__(self, path: str, rows: list[SolveRow], errors: list, text: str) -> None:
        super().__init__(rows, text, f"answers of {path}")
        self.path = path
        self.errors = errors

    def _named(self, key):
        name, scenario = key if isinstance(key, tuple) else (key, None)
        found = [r for r in self.rows if name in (r.alias, r.target)]
        if scenario is not None:
            found = [r for r in found if r.scenario == scenario]
        if not found:
            raise KeyError(f"no answer named `{name}`" + (f" in `{scenario}`" if scenario else "")
                           + "; answers: " + ", ".join(sorted({r.alias or r.target for r in self.rows})))
        if len(found) == 1:
            return found[0].value
        return {r.scenario: r.value for r in found}

    def _table(self) -> tuple:
        headers = ["question", "scenario", "answer", "method", "verified", "closed form"]
        rows = [[r.question, r.scenario, str(r.value) + (f" ({r.optimum} at the optimum)" if r.optimum else ""),
                 r.method, r.verification, r.closed_form or ""] for r in self.rows]
        rows += [[e.message, "", "no answer", e.family, "", ""] for e in self.errors]
        return (headers, rows, self.title, [False, False, True])


# ---- sweep ------------------------------------------------------------------------------------

@dataclass
class SweepTable(_Rows):
    """One sweep in one scenario: a row per point (display units), ``None`` where a point has no value,
    ``never`` where a `first(...)` finds nothing."""

    sweep: str
    scenario: str
    columns: list[str]
    units: dict[str, str]
    rows: list[dict[str, Optional[Number]]]
    issues: list[str]  # each point with a problem, explained (the first 20)
    points_with_issues: int = 0
    _text: str = ""

    def __repr__(self) -> str:  # (the data class's own otherwise)
        return self._text

    def column(self, name: str) -> list[Optional[Number]]:
        return [r[name] for r in self.rows]

    def to_records(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.rows]

    def to_pandas(self):
        frame = _pandas().DataFrame.from_records(self.to_records(), columns=self.columns)
        frame.attrs["units"] = dict(self.units)  # column -> its unit ("" for none)
        frame.attrs["title"] = f"{self.sweep} [{self.scenario}]"
        return frame

    def _table(self) -> tuple:
        headers = [f"{c} ({self.units[c]})" if self.units[c] else c for c in self.columns]
        rows = [[_cell(r[c]) for c in self.columns] for r in self.rows]
        title = f"{self.sweep} [{self.scenario}]"
        if self.points_with_issues:
            title += f" ({self.points_with_issues} points with issues)"
        return (headers, rows, title, [True] * len(self.columns))


class SweepResults(_Rows):
    """The sweeps, one table per sweep and scenario (``results[0]``)."""

    def to_records(self) -> list[dict[str, Any]]:
        return [{"sweep": t.sweep, "scenario": t.scenario, **r} for t in self.rows for r in t.rows]

    def _columns(self) -> list[str]:
        cols = ["sweep", "scenario"]
        for t in self.rows:
            cols += [c for c in t.columns if c not in cols]
        return cols

    def _repr_html_(self) -> str:
        return "".join(t._repr_html_() for t in self.rows)

    def _repr_markdown_(self) -> str:
        return "\n\n".join(t._repr_markdown_() for t in self.rows)


# ---- sensitivity ------------------------------------------------------------------------------

@dataclass(frozen=True)
class SensitivityRow:
    quantity: str
    scenario: str
    input: str
    value: Value  # the input's value
    elasticity: Optional[float]  # a 1% rise in the input moves the quantity by about this many %
    derivative: Optional[float]  # d quantity / d input, display units
    method: str
    note: str = ""


class SensitivityResults(_Rows):
    """The elasticity of a quantity to each input it depends on, per scenario, largest effect first."""

    ROW = SensitivityRow

    def __init__(self, quantity: str, rows: list[SensitivityRow], text: str) -> None:
        super().__init__(rows, text, f"sensitivity of {quantity}")
        self.quantity = quantity

    def _named(self, key):
        found = [r for r in self.rows if r.input == key]
        if not found:
            raise KeyError(f"`{self.quantity}` does not depend on `{key}`")
        return found[0].elasticity if len(found) == 1 else {r.scenario: r.elasticity for r in found}

    def _table(self) -> tuple:
        headers = ["scenario", "input", "value", "elasticity", "method"]
        rows = [[r.scenario, r.input, str(r.value), "n/a" if r.elasticity is None else f"{r.elasticity:+.4f}",
                 r.method + (f" ({r.note})" if r.note else "")] for r in self.rows]
        return (headers, rows, self.title, [False, False, True, True])


# ---- simulate ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SimulationRow:
    quantity: str
    scenario: str
    unit: str
    point: Optional[float]  # the value as written (the point values of the uncertain inputs)
    mean: Optional[float]
    sd: Optional[float]
    percentiles: dict  # "p5", "p50", "p95" ... -> value, display units
    never: Optional[float] = None  # a `first(...)`: the share of samples where it finds nothing


class SimulationResults(_Rows):
    """Each quantity's figures over the samples (display units), per scenario, as `planner simulate`
    prints them."""

    ROW = SimulationRow

    def __init__(self, rows: list[SimulationRow], text: str) -> None:
        super().__init__(rows, text, "simulation")

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per quantity and scenario; a `first(...)` that finds nothing at the point values has
        ``point`` ``never``, as `planner simulate` shows it."""
        return [{**r, "point": NEVER} if r["never"] is not None and r["point"] is not None and r["point"] != r["point"]
                else r for r in super().to_records()]

    def _named(self, key):
        found = [r for r in self.rows if r.quantity == key]
        if not found:
            raise KeyError(f"no simulated quantity `{key}`; simulated: " + ", ".join(dict.fromkeys(
                r.quantity for r in self.rows)))
        return found[0] if len(found) == 1 else {r.scenario: r for r in found}

    def _table(self) -> tuple:
        levels = list(self.rows[0].percentiles) if self.rows else []
        headers = ["scenario", "quantity", "point", "mean", "sd", *levels, "unit"]
        num = lambda v: "n/a" if v is None or v != v else f"{v:.6g}"  # noqa: E731
        # a `first(...)` that finds nothing at the point values is "never", as `planner simulate` shows it
        rows = [[r.scenario, r.quantity, NEVER if r.never is not None and r.point is not None and r.point != r.point
                 else num(r.point), num(r.mean), num(r.sd),
                 *[num(r.percentiles[k]) for k in levels], r.unit] for r in self.rows]
        return (headers, rows, self.title, [False, False] + [True] * (3 + len(levels)) + [False])


# ---- explain ----------------------------------------------------------------------------------

class Explanation:
    """A quantity from its formula down to its inputs (per scenario): ``formula``, ``in_inputs`` (the
    formula over inputs, as plan text) and its LaTeX, ``value``, ``inputs``, ``used_by``."""

    def __init__(self, parts: list, text: str) -> None:
        self.parts = parts  # planner.questions.explain.Explanation, one per scenario
        first = parts[0]
        self.name = first.name
        self.kind = first.kind
        self.formula = first.formula
        self.doc = first.doc
        self.tags = first.tags
        self.in_inputs = first.in_inputs
        from .terminal import explain_latex

        self.latex = explain_latex(first)
        self.used_by = first.used_by
        self.values = {p.scenario or "base": p.value for p in parts}
        self._text = text

    def __repr__(self) -> str:
        return self._text

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self._text)}</pre>"

    def _repr_markdown_(self) -> str:
        return "```\n" + self._text + "\n```"

    def _repr_latex_(self) -> str:
        return f"$${self.name} = {self.latex}$$" if self.kind == "derived" else f"$${self.name}$$"
