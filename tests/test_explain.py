"""`planner explain`: the formula as written, the same over inputs as plan text in the plan's units, its LaTeX.

The formula over inputs is the plan's own IR with quantities and user functions inlined
(planner.questions.explain.over_inputs), printed by one printer over the IR (planner.language.text):
no SymPy syntax (`Sum`, `**`, `ceiling`) and no base-unit numbers (`n/2628000`). Golden lines are the
plans' formulas inlined by hand; every shipped plan's lines are read back as plan text and must give
each quantity its value.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import ROOT, SHEETS, TOKEN_COST

import planner
from planner.language import ir
from planner.language.lower import lower
from planner.language.source import Source
from planner.language.text import formula_text, number_text
from planner.outputs.views import _explain_text
from planner.questions.explain import MAX_SHOWN, explain

CASH = ROOT / "benchmarks" / "plans" / "cash_60_months.plan"
GPU = ROOT / "examples" / "gpu_buy_vs_rent.plan"
PLANS = sorted([*SHEETS.glob("*.plan"), *(ROOT / "examples").glob("*.plan"),
                *(ROOT / "benchmarks" / "plans").glob("*.plan")])
SYMPY_SYNTAX = ("Sum(", "**", "ceiling", "Piecewise", "Max(", "Min(", "Eq(")


def _shown(path: Path, name: str) -> str:
    return _explain_text(explain(planner.load(path)._plan, name))


def _line(text: str, label: str) -> str:
    """The value of one labelled line of the explanation (``  in inputs    ...``)."""
    return next(line for line in text.splitlines() if line.startswith(f"  {label} "))[15:]


def test_a_month_range_over_user_functions_reads_as_written():
    # low = min(cash(t) for t in 1 month..n), cash(t) = start + sum(flow(k) for k in 1 month..t),
    # flow(t) = customers(t) * price - couriers(t) * wage - rent, each function inlined by hand:
    want = ("min(start + sum(customers0 * (1 + growth)^(k / 1 month - 1) * price"
            " - ceil(customers0 * (1 + growth)^(k / 1 month - 1) / per_courier / 1 courier) * 1 courier * wage"
            " - rent for k in 1 month..t) for t in 1 month..n)")
    shown = _shown(CASH, "low")
    assert shown.splitlines()[0] == "low = min(cash(t) for t in 1 month..n)"
    assert _line(shown, "in inputs") == want
    latex = _line(shown, "latex")
    assert latex.startswith(r"\min_{t \in \{1\,\mathrm{month}, \ldots, n\}} \left(\mathrm{start} + "
                            r"\sum_{k = 1\,\mathrm{month}}^{t} "), latex
    for base in ("2628000", "2{,}628{,}000", "base units", "sympy", *SYMPY_SYNTAX):
        assert base not in shown, base
    assert "value        219.34 kUSD" in shown  # as `planner eval` writes it


def test_display_units_and_literals_stay_as_written():
    # npv_own = capex + sum(own_monthly * 1 month * discount(m) for m in 1 month..horizon)
    #           - resale * capex * discount(horizon), discount(m) = (1 + cost_of_capital * 1 year)^-(m / 1 year)
    shown = _shown(GPU, "npv_own")
    assert _line(shown, "in inputs") == (
        "gpus * gpu_price + sum(gpus * (gpu_power * pue * power_price * 730 h/month + colocation) * 1 month"
        " * (1 + cost_of_capital * 1 year)^-(m / 1 year) for m in 1 month..horizon)"
        " - resale * (gpus * gpu_price) * (1 + cost_of_capital * 1 year)^-(horizon / 1 year)")
    assert "31536000" not in shown and "31{,}536{,}000" not in shown


def test_an_input_is_itself_over_inputs():
    plan = planner.load(TOKEN_COST)
    e = explain(plan._plan, "alpha")
    assert (e.kind, e.in_inputs, e.value) == ("input", "alpha", "0.8")
    assert plan.explain("alpha").latex == r"\alpha"


def test_a_quantity_inlined_into_a_quotient_keeps_its_brackets():
    # speedup = expected_tokens / (gamma * draft_cost + 1), expected_tokens = (1 - alpha^(gamma + 1)) / (1 - alpha)
    shown = _shown(TOKEN_COST, "speedup")
    assert _line(shown, "in inputs") == "(1 - alpha^(gamma + 1)) / (1 - alpha) / (gamma * draft_cost + 1)"
    assert _line(shown, "latex") == (r"\frac{\frac{1 - \alpha^{\gamma + 1}}{1 - \alpha}}"
                                     r"{\gamma \cdot \mathrm{draft\_cost} + 1}")


def test_an_argument_the_functions_variable_would_capture_renames_the_variable():
    # f(x) = sum(x * k for k in 1..3) called as f(k) inside a sum over k: sum(k * k2 ...), not sum(k * k ...)
    plan = planner.loads("f(x) = sum(x * k for k in 1..3)\ny = sum(f(k) for k in 1..2)\n", "c.plan")
    e = explain(plan._plan, "y")
    assert e.in_inputs == "sum(sum(k * k2 for k2 in 1..3) for k in 1..2)"
    assert e.value == "18"  # (1 + 2) * (1 + 2 + 3)


def test_a_condition_a_default_argument_settles_is_its_branch():
    # llm_cost's weights over inputs read `... + if(false, (heads + 2 * kv_heads) * head_dim, 0) + ...` (the
    # library's `qkv_bias = false`); a settled `if` is its branch, and the zero it leaves is not added
    text = ("a = 3\nflag = true\nf(x, bias = false) = 2 * x + if(bias, x, 0) + 1\n"
            "y = f(a)\nz = f(a, true)\nw = f(a, flag)\n")
    plan = planner.loads(text, "e.plan")._plan
    assert explain(plan, "y").in_inputs == "2 * a + 1" and explain(plan, "y").value == "7"
    assert explain(plan, "z").in_inputs == "2 * a + a + 1" and explain(plan, "z").value == "10"
    assert explain(plan, "w").in_inputs == "2 * a + if(flag, a, 0) + 1"  # an input's condition stays
    weights = _line(_shown(SHEETS / "llm_cost.plan", "weights_bf16"), "in inputs")
    assert "if(false" not in weights and "+ 0 +" not in weights and "if(tied, 1, 2)" in weights


def test_a_formula_too_long_to_write_out_says_so():
    # each level doubles the formula written over inputs: 2^12 names at the twelfth
    text = "a0 = 1\n" + "".join(f"a{i} = a{i - 1} + a{i - 1}\n" for i in range(1, 13))
    e = explain(planner.loads(text, "d.plan")._plan, "a12")
    assert e.in_inputs_ir is None and e.in_inputs == f"(too long over its inputs, over {MAX_SHOWN:,} terms: see `a11`)"
    assert e.value == "4,096"
    assert explain(planner.loads(text, "d.plan")._plan, "a2").in_inputs == "a0 + a0 + (a0 + a0)"


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
def test_every_formula_over_inputs_reads_back_to_the_quantitys_value(path):
    """Each derived figure's line, added to its plan as a formula of its own, has the figure's value, and
    uses only inputs (and series, answers): the text is plan text, the inlining complete."""
    plan = planner.load(path)._plan
    q = plan.model.quantities
    lines = {}
    for name, x in q.items():
        if x.is_input or x.per_period:
            continue
        e = explain(plan, name)
        if e.in_inputs_ir is None:  # a figure too long to write out (one that reduces a series names it)
            assert "too long" in e.no_ir, (name, e.no_ir)
            continue
        assert not any(s in e.in_inputs for s in SYMPY_SYNTAX), (name, e.in_inputs)
        assert all(n.name in q and (q[n.name].is_input or q[n.name].per_period) or n.name in plan.model.answers
                   for n in ir.free_names(e.in_inputs_ir)), name
        lines[name] = e.in_inputs
    text = path.read_text(encoding="utf-8") + "".join(f"\nread_back_{i} = {v}\n" for i, v in enumerate(lines.values()))
    again = planner.loads(text, str(path))._plan.evaluate()
    want = plan.evaluate()
    for i, name in enumerate(lines):
        a, b = want.values[name], again.values[f"read_back_{i}"]
        both_never = a != a and b != b  # a `first(...)` that finds nothing here (saas_growth's runway)
        assert a == b or both_never or math.isclose(a, b, rel_tol=1e-12), (name, a, b, lines[name])


def _expr(text: str) -> ir.Expr:
    head = "periods = 1 month..12 month\n" if " at " in text or "previous" in text else ""
    (*_, d) = lower(Source("t.plan", f"{head}y = {text}\n")).statements
    return d.expr


@pytest.mark.parametrize("text", [
    "a - (b + c)", "a - b + c", "a / (b * c)", "a * b / c", "-x^2", "(-x)^2", "2^-x", "2^3^x", "(2^3)^x",
    "-(a + b)", "a * -b", "not a and b", "not (a and b)", "a or b and c", "(a or b) and c", "1 < x <= 3",
    "(a < b) == c", "f(x, y = 2)", "if(a > 0, a, -a)", "70e9", "5%", "3.2 kUSD", "1_000", "0.25 * x",
    "sum(x^m for m in 1..n)", "sum(m for m in 0..n - 1 step 2)", "max(w for w in [q, k, v])", "sum([a, b, c])",
    "count(1..n)", "first(m for m in 1 month..horizon where c(m) <= 0 USD)", "x@\"llama3_70b/h100\"", "x@base",
    "cash at 3 month", "first(period where cash < 0 USD)", "sum(cash)", "previous(cash, 1 USD)",
])
def test_the_printer_writes_what_the_parser_reads(text):
    assert formula_text(_expr(text)) == text


@pytest.mark.parametrize("value, text", [("1/4", "0.25"), ("70000000000", "70000000000"), ("1/3", "1 / 3"),
                                         ("-1/8", "-0.125"), ("83/20", "4.15"), ("1/1000", "0.001")])
def test_a_number_with_no_text_is_written_as_a_literal(value, text):
    from fractions import Fraction

    assert number_text(Fraction(value)) == text


def test_explain_loads_no_sympy():
    from test_fast_answers import _without_sympy

    proc = _without_sympy("explain", str(CASH), "low")
    assert "in inputs    min(start + sum(" in proc.stdout


def test_every_explain_latex_line_renders_with_katex(tmp_path):
    """The LaTeX line of every derived figure of the shipped plans, through KaTeX (throwOnError), as the report's."""
    from test_rendering import _check, _node

    from planner.outputs.terminal import explain_latex

    node = _node()
    blocks = []
    for path in PLANS:
        plan = planner.load(path)._plan
        for name, q in plan.model.quantities.items():
            if not q.is_input and not q.per_period:
                e = explain(plan, name)
                if e.in_inputs_ir is not None:
                    blocks.append(f"{path.name} {name}\n\n```math\n{explain_latex(e)}\n```\n")
    page = tmp_path / "explain.md"
    page.write_text("# explain\n\n" + "\n".join(blocks), encoding="utf-8")
    found = _check(node, [page])[str(page)]
    assert found["errors"] == [] and found["math"] == len(blocks) > 300, found["errors"][:3]


WRITTEN_UNITS = """
unit USD
horizon = 36 month "months the plan covers" where integer, 1 month <= horizon <= 120 month
cash(m) = 100 - 7 * (m / 1 month)
first_negative = first(m for m in 1 month..horizon where cash(m) < 0)
twice  = horizon * 2
demand = 5e9 token "tokens a month"
served = demand * 0.9
price  = 2 USD/Mtoken
bill   = served * price -> USD
check served == 4.5e9 token
"""


def test_a_time_or_a_count_without_a_display_unit_keeps_the_unit_its_formula_is_written_in(tmp_path):
    """By hand: 100 - 7 m < 0 first at m = 15 (month 14 leaves 2); twice 36 months is 72 months; 90% of
    5e9 tokens is 4.5e9 tokens. Shown in months and tokens, as the plan writes them, not in seconds
    (39,420,000 s) or as a plain number, by explain, eval, check and the workbook."""
    plan = planner.loads(WRITTEN_UNITS, "written.plan")
    assert _line(_explain_text(explain(plan._plan, "first_negative")), "value") == "15 month"
    assert _line(_explain_text(explain(plan._plan, "twice")), "value") == "72 month"
    assert _line(_explain_text(explain(plan._plan, "served")), "value") == "4,500,000,000 token"
    figures = plan.eval()
    assert (figures["first_negative"].number, figures["first_negative"].unit) == (15, "month")
    assert (figures["served"].number, figures["served"].unit) == (4.5e9, "token")
    import openpyxl

    from test_excel_workbook import export

    export(plan, tmp_path / "written.xlsx")
    model = openpyxl.load_workbook(tmp_path / "written.xlsx")["Model"]
    units = {r[3].value: r[2].value for r in model.iter_rows(min_row=4) if r[3].value}
    assert units["served"] == "token" and units["first_negative"] == "month" and units["twice"] == "month"
    checks = openpyxl.load_workbook(tmp_path / "written.xlsx")["Checks"]
    assert next(r for r in checks.iter_rows(min_row=4) if r[0].value == "check served == 4.5e9 token")[4].value == "token"


def test_used_by_names_the_series_that_use_a_quantity_in_the_order_the_plan_defines_them():
    """saas_growth: `fixed_costs` is used only by the series `fixed`, `hires` by the series `reps` and `ramping1`,
    `mrr` by the series `operating` and by `ending_arr`; a series was left out, so `explain fixed_costs` said
    nothing used it (the plan's text, read by hand: lines 63, 44-45 and 66, 75)."""
    plan = planner.load(ROOT / "benchmarks" / "plans" / "saas_growth.plan")._plan
    assert explain(plan, "fixed_costs").used_by == ["fixed"]
    assert explain(plan, "hires").used_by == ["reps", "ramping1"]
    assert explain(plan, "mrr").used_by == ["operating", "ending_arr"]
    assert explain(plan, "operating").used_by == ["net", "breakeven", "plan_npv", "plan_irr"]
