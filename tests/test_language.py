"""The language, one construct per row: what each evaluates to."""

from fractions import Fraction

import pytest

import planner
from planner.language.errors import PlanError


def value(text: str, name: str, scenario=None):
    return planner.loads(text).evaluate(scenario).display(name)


@pytest.mark.parametrize("text,name,expected", [
    # numbers
    ("x = 70_000_000_000", "x", 70e9),
    ("x = 70e9", "x", 70e9),
    ("x = 1.5e-3", "x", 0.0015),
    ("x = .5", "x", 0.5),
    # arithmetic and precedence
    ("x = 2 + 3 * 4", "x", 14),
    ("x = (2 + 3) * 4", "x", 20),
    ("x = 2 ^ 3 ^ 2", "x", 512),          # right-associative, like maths
    ("x = -2 ^ 2", "x", -4),              # unary minus below power
    ("x = 2 ** 10", "x", 1024),
    ("x = 2 ^ -1", "x", 0.5),
    ("x = 7 / 2", "x", 3.5),
    ("x = 10 - 4 - 3", "x", 3),
    # built-ins
    ("x = max(1, 5, 3)", "x", 5),
    ("x = min(4, 2)", "x", 2),
    ("x = abs(-3)", "x", 3),
    ("x = sqrt(16)", "x", 4),
    ("x = exp(0)", "x", 1),
    ("x = ln(exp(2))", "x", 2),
    ("x = log(1000, 10)", "x", 3),
    ("x = floor(2.7)", "x", 2),
    ("x = ceil(2.1)", "x", 3),
    ("x = round(2.5)", "x", 3),           # half away from zero, as Excel
    ("x = round(-2.5)", "x", -3),
    ("x = round(3.14159, 2)", "x", 3.14),
    ("x = if(2 > 1, 10, 20)", "x", 10),
    ("x = if(2 > 1 and not (3 < 1), 1, 0)", "x", 1),
    ("x = if(1 > 2 or 2 >= 2, 1, 0)", "x", 1),
    ("x = if(0 <= 0.5 < 1, 1, 0)", "x", 1),
    # booleans
    ("flag = true\nx = if(flag, 1, 2)", "x", 1),
    ("flag = false\nx = if(flag, 1, 2)", "x", 2),
    ("a = 3\nbig = a > 2", "big", True),
    # unicode names
    ("α = 0.8\nγ = 4\nx = (1 - α^(γ + 1)) / (1 - α)", "x", 3.3616),
    # user functions: defaults, keywords, globals inside the body
    ("k = 10\nf(a, b = 2) = a * b + k\nx = f(3)", "x", 16),
    ("f(a, b = 2) = a * b\nx = f(3, b = 5)", "x", 15),
    ("f(a, b = 2) = a - b\nx = f(b = 1, a = 10)", "x", 9),
    ("g(a) = a + 1\nf(a) = g(a) * 2\nx = f(1)", "x", 4),
    # definitions in any order; continuation lines
    ("y = x * 2\nx = 3", "y", 6),
    ("x = max(1,\n        2)", "x", 2),
    ("x = 1 +\n    2", "x", 3),
    ("x = 1\n    + 2", "x", 3),
    ("x = 5\n    \"a doc on the next line\"\n    [assumption]", "x", 5),
])
def test_construct(text, name, expected):
    got = value(text, name)
    if isinstance(expected, bool):
        assert got is expected
    else:
        assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text,name,expected", [
    ("x = 1 GB -> MB", "x", 1000),
    ("x = 1 GiB -> MiB", "x", 1024),
    ("x = 1 GiB -> B", "x", 2**30),
    ("x = 16 bit -> B", "x", 2),
    ("x = 1 B -> bit", "x", 8),
    ("x = 3.0 TB/s -> GB/s", "x", 3000),
    ("x = 1 ms -> us", "x", 1000),
    ("x = 1 h -> min", "x", 60),
    ("x = 90 s -> min", "x", 1.5),
    ("x = 1000 TFLOP/s -> PFLOP/s", "x", 1),
    ("bytes = 140 GB\nbw = 3 TB/s\nt = bytes / bw -> ms", "t", 46.666666666666664),
    ("flops = 140 GFLOP\nbytes = 140 GB\nai = flops / bytes -> FLOP/B", "ai", 1),
    ("per = 2 B/token\nn = 10 token\nx = per * n -> B", "x", 20),
    ("x = 5% * 200", "x", 10),
    ("x = 0.25 -> %", "x", 25),
    ("t = 2 ms\nx = t * 1000 / 1 s", "x", 2),   # a dimensionless ratio
    ("x = max(0, 3 GB) -> GB", "x", 3),           # a literal zero fits any unit
    ("unit USD\nprice = 2.5 USD/h\ncost = price * 10 h -> USD", "cost", 25),
    ("unit USD\nunit kUSD = 1000 USD\nx = 2500 USD -> kUSD", "x", 2.5),
])
def test_units(text, name, expected):
    assert value(text, name) == pytest.approx(expected, rel=1e-12)


def test_literal_decimals_are_exact():
    plan = planner.loads("x = 4.15\ny = 0.1 bit")
    assert plan.model.quantities["x"].value == Fraction(83, 20)
    assert plan.model.quantities["y"].value == Fraction(1, 80)  # bytes


def test_plan_without_units_is_a_spreadsheet():
    plan = planner.loads("price = 12\nqty = 3\ndiscount = 0.1\ntotal = price * qty * (1 - discount)\n")
    ev = plan.evaluate()
    assert ev.display("total") == pytest.approx(32.4)
    assert plan.model.quantities["total"].unit_text == ""


def test_inputs_and_derived():
    plan = planner.loads("a = 2\nb = -3 GB\nc = a * 2\nd = 1 + 1\n")
    q = plan.model.quantities
    assert q["a"].is_input and q["b"].is_input
    assert not q["c"].is_input and not q["d"].is_input


def test_docs_tags_constraints():
    plan = planner.loads('bw = 3 TB/s "peak bandwidth" [assumption, source "spec sheet, dense"] where bw > 0 TB/s\n'
                         't = 1 ms [lower bound]\n')
    q = plan.model.quantities["bw"]
    assert q.doc == "peak bandwidth"
    assert q.tags == ("assumption", "source: spec sheet, dense")
    assert q.lower.value == 0 and not q.lower.inclusive
    assert plan.model.quantities["t"].tags == ("lower bound",)


def test_scenarios_side_by_side():
    plan = planner.loads("bits = 16 bit\nn = 70e9\nw = n * bits -> GB\n"
                         "scenario a { bits = 8 bit }\nscenario b {\n  bits = 4 bit\n}\n")
    assert [plan.evaluate(s).display("w") for s in plan.resolve_scenarios("all")] == [70, 35]
    assert plan.evaluate().display("w") == 140


def test_constraints_are_checked_for_scenarios_and_overrides():
    plan = planner.loads("alpha = 0.5 where 0 <= alpha < 1\nscenario bad { alpha = 1 }\n")
    with pytest.raises(PlanError, match="constraint violated"):
        plan.evaluate("bad")
    name, v, origin = plan.parse_override("alpha=2")
    with pytest.raises(PlanError, match="from --set alpha=2"):
        plan.evaluate(None, {name: v}, {name: origin})


def test_boolean_switch_in_scenarios():
    plan = planner.loads("fp8_kv = false\nkv = if(fp8_kv, 1 B, 2 B) -> B\nscenario small { fp8_kv = true }\n")
    assert plan.evaluate().display("kv") == 2
    assert plan.evaluate("small").display("kv") == 1


def test_check_tolerances(cli, plan_file):
    path = plan_file(
        "x = 46.66666\n"
        "check x ~= 46.667\n"            # half a unit of the last digit: passes
        "check x ~= 46.7 within 0.1%\n"  # relative
        "check x ~= 47 within 0.5\n"     # absolute
        "check x == 46.66666\n"
        "check x ~= 46.67\n"             # fails: 46.66666 rounds to 46.67? yes, passes
        "check x ~= 46.6\n"              # fails
        "check x > 50\n"                 # fails
    )
    code, out, _ = cli("check", path)
    assert code == 1
    assert "5 passed, 2 failed" in out
    assert "expected 46.6 (± 0.05), got 46.66666" in out
    assert "condition is false" in out


def test_explain(cli):
    from conftest import TOKEN_COST

    code, out, _ = cli("explain", TOKEN_COST, "speedup")
    assert code == 0
    assert "speedup = expected_tokens / (gamma * draft_cost + 1)" in out
    assert "in inputs" in out and "alpha" in out
    assert "value        2.40114" in out  # 3.3616 / 1.4 = 2.401142857, as eval writes it
    assert "draft_cost" in out.split("inputs\n")[1]


def test_eval_formats(cli):
    from conftest import TOKEN_COST

    code, out, _ = cli("eval", TOKEN_COST, "--scenario", "bf16,int4_g128", "--only", "weight_bytes,speedup",
                       "--format", "csv")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "quantity,unit,bf16,int4_g128"
    assert lines[1] == "weight_bytes,GB,140.0,36.3125"
    code, out, _ = cli("eval", TOKEN_COST, "--set", "hbm_bandwidth=3.35 TB/s", "--only", "batch1_weight_bound")
    assert code == 0
    assert "41.791" in out  # 140 GB / 3.35 TB/s
    assert "input*" not in out  # only the requested row is shown


def test_constraint_may_name_another_quantity():
    plan = planner.loads("n = 8\nk = 2 where k <= n, 1 <= k\n")
    assert plan.evaluate().display("k") == 2
    name, v, origin = plan.parse_override("k=10")
    with pytest.raises(PlanError, match="`k <= n` does not hold"):
        plan.evaluate(None, {name: v}, {name: origin})


def test_units_may_be_declared_in_any_order():
    plan = planner.loads("unit GBP = 2 EUR\nunit EUR\nx = 3 GBP -> EUR\n")
    assert plan.evaluate().display("x") == 6


def test_a_unit_declared_twice_in_one_plan_is_an_error():
    with pytest.raises(PlanError, match="unit `USD` is declared twice"):
        planner.loads("unit USD\nunit USD\n")


def test_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "bom.plan"
    path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    assert planner.load(path).evaluate().display("x") == 1


def test_long_sums_and_products():
    n = 3000
    text = "".join(f"v{i} = {i}\n" for i in range(n)) + "total = " + " + ".join(f"v{i}" for i in range(n)) + "\n"
    text += "alt = " + " - ".join(f"v{i}" for i in range(n)) + "\n"
    text += "prod = " + " * ".join("1.001" for _ in range(500)) + "\n"
    ev = planner.loads(text).evaluate()
    assert ev.display("total") == n * (n - 1) // 2
    assert ev.display("alt") == 0 - sum(range(1, n))
    assert ev.display("prod") == pytest.approx(1.001 ** 500)


def test_bare_numbers_for_percent_inputs_are_refused():
    plan = planner.loads("mfu = 40% where 0% < mfu <= 100%\nrate = 250 ppm\nscenario ok { mfu = 50% }\n")
    assert plan.evaluate("ok").values["mfu"] == 0.5
    with pytest.raises(PlanError, match="bare number is ambiguous") as info:
        plan.parse_override("mfu=50")
    assert "give the unit: `50%`" in str(info.value)
    assert "or `5000%`" not in str(info.value)  # 50 is not a fraction
    with pytest.raises(PlanError, match="bare number is ambiguous") as info:
        plan.parse_override("mfu=0.5")
    assert "give the unit: `0.5%`, or `50%` if 0.5 is a fraction" in str(info.value)
    with pytest.raises(PlanError, match="give the unit: `300 ppm`"):
        plan.parse_override("rate=300")
    assert plan.parse_override("mfu=0")[1] == 0  # zero is zero in any unit


@pytest.mark.parametrize("text,expected", [
    ("x = 1000\nd = floor(log(x, 10))", 3),        # the float quotient is 2.9999999999999996
    ("y = 125\nd = ceil(log(y, 5))", 3),           # ... and 3.0000000000000004
    ("a = 0.1\nd = ceil(a * 3 / 0.3)", 1),
    ("a = 2.675\nd = round(a, 2)", 2.68),           # as Excel's ROUND
    ("a = 2.5\nd = floor(a)", 2),
    ("a = -2.5\nd = ceil(a)", -2),
    ("a = 0.999999999\nd = floor(a)", 0),           # a real fraction is not snapped
])
def test_floor_and_ceil_work_on_the_15_digits_shown(text, expected):
    assert planner.loads(text).evaluate().display("d") == expected


def test_month_and_year():
    assert value("x = 1 year -> month", "x") == pytest.approx(12)
    assert value("x = 1 month -> day", "x") == pytest.approx(365 / 12)
    assert value("x = 1 year -> day", "x") == 365  # a calendar year, not pint's Julian 365.25 days
    from planner.questions.checks import run_checks

    results = run_checks(planner.loads("check 12 month == 1 year\ncheck 52 weeks < 1 year\n"))
    assert [r.passed for r in results] == [True, True]  # a month is exactly a twelfth of a year


@pytest.mark.parametrize("text,expected", [
    # energy and power: J is the base unit of energy, W = J/s
    ("x = 1 W * 1 s -> J", 1),
    ("x = 1 kW -> W", 1000),
    ("x = 1 MW -> kW", 1000),
    ("x = 1 kJ -> J", 1000),
    ("x = 1 Wh -> J", 3600),
    ("x = 1 kWh -> kJ", 3600),
    ("x = 1 MWh -> kWh", 1000),
    ("x = 700 W * 24 h -> kWh", 16.8),
    ("x = 3.6 MJ / 1 h -> W", 1000),
    # long names and plurals, as pint spells them
    ("x = 90 seconds -> minutes", 1.5),
    ("x = 1 second -> ms", 1000),
    ("x = 2 hours -> min", 120),
    ("x = 1 hour -> s", 3600),
    ("x = 3 days -> h", 72),
    ("x = 2 weeks -> days", 14),
    ("x = 6 months -> years", 0.5),
    ("x = 1 yr -> months", 12),
    ("x = 5 milliseconds -> us", 5000),
    ("x = 16 bytes -> bits", 128),
    ("x = 1 byte -> bit", 8),
    ("x = 1 gigabyte -> MB", 1000),
    ("x = 1 gibibyte -> MiB", 1024),
    ("x = 2 kilobytes -> B", 2000),
    ("x = 1 watt * 1 hour -> joules", 3600),
    ("x = 1 kilowatt_hour -> watt_hours", 1000),
    ("x = 50 percent -> %", 50),
])
def test_units_people_type(text, expected):
    assert value(text, "x") == pytest.approx(expected, rel=1e-12)


def test_exact_checks_are_decided_in_exact_arithmetic(cli, plan_file):
    path = plan_file("a = 0.1\nb = 0.2\nc = a + b - 0.3\nflag = true\nd = if(flag, c, 1)\n"
                     "check c == 0\ncheck a + b == 0.3\ncheck d == 0\ncheck c == 1e-17\n")
    code, out, _ = cli("check", path)
    assert code == 1
    assert "3 passed, 1 failed" in out
    assert "check c == 1e-17" in out


@pytest.mark.parametrize("text,name,expected", [
    ("unit USD\nchurn = 3%/month\nlife = 1 / churn -> month", "life", 100 / 3),
    ("battery = 50 W*h -> W*s", "battery", 180000),
    ("unit USD\nunit kUSD = 1000 USD\nunit MUSD = 1000 kUSD\nx = 2 MUSD -> USD", "x", 2e6),
    ("unit MUSD = 1000 kUSD\nunit USD\nunit kUSD = 1000 USD\nx = 2 MUSD -> USD", "x", 2e6),  # any order
    ("unit USD\nprice = 0.12 USD/kWh\nenergy = 700 W * 24 h\ncost = price * energy -> USD", "cost", 2.016),
    ("x = 2 B·s -> B*ms", "x", 2000),
])
def test_product_units(text, name, expected):
    assert value(text, name) == pytest.approx(expected, rel=1e-12)


def test_inputs_display_exactly_as_written():
    ev = planner.loads("unit USD\nprice = 49 USD/month\nrate = 0.1 GB/s\n").evaluate()
    assert ev.display("price") == 49.0
    assert ev.display("rate") == 0.1


def test_latex_keeps_names_whole():
    import sympy as sp

    from planner.compute.closed import to_ir
    from planner.outputs.latex import formula_latex

    assert formula_latex(to_ir(sp.Symbol("customers0") * sp.Symbol("alpha"))) == r"\alpha \cdot \mathrm{customers0}"
    assert formula_latex(to_ir(sp.Symbol("draft_cost"))) == r"\mathrm{draft\_cost}"


QUESTIONS = """
x = 2 where 0 <= x <= 10
y = x * 3
scenario s { x = 4 }
"""


@pytest.mark.parametrize("statement", [
    "sweep x in [1, 2] show y for s",
    "sweep x in [1, 2] show y in s",
    "solve x where y = 9 for s",
    "solve x where y = 9 in s",
    "maximize y over x in 1..3 for s",
    "maximize y over x in 1..3 in s",
    "check y == 12 for s",
    "check y == 12 in s",
])
def test_in_and_for_alike_after_checks_and_questions(statement):
    plan = planner.loads(QUESTIONS + statement + "\n")
    stmt = (plan.model.sweeps + plan.model.solves + plan.model.optimizes + plan.model.checks)[0]
    assert [p.name for p in stmt.scenarios] == ["s"]


# ---- aggregates: sum, product, min, max and count over ranges and lists ----------------------

AGG = "n = 6 where integer, 0 <= n <= 24\nr = 0.01\nq = 4096\nk = 1024\n"


@pytest.mark.parametrize("formula,expected", [
    # ranges: the variable runs over start, start + step, ... up to the end
    ("sum(m for m in 1..n)", 21),                              # 1 + ... + 6
    ("sum(m^2 for m in 1..n)", 91),                            # n(n+1)(2n+1)/6
    ("sum(1 / (1 + r)^m for m in 1..n)", (1 - 1.01 ** -6) / 0.01),  # an annuity factor
    ("sum(m for m in 1..n step 2)", 9),                        # 1 + 3 + 5
    ("sum(m for m in 0.5..3)", 4.5),                           # 0.5 + 1.5 + 2.5
    ("sum(m for m in 1..0)", 0),                               # an empty range adds nothing
    ("product(m for m in 1..n)", 720),                         # 6!
    ("product(1 + r for m in 1..n)", 1.01 ** 6),
    ("max(m * (7 - m) for m in 1..n)", 12),                    # at m = 3 and 4
    ("min((m - 4)^2 for m in 1..n)", 0),
    ("count(m^2 > 10 for m in 1..n)", 3),                      # 4, 5, 6
    ("count(1..n)", 6),                                        # the number of values
    ("sum(1..n)", 21),                                         # the values themselves
    ("sum(sum(i * j for j in 1..i) for i in 1..n)", 266),      # nested, the inner range uses i: sum (i^3 + i^2)/2
    ("sum(m for m in 1..2 * n)", 78),                          # an end that is a formula
    # lists: of values or of names
    ("sum([1, 2, 3])", 6),
    ("sum(16 * w for w in [q, k, q])", 16 * (4096 + 1024 + 4096)),
    ("max([q, k, n])", 4096),
    ("min(w / 2 for w in [q, k])", 512),
    ("count(w > 2000 for w in [q, k, q])", 2),
    ("product([2, 3, 4])", 24),
])
def test_aggregate(formula, expected):
    assert value(AGG + f"x = {formula}\n", "x") == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text,name,expected", [
    # the range variable has the unit of its range: one month at a time from `1 month`
    ("life = 3 month where integer, 1 month <= life <= 120 month\n"
     "x = sum(m for m in 1 month..life) -> month", "x", 6),
    ("life = 3 month where integer, 1 month <= life <= 120 month\n"
     "x = sum(1 / 1.01^(m / 1 month) for m in 1 month..life)", "x", 1 / 1.01 + 1 / 1.01 ** 2 + 1 / 1.01 ** 3),
    ("x = sum(t for t in 0 h..3 h step 90 min) -> h", "x", 4.5),   # 0 + 1.5 + 3 hours
    ("x = sum(w for w in [1 GB, 500 MB]) -> GB", "x", 1.5),
    # inside a user function, sized from each call's arguments
    ("n = 6 where integer, 0 <= n <= 24\nannuity(rate, periods) = sum(1 / (1 + rate)^m for m in 1..periods)\n"
     "x = annuity(0.01, n) + annuity(0.02, 2)", "x", (1 - 1.01 ** -6) / 0.01 + 1 / 1.02 + 1 / 1.02 ** 2),
    # a quantity may be called sum, count or product: aggregates are a form of call, not reserved names
    ("count = 3 where integer, 0 <= count <= 10\nx = sum(m for m in 1..count)", "x", 6),
])
def test_aggregate_units_and_functions(text, name, expected):
    assert value(text, name) == pytest.approx(expected, rel=1e-12)


def test_lora_parameters_are_a_sum_over_the_adapted_matrices():
    """The second article's figures: Llama-3-8B, r = 16: 41.9M over all seven matrices (0.52% of 8.03B),
    and Llama-3-70B: 65.5M over attention, 207M over all seven."""
    text = """
        hidden = 4096
        layers = 32
        heads = 32
        kv_heads = 8
        head_dim = 128
        d_ff = 14336
        rank = 16
        q = hidden + heads * head_dim        "d_in + d_out of W_Q"
        k = hidden + kv_heads * head_dim
        v = hidden + kv_heads * head_dim
        o = heads * head_dim + hidden
        gate = hidden + d_ff
        up = hidden + d_ff
        down = d_ff + hidden
        lora_all = layers * sum(rank * w for w in [q, k, v, o, gate, up, down])
        lora_attention = layers * sum(rank * w for w in [q, k, v, o])
        scenario llama3_70b { hidden = 8192, layers = 80, heads = 64, d_ff = 28672 }
    """
    plan = planner.loads("\n".join(line.strip() for line in text.splitlines()))
    ev = plan.evaluate()
    assert ev.display("lora_all") == pytest.approx(41.9e6, abs=0.05e6)  # "41.9M"
    assert ev.display("lora_all") / 8.03e9 == pytest.approx(0.0052, abs=5e-5)  # "0.52%"
    assert ev.display("lora_attention") == 13_631_488  # 16 * 32 * (8192 + 5120 + 5120 + 8192)
    assert 4 * ev.display("lora_attention") == pytest.approx(54.5e6, abs=0.05e6)  # r = 64, attention: "54.5M"
    big = plan.evaluate("llama3_70b")
    assert big.display("lora_attention") == pytest.approx(65.5e6, abs=0.05e6)  # "65.5M (0.093%)"
    assert big.display("lora_all") == pytest.approx(207e6, abs=0.5e6)  # "207M (0.29%)"


def test_aggregates_are_vectorised_over_a_sweep():
    """A sweep evaluates every point in one call: each point's range has its own end."""
    from planner.questions.sweep import run

    plan = planner.loads(AGG + "x = sum(1 / (1 + r)^m for m in 1..n)\nc = count(m > 3 for m in 1..n)\n")
    values = planner.language.lower.lower_values(planner.language.source.Source("v", "0..24"))
    res = run(plan, [("n", values, None)], ["x", "c"])
    want = [sum(1.01 ** -m for m in range(1, n + 1)) for n in range(25)]
    assert res.display("x") == pytest.approx(want, rel=1e-12)
    assert list(res.display("c")) == [max(0, n - 3) for n in range(25)]
    assert not res.bad.any()


def test_aggregates_in_sympy_are_sums_with_their_own_variable():
    import sympy as sp

    from planner.compute.closed import to_ir
    from planner.outputs.latex import formula_latex

    plan = planner.loads(AGG + "x = sum(m^2 for m in 1..n)\ny = max(m * r for m in 1..n)\n")
    x, n = plan.exprs["x"], plan.symbols["n"]
    assert isinstance(x, sp.Sum)
    assert sp.expand(x.doit() - n * (n + 1) * (2 * n + 1) / 6) == 0  # the closed form SymPy finds
    assert sp.sstr(x) == "Sum(m**2, (m, 1, n))"
    assert formula_latex(to_ir(x)) == r"\sum_{m = 1}^{n} m^{2}"
    assert formula_latex(to_ir(plan.exprs["y"])) == r"\max_{m \in \{1, \ldots, n\}} m \cdot r"


# ---- answers are quantities ---------------------------------------------------------------------

@pytest.mark.parametrize("text,name,scenario,expected", [
    ("x = 1 where 0 <= x <= 10\nsolve x where 3 * x = 6 as r\ny = 2 * r", "y", None, 4),   # a root
    ("n = 1 where integer, 0 <= n <= 10\nsolve min n where n^2 >= 10 as r\ny = r + 1", "y", None, 5),  # a threshold
    ("x = 1\nmaximize 10 - (x - 3)^2 over x in 1..5 as best\ny = best * best.value", "y", None, 30),  # .value
    ("x = 1 where 0 <= x <= 10\nsolve x where x = 2 as a\nsolve x where x = a * 3 as b\ny = b", "y", None, 6),
    ("c = 2\nx = 1 where 0 <= x <= 10\nsolve x where x = c as a\ny = a\nscenario s { c = 5 }", "y", "s", 5),
    ("t = 1 s where t > 0 s\nsolve t where t * 2 = 3 s as half\ny = half -> ms", "y", None, 1500),  # its unit
])
def test_answer_in_a_formula(text, name, scenario, expected):
    assert value(text, name, scenario) == pytest.approx(expected, rel=1e-12)


def test_dependency_order_is_graphlibs():
    """The order quantities are computed and listed in is the standard library's
    (``TopologicalSorter.static_order``), though planner orders without it; a cycle is still an error."""
    import graphlib
    import random

    from planner.language.graph import _static_order

    rng = random.Random(11)
    cycles = 0
    for _ in range(2000):
        n = rng.randint(0, 12)
        names = [f"q{i}" for i in range(n)] + ["in0", "in1"]  # and two that are only used
        deps = {}
        for i in range(n):
            pool = names if rng.random() < 0.15 else names[:i] + names[n:]  # now and then a cycle
            chosen = rng.sample(pool, rng.randint(0, min(4, len(pool))))
            deps[names[i]] = tuple(chosen + chosen[:1] * (rng.random() < 0.1))  # a name used twice
        sorter = graphlib.TopologicalSorter()
        for name, ds in deps.items():
            sorter.add(name, *ds)
        try:
            expected = list(sorter.static_order())
        except graphlib.CycleError:
            expected = None
            cycles += 1
        assert _static_order(deps) == expected, deps
    assert 100 < cycles < 1900  # both kinds were tried
