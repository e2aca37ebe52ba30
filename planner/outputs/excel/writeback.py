"""``planner import BOOK.xlsx --plan FILE --write``: the workbook's edits written back into the plan.

The ``.plan`` file is the source of truth, and it is the user's text: only the bytes of the edited
literals change. Every comment, doc string, blank line and alignment stays as it was; a literal keeps
its unit as written (``2.50 USD/h`` edited to 2.25 becomes ``2.25 USD/h``, ``60%`` edited to 0.65 in
the cell becomes ``65%``) and at least the decimals it was written with (``2.50`` edited to 3 becomes
``3.00``); digit grouping (``1_000``) and an exponent (``1e6``) are kept. An item of a series' table of
values is a literal like any other; values typed after the table, where its last one held on, are new
items written as that last one is (:func:`_grown`).

Before anything is written:

* the workbook must come from this version of the plan: the export records a hash of the plan's text
  (a document property); when the plan changed since, the write is refused unless ``force``;
* every edited value has been checked against the plan's constraints (in the base case and in every
  scenario) as it was read (:func:`planner.outputs.excel.reader.read_inputs`): a value outside one is
  refused, naming the cell and the constraint;
* the new text is loaded again as a plan, and each edited literal must read back as the value typed.

The file is replaced atomically (staged next to it, then renamed in; hard links kept), so a failed
run leaves the old plan in place.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Optional

from ...compute.evaluation import Plan
from ...language import ir
from ...language.errors import UsageError
from .reader import Imported

# the digits of a number literal, as the grammar lexes them (the unit follows)
_DIGITS = re.compile(r"(\d(?:_?\d)*(?:\.\d(?:_?\d)*)?|\.\d(?:_?\d)*)([eE][+-]?\d+)?")
SIGNIFICANT = 15  # digits a cell's number keeps


@dataclass(frozen=True)
class Edit:
    """One literal of the plan's text to replace: ``text[start:end]`` becomes ``new``."""

    name: str
    cell: str  # Inputs!B7, Scenarios!D9
    scenario: Optional[str]
    start: int
    end: int
    old: str
    new: str
    value: object  # the exact base-unit value the new literal must read back as
    period: Optional[int] = None  # the item of a series' table of values


def edits(plan: Plan, imported: Imported) -> list[Edit]:
    """The literal replacements that carry ``imported``'s changes into the plan's text."""
    from .periods import table_items

    out, grown = [], {}
    for change in imported.changes:
        items = table_items(plan.model.quantities[change.name].definition.expr) if change.period is not None else ()
        if change.period is not None and change.period >= len(items):
            grown[change.name] = change  # typed after the table, where its last value held on: the last such
            continue
        if change.period is not None:  # an item of a series' table of values
            expr = items[change.period]
            value = imported.table_overrides[change.name][change.period]
            where = f"`{change.name}` in {change.when}"
        elif change.scenario is None:
            q = plan.model.quantities[change.name]
            expr = q.definition.expr
            value = imported.overrides[change.name]
            if q.definition.uncertain is not None and not q.definition.uncertain.point_written:
                raise UsageError(f"{change.cell} (`{change.name}`): the plan gives `{change.name}` as a "
                                 f"distribution (`{q.definition.uncertain.span.flat}`), whose median is the cell's "
                                 "value; the write-back changes literals only",
                                 hint=f"edit the distribution of `{change.name}` in {plan.path}")
            where = f"`{change.name}`"
        else:
            overrides = [o for o in plan.model.scenarios[change.scenario].scenario.overrides if o.name == change.name]
            expr = overrides[-1].expr
            value = imported.scenario_overrides[change.scenario][change.name]
            where = f"scenario `{change.scenario}`'s `{change.name}`"
        if expr.span.source.name != plan.source.name:
            raise UsageError(f"{change.cell}: {where} is defined in {expr.span.source.name}, which {plan.path} "
                             "imports; the write-back changes the plan's own file only",
                             hint=f"edit it in {expr.span.source.name}, or set it in {plan.path}")
        if not ir.is_literal(expr):
            raise UsageError(f"{change.cell}: {where} is the formula `{expr.span.flat}` in {plan.path}, not a "
                             "number to replace", hint="edit the formula in the plan")
        new = literal_text(plan, change.name, expr, value)
        out.append(Edit(change.name, change.cell, change.scenario, expr.span.start, expr.span.end,
                        expr.span.text, new, value, change.period))
    out.extend(_grown(plan, imported, change) for change in grown.values())
    out.sort(key=lambda e: e.start)
    for a, b in zip(out, out[1:]):
        if b.start < a.end:
            raise UsageError(f"{a.cell} and {b.cell} both edit the literal `{a.old}` of {plan.path}",
                             hint="keep one of the two edits")
    return out


def _grown(plan: Plan, imported: Imported, change) -> Edit:
    """The items a series' table gains (``, 13.00 USD, 15.00 USD`` before its ``]``): each period up to
    ``change``'s, the last one typed, written as the table's last item is."""
    from .periods import table_items

    q = plan.model.quantities[change.name]
    items = table_items(q.definition.expr)
    table = q.definition.expr.first if isinstance(q.definition.expr, ir.Series) else q.definition.expr
    last = items[-1]
    if not ir.is_literal(last) or table.span.source.name != plan.source.name \
            or not table.span.text.rstrip().endswith("]"):
        raise UsageError(f"{change.cell}: `{change.name}` in {change.when} would add items after the table's last, "
                         f"`{last.span.flat}`, which is not a number to copy", hint="add the items in the plan")
    values = [imported.table_overrides[change.name][k] for k in range(len(items), change.period + 1)]
    text = "".join(", " + literal_text(plan, change.name, last, v) for v in values)
    end = table.span.start + len(table.span.text.rstrip()) - 1  # the `]`
    return Edit(change.name, change.cell, None, end, end, "", text, values[-1], change.period)


def literal_text(plan: Plan, name: str, expr: ir.Expr, value) -> str:
    """The text of literal ``expr`` (a definition's or an override's) for the new exact ``value`` (base
    units): its unit as written, at least its written decimals, its grouping and exponent."""
    if isinstance(value, bool) or isinstance(_innermost(expr), ir.Bool):
        return "true" if value else "false"
    number = _innermost(expr)
    token = number.span.text
    m = _DIGITS.match(token)
    digits, exponent = m.group(1), m.group(2)
    rest = token[m.end():]  # the spacing and the unit, as written
    scale = Fraction(1)
    if number.unit is not None:  # one of the literal's unit, exactly (an input's or a table's item alike)
        from .periods import constant

        scale = constant(plan.model, ir.Number(Fraction(1), number.unit, number.span))
    shown = Fraction(value) / Fraction(scale)
    negative = shown < 0
    text = _decimal(abs(shown), digits, exponent)
    was_negative = _negations(expr) % 2 == 1
    if negative == was_negative:  # only the digits change
        whole = expr.span.text
        offset = number.span.start - expr.span.start
        return whole[:offset] + text + whole[offset + m.end():]
    return ("-" if negative else "") + text + rest


def _innermost(expr: ir.Expr):
    while isinstance(expr, ir.Neg):
        expr = expr.operand
    return expr


def _negations(expr: ir.Expr) -> int:
    n = 0
    while isinstance(expr, ir.Neg):
        n, expr = n + 1, expr.operand
    return n


def _decimal(value: Fraction, written: str, exponent: Optional[str]) -> str:
    """``value`` (not negative) as a decimal with at least the decimals of ``written``, grouped with
    ``_`` when ``written`` is, in ``written``'s exponent when it has one."""
    power = int(exponent[1:]) if exponent else 0
    mantissa = value / Fraction(10) ** power if exponent else value
    body = _plain(mantissa, len(written.partition(".")[2].replace("_", "")))
    if "_" in written.partition(".")[0]:
        whole, dot, frac = body.partition(".")
        body = f"{int(whole):_}" + dot + frac
    return body + (exponent[0] + str(power) if exponent else "")


def _plain(value: Fraction, decimals: int) -> str:
    """A decimal with at least ``decimals`` decimals and as many more as ``value`` needs (at most
    :data:`SIGNIFICANT` significant digits: a cell's float noise is not the user's)."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = SIGNIFICANT
        d = Decimal(value.numerator) / Decimal(value.denominator)  # rounded to 15 significant digits
    text = format(d, "f")
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0")
    if len(frac) < decimals:
        frac += "0" * (decimals - len(frac))
    return whole + ("." + frac if frac else "")


# after a literal's digits, its unit (`%`, ` USD/h`), then the padding that aligns the docs after it
_PADDING = re.compile(r'(?:[ ]?[^\s"#]+)?( {2,})(?=\S)')


def apply(text: str, changes: list[Edit]) -> str:
    """``text`` with each edit's literal replaced (the edits are sorted and do not overlap), the padding
    after it (`rep_target = 12          "doc"`) taking up the difference in length, so that aligned docs,
    tags and constraints stay aligned (one space at least; two before a comment)."""
    parts, at = [], 0
    for k, e in enumerate(changes):
        parts.append(text[at:e.start])
        parts.append(e.new)
        at = e.end
        line_end = text.find("\n", at) % (len(text) + 1)
        pad = _PADDING.match(text, at, min(line_end, changes[k + 1].start if k + 1 < len(changes) else line_end))
        if pad is not None and len(e.new) != len(e.old):
            least = 2 if text[pad.end(1)] == "#" else 1
            parts.append(text[at:pad.start(1)] + " " * max(least, len(pad.group(1)) - len(e.new) + len(e.old)))
            at = pad.end(1)
    parts.append(text[at:])
    return "".join(parts)


def diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, path))


def check_fresh(book_path: str, plan: Plan, recorded: Optional[str], force: bool,
                exported_from: Optional[tuple] = None) -> Optional[str]:
    """Refuse (UsageError) a workbook exported from another plan, or from another version of the plan's
    text (``recorded``: the hash the workbook holds; ``exported_from``: the plan file name and title it
    records), unless ``force``; return a warning when forced past one."""
    from .book import PLAN_FILE, PLAN_TITLE, plan_hash, provenance

    now = plan_hash(plan.source.text)
    if recorded == now:
        return None
    mine = provenance(plan)
    hint = (f"export a fresh workbook (`planner export {plan.path} -o BOOK.xlsx`) and make the edits there, or "
            "pass --force to write the edits into the plan as it is now (--dry-run shows what would change)")
    foreign = exported_from is not None and exported_from != (mine[PLAN_FILE], mine[PLAN_TITLE])
    if recorded is None:
        problem = (f"{book_path} does not record which version of {plan.path} it was exported from (it was "
                   "exported by an older planner)")
    elif foreign:
        problem = (f"{book_path} was exported from another plan, `{exported_from[0]}` (\"{exported_from[1]}\"), "
                   f"not from {plan.path} (\"{mine[PLAN_TITLE]}\")")
        hint = (f"pass the plan the workbook came from with --plan, or export a workbook from {plan.path} "
                f"(`planner export {plan.path} -o BOOK.xlsx`); --force writes the edits into {plan.path} anyway")
    else:
        problem = f"{plan.path} changed since {book_path} was exported from it"
    if force:
        return problem + "; written anyway (--force): each edit replaced the plan's literal as it is now"
    lost = "" if foreign else ", so that no change made to the plan since is lost"
    raise UsageError(f"{problem}; nothing was written{lost}", hint=hint)


def write_back(book_path: str, plan: Plan, imported: Imported, force: bool = False, dry_run: bool = False,
               import_roots=()) -> tuple[list[Edit], str, list[str]]:
    """Carry ``imported``'s edits into ``plan``'s file; return the edits, the unified diff and warnings.
    ``dry_run``: write nothing."""
    from ...compute.evaluation import loads
    from ...language.imports import read_plan

    warnings = []
    stale = check_fresh(book_path, plan, imported.plan_hash, force, imported.exported_from)
    if stale:
        warnings.append(stale)
    path = Path(plan.path)
    text = read_plan(path)
    if text != plan.source.text:
        raise UsageError(f"{plan.path} changed while it was being read; nothing was written", hint="run it again")
    changes = edits(plan, imported)
    if not changes:
        return [], "", warnings
    new = apply(text, changes)
    again = loads(new, plan.path, path.parent, import_roots=import_roots)
    for e in changes:
        got = (_item(again, e) if e.period is not None else again.model.quantities[e.name].value
               if e.scenario is None else again.model.scenarios[e.scenario].overrides.get(e.name))
        if got != e.value and not (isinstance(e.value, Fraction) and _close(got, e.value)):
            raise UsageError(f"{e.cell}: the new literal `{e.new}` for `{e.name}` would read back as another value; "
                             "nothing was written", hint="type the value with fewer digits")
    shown = diff(plan.path, text, new)
    if not dry_run:
        from ..build import rewrite

        bom = path.read_bytes().startswith(b"\xef\xbb\xbf")
        rewrite(path, (b"\xef\xbb\xbf" if bom else b"") + new.encode("utf-8"),
                f"the write-back rewrites {plan.path} in place: make it (and its folder) writable, or see the "
                "change with --dry-run")
    return changes, shown, warnings


def _item(plan: Plan, e: Edit):
    """The exact value of the table item ``e`` replaced, as ``plan`` reads it."""
    from .periods import constant, table_items

    return constant(plan.model, table_items(plan.model.quantities[e.name].definition.expr)[e.period])


def with_tables(plan: Plan, imported: Imported, import_roots=()) -> Plan:
    """``plan`` with the items its tables of values have in the workbook (``imported.table_overrides``),
    loaded from its text with those literals replaced, as ``--write`` would write them: what ``planner
    import`` evaluates (the other inputs' edits are overrides). UsageError where an item cannot be
    replaced (a formula, a file the plan imports)."""
    from ...compute.evaluation import loads

    tables = Imported(imported.path, {}, {}, [c for c in imported.changes if c.period is not None], [],
                      table_overrides=imported.table_overrides)
    changes = edits(plan, tables)
    if not changes:
        return plan
    return loads(apply(plan.source.text, changes), plan.path, Path(plan.path).parent, import_roots=import_roots)


def _close(a, b: Fraction) -> bool:
    """The same to the significant digits a cell keeps (a value rounded to 15 digits when written)."""
    try:
        a = Fraction(a)
    except (TypeError, ValueError):
        return False
    return abs(a - b) <= abs(b) * Fraction(1, 10 ** (SIGNIFICANT - 1))
