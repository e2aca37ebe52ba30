"""Generated plans that use every built-in (language/functions.py) and every aggregate, nested: in ranges
(two and three deep, ends that move), lists, ifs, user functions, units, scenarios and answers.

``plan(seed)`` is one plan's text. Its figures stay finite and in every function's domain (``sqrt(abs(x))``,
``ln(1 + abs(x))``, ``x / (1 + abs(x))``, ``irr`` of one outflow and then inflows: one root), so a plan that
loads evaluates, and so must export: tests/test_excel_every_plan.py exports them and has LibreOffice and
Gnumeric recalculate every cell. Run many and print what fails (a refusal, a mismatch, a LaTeX error):

    python tests/every_builtin.py 200
"""

from __future__ import annotations

import random
import sys
from typing import Optional

FUNCTIONS = ("max", "min", "abs", "sqrt", "exp", "ln", "log", "floor", "ceil", "round", "if", "pmt", "pv", "fv",
             "npv", "irr")


class Maker:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.names = ["a", "b", "c"]  # plain figures a formula may use
        self.used: set[str] = set()
        self.in_function = False  # a user function's body calls no user function (no recursion)

    def pick(self, *options):
        return self.rng.choice(options)

    def literal(self) -> str:
        return self.pick("2", "3", "0.5", "1.25", "7", "0.1", "12", "2.5")

    def leaf(self, loops: tuple) -> str:
        r = self.rng.random()
        if loops and r < 0.45:
            return self.pick(*loops)
        if r < 0.8:
            return self.pick(*self.names)
        return self.literal()

    def cond(self, depth: int, loops: tuple) -> str:
        a, b = self.expr(depth - 1, loops), self.expr(depth - 1, loops)
        r = self.rng.random()
        if r < 0.15:
            return f"flag and {a} > {b}"
        if r < 0.25:
            return f"not flag or {a} <= {b}"
        return f"{a} {self.pick('>', '<', '>=', '<=')} {b}"

    def expr(self, depth: int, loops: tuple = ()) -> str:
        """A plain (dimensionless) formula: finite, in every function's domain."""
        if depth <= 0:
            return self.leaf(loops)
        e = lambda: self.expr(depth - 1, loops)  # noqa: E731
        kind = self.pick("arith", "arith", "unary", "call", "call", "if", "agg", "agg", "user", "finance")
        if kind == "arith":
            op = self.pick("+", "-", "*", "div", "pow", "neg")
            if op == "div":
                return f"({e()}) / (1 + abs({e()}))"
            if op == "pow":
                return f"(({e()}) / (1 + abs({e()})))^{self.pick('2', '3')}"
            if op == "neg":
                return f"-({e()})"
            return f"({e()} {op} {e()})"
        if kind == "unary":
            f = self.pick("abs", "sqrt", "exp", "ln", "log", "floor", "ceil", "round", "round2")
            self.used.add(f.rstrip("2"))
            x = e()
            return {"abs": f"abs({x})", "sqrt": f"sqrt(abs({x}))", "exp": f"exp({x} / (1 + abs({x})))",
                    "ln": f"ln(1 + abs({x}))", "log": f"log(2 + abs({x}), {self.pick('10', '2', '3')})",
                    "floor": f"floor({x})", "ceil": f"ceil({x})", "round": f"round({x})",
                    "round2": f"round({x}, {self.pick('1', '2')})"}[f]
        if kind == "call":
            f = self.pick("max", "min")
            self.used.add(f)
            return f"{f}({', '.join(e() for _ in range(self.rng.randint(2, 4)))})"
        if kind == "if":
            self.used.add("if")
            return f"if({self.cond(depth, loops)}, {e()}, {e()})"
        if kind == "user" and not self.in_function:
            f = self.pick("f", "g")
            return f"f({e()}, {e()})" if f == "f" else f"g({e()})"
        if kind in ("finance", "user"):
            f = self.pick("pmt", "pv", "fv", "npv", "irr", "npv_range")
            self.used.add(f.split("_")[0])
            x = e()
            return {"pmt": f"pmt(rate, n, {x})", "pv": f"pv(rate, n, {x}, {e()})",
                    "fv": f"fv(rate / 2, n + 1, {x}, {e()}, {self.pick('0', '1')})",
                    "npv": f"npv(rate, {x}, {e()}, 3)",
                    "irr": f"irr(-(100 + abs({x})), 30 + abs({e()}), 40, 50)",
                    "npv_range": f"npv(rate, 10 + {self.pick('a', 'b')} * k9 for k9 in 1..{self.pick('3', '6')})"}[f]
        return self.aggregate(depth, loops)

    def aggregate(self, depth: int, loops: tuple) -> str:
        var = f"k{len(loops)}"
        inner = loops + (var,)
        end = self.pick("n", "3", "n", loops[-1] if loops and loops[-1].startswith("k") else "n")
        if len(loops) >= 3:  # deep enough
            return self.leaf(loops)
        body = self.expr(depth - 1, inner)
        op = self.pick("sum", "sum", "product", "max", "min", "count", "first", "list")
        if op == "product":
            return f"product(1 + 1 / ({var} + abs({body})) for {var} in 1..{end})"
        if op == "count":
            return f"count({body} > {self.leaf(loops)} for {var} in 1..{end})"
        if op == "first":  # found at the end at the latest: a figure, never `never`
            return f"first({var} for {var} in 1..{end} where {body} > {self.leaf(loops)} or {var} >= {end})"
        if op == "list":
            agg = self.pick("sum", "max", "min", "product", "count")
            items = ", ".join(self.expr(depth - 1, loops) for _ in range(self.rng.randint(2, 4)))
            if agg == "count":
                return f"count({var} > 2 for {var} in [{items}])"
            if agg == "product":
                return f"product(1 + {var} / (1 + abs({var})) for {var} in [{items}])"
            return f"{agg}({var} * 2 - 1 for {var} in [{items}])"
        step = self.pick("", "", " step 2")
        return f"{op}({body} for {var} in 1..{end}{step})"

    def plan(self) -> str:
        r = self.rng
        lines = [f'title "generated plan {r.random():.6f}"', "unit USD", "unit kUSD = 1000 USD"]
        lines += [f"a = {self.pick('2', '3.5', '1.25', '6')}", f"b = {self.pick('0.75', '4', '10')}",
                  f"c = {self.pick('-1.5', '2', '0.3')}", f"flag = {self.pick('true', 'false')}",
                  f"rate = {self.pick('1%', '2.5%', '0.5%')} where rate >= 0%",
                  f"n = {r.randint(2, 5)} where integer, 1 <= n <= 6",
                  "price = 1200 USD", f"horizon = {r.randint(3, 12)} month where integer, 1 month <= horizon <= 18 month",
                  "speed = 2 GB/s", "hours = 3 hour"]
        self.in_function = True
        lines.append(f"f(x, y) = {self.expr(2, ('x', 'y'))}")
        lines.append(f"g(x) = {self.expr(2, ('x',))}")
        self.in_function = False
        for i in range(r.randint(4, 7)):
            name = f"q{i}"
            lines.append(f"{name} = {self.expr(r.randint(2, 3))}")
            self.names.append(name)
        # units: a money figure over a month range, finance in money, a display unit
        lines += ["monthly = sum(price * (1 + rate)^(-(m / 1 month)) for m in 1 month..horizon) -> USD",
                  f"pay = pmt(rate, n, price) + {self.pick('q0', 'q1')} * 1 USD -> USD",
                  "moved = speed * hours -> TB",
                  f"ok = {self.cond(2, ())}",
                  "cumulative = sum(sum(price * (1 + rate)^(-(j / 1 month)) for j in 1 month..m) "
                  "for m in 1 month..horizon) -> kUSD",
                  f"breakeven = first(m for m in 1 month..horizon where sum(price * {self.pick('a', 'b', '0.5')} "
                  "for j in 1 month..m) > 5000 USD or m >= horizon) -> month",
                  f"share = {self.pick('q0', 'q1')} * rate -> %",
                  f"worst = min(max(sum({self.expr(1, ('i', 'j'))} * 1 USD for j in 1..i) - 3 USD, "
                  "-1 USD * i) for i in 1..n) -> USD",
                  f"deep = sum(sum(sum({self.expr(1, ('i', 'j', 'k'))} for k in 1..j) for j in 1..i) for i in 1..n)"]
        lines += [
            f"deep{i} = {text}" for i, text in enumerate(r.sample([
                "sum(sum(sum(if(k > j, i * k, j) for k in 1..j step 2) for j in 1..i) for i in 1..n)",
                "sum(sum(first(k for k in 1..j where k * i > 3 or k >= j) for j in 1..i) for i in 1..n)",
                "sum(sum(count(k * j > i for k in 1..n) for j in 1..i) for i in 1..n)",
                "max(sum(irr(-(100 + i), 30 + j, 40, 50) for j in 1..i) for i in 1..n)",
                "sum(sum(sum(price for l in 1 month..j) for j in 1 month..m) for m in 1 month..horizon) -> kUSD",
                f"min(sum(product(1 + {self.expr(1, ('i', 'j', 'k'))} / 100 for k in 1..2) for j in 1..i) for i in 1..n)",
                f"sum(max(min({self.expr(1, ('i', 'j'))}, j) for j in [a, b, i]) for i in 1..n)",
            ], 3), start=2)]
        lines.append(f"scenario other {{ a = {self.pick('5', '0.5')}\n  n = {r.randint(1, 6)} }}")
        lines.append(f"solve min n where n * (1 + abs(a)) >= {self.pick('3', '5', '9')} as least")
        lines.append(f"after = least * 2 + {self.pick('q0', 'q1', 'q2')}")
        lines.append("check moved == 21.6 TB")
        if r.random() < 0.5:  # a live sweep table (drawn last: the plans before it stay as they were)
            lines.append(f"sweep {r.choice(['a', 'b', 'n'])} in [1, 2, 3] show q0, q1, deep")
        return "\n".join(lines) + "\n"


def plan(seed: int) -> str:
    return Maker(seed).plan()


def verify(item, wb) -> int:
    """test_excel_workbook's comparison of every cell, a figure that cancels to 0 (planner's 0.0, an
    engine's -2E-19: the same terms added in another order) within 1e-12."""
    import test_excel_workbook as book

    strict = book.close

    def close(got, want, where):
        if isinstance(want, float) and isinstance(got, (int, float)) and abs(got - want) <= 1e-12:
            return
        strict(got, want, where)

    book.close = close
    try:
        return book.verify(item, wb)
    finally:
        book.close = strict


def run(count: int, start: int = 0) -> int:
    """Export ``count`` generated plans, recalculate them with LibreOffice and Gnumeric (cached values
    overwritten first), compare each cell with planner's; print each finding. Returns the findings."""
    import tempfile
    import traceback
    from pathlib import Path

    import openpyxl
    from excel_recalc import gnumeric_recalculate, poison, recalculate
    from test_excel_workbook import export

    from planner.language.errors import PlanError
    from planner.outputs.latex import formula_latex
    from planner.plan import loads_compiled as loads

    findings = 0
    work = Path(tempfile.mkdtemp(prefix="every_builtin_"))
    items = {}
    for seed in range(start, start + count):
        text = plan(seed)
        try:
            p = loads(text, f"gen{seed}.plan")
            p.evaluate()
        except PlanError as err:
            print(f"seed {seed}: does not evaluate (the maker's fault): {err.message}")
            continue
        try:
            for name, q in p.model.quantities.items():
                formula_latex(q.definition.expr)
        except Exception:  # noqa: BLE001
            findings += 1
            print(f"seed {seed}: LaTeX: {traceback.format_exc(limit=3)}")
        try:
            item = export(p, work / f"gen{seed}.xlsx")
        except PlanError as err:
            findings += 1
            print(f"seed {seed}: export refused: {err.message}\n{text}")
            continue
        except Exception as err:  # noqa: BLE001
            findings += 1
            print(f"seed {seed}: export failed: {err!r}\n{traceback.format_exc(limit=-4)}")
            continue
        poison(item.path)
        items[seed] = item
    lo = recalculate([i.path for i in items.values()], work)
    gn = gnumeric_recalculate([i.path for i in items.values()], work)
    for seed, item in items.items():
        item.values = openpyxl.load_workbook(lo[item.path], data_only=True)
        item.engines = {"libreoffice": item.values, "gnumeric": openpyxl.load_workbook(gn[item.path], data_only=True)}
        for engine, wb in item.engines.items():
            try:
                verify(item, wb)
            except AssertionError as err:
                findings += 1
                print(f"seed {seed} ({engine}): {(str(err) or repr(err)).splitlines()[0]}")
    print(f"{len(items)} exported of {count}; {findings} findings; files in {work}")
    return findings


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    sys.exit(1 if run(n, first) else 0)
