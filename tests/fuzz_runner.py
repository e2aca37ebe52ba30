"""The fuzzer behind tests/test_fuzz.py, run as a child process so a crash is seen as one.

    python tests/fuzz_runner.py KIND SEED COUNT STATE_FILE

KIND is one of ``tokens``, ``chars``, ``lines`` (mutations of every shipped
plan: sheets/*.plan and the library), ``grammar`` (plans generated from
grammar/plan.lark by hypothesis), ``cli`` (``--set`` and sweep values given
to the command line) ``template`` (mutations of the shipped report
template and hostile Jinja), ``prose`` (hostile titles, notes, doc strings and question
sentences through ``planner report``, the report rendered to HTML and audited) or ``cache``
(compiled-plan cache entries flipped,
truncated, swapped between plans, zeroed, and written by several threads at once:
a warm load must give the cold figures), ``framing`` (the language server's input) or ``workbook``
(an exported workbook mutated, cell by cell and as a zip container, given to ``planner import``).
Each case either works or fails with a
``PlanError``; anything else is a finding. ``distribution`` (uncertain inputs of every family,
parameters drawn by hypothesis across the float range) also loads, evaluates and simulates each:
what eval accepts, simulate accepts. Before each case the runner writes
it to STATE_FILE, so when the process dies (a segmentation fault) or hangs
the parent can say which input did it. The last line printed is a JSON
summary: cases run, findings (kind, exception, input).
"""

from __future__ import annotations

import io
import json
import random
import re
import sys
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECONDS_PER_CASE = 20  # a case slower than this is a finding (a wall-clock surprise)

HOSTILE = ['(', ')', '[', ']', '{', '}', '=', '==', '~=', '≈', '->', ',', '*', '/', '^', '**', '-', '+', 'GB', 'ms',
           '"x"', '"', 'where', 'integer', 'true', 'false', 'if(', 'max(', 'min(', 'ln(0)', 'sqrt(-1)', 'exp(1000)',
           '0', '0 ', '1e400', '1e-400', '1e', '1/0', '0/0', '^ 99999', '^ 1000000000', '10 ^ 1000000000', 'alpha',
           'scenario', 'check', 'in', 'with', 'within', '@bf16', '@base', '@"a/b"', '.', '..', 'solve', 'min',
           'maximize', 'sweep', 'axis', 'import "x"', 'import "/etc/passwd" as p', 'from "../x.plan" import a',
           '\n', ' ', '\t', '#', 'unit', 'unit USD', '%', 'bit/s', 'B/token', 'TB/s', 'Mbps', 'for all', 'as x',
           'and', 'or', 'not', 'step', 'times 0', 'count 0', 'count 100000000', '\\', '\x00', '\x1b[31m', '\u202e',
           'd\u0430ta', 'α', '1_000', '.5', '-0', '[assumption]', '[source "x"]', '"unterminated', 'round(', 'log(',
           'floor(', 'ceil(', 'abs(', ', 2)', 'title "t"', 'note "n"', 'show', 'over', 'all', 'base']
CHARS = list('()[]{}=<>~^*/+-,.:@#"\\%_ \n\t') + ['\x00', '\x0b', '\u00a0', '\u202e', 'é', 'а', '≈', '≤', '×', '\ufeff']


# ---- cases ----------------------------------------------------------------------------

def _shipped() -> list[tuple[str, str]]:
    files = sorted((ROOT / "sheets").glob("*.plan"))
    import planner.language.imports as imports

    files += sorted(imports.library_dir().rglob("*.plan"))
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


_TOKEN = re.compile(r'\s+|"(?:[^"\\\n]|\\.)*"|\d[\w.]*|[^\W\d]\w*|->|\*\*|==|~=|<=|>=|!=|\.\.|\S')


def mutate(text: str, level: str, rng: random.Random) -> str:
    if level == "chars":
        chars = list(text)
        for _ in range(rng.randint(1, 6)):
            pos = rng.randrange(len(chars) + 1)
            r = rng.random()
            if r < 0.4 and chars:
                del chars[pos:pos + rng.randint(1, 3)]
            elif r < 0.8:
                chars.insert(pos, rng.choice(CHARS))
            elif chars:
                chars[min(pos, len(chars) - 1)] = rng.choice(CHARS)
        return "".join(chars)
    if level == "lines":
        lines = text.split("\n")
        for _ in range(rng.randint(1, 4)):
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            r = rng.random()
            if r < 0.3:
                del lines[i]
            elif r < 0.55:
                lines.insert(i, lines[j])
            elif r < 0.8:
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines.insert(i, rng.choice(HOSTILE) + " " + lines[j])
            if not lines:
                lines = [""]
        return "\n".join(lines)
    tokens = _TOKEN.findall(text)
    words = [t for t in tokens if not t.isspace()]
    for _ in range(rng.randint(1, 5)):
        pos = rng.randrange(len(tokens) + 1)
        r = rng.random()
        if r < 0.3 and tokens:
            del tokens[pos:pos + rng.randint(1, 3)]
        elif r < 0.5 and tokens:
            tokens.insert(pos, rng.choice(words))  # a token of the plan itself, somewhere else
        elif r < 0.6 and len(tokens) > 1:
            a, b = rng.randrange(len(tokens)), rng.randrange(len(tokens))
            tokens[a], tokens[b] = tokens[b], tokens[a]
        else:
            tokens.insert(pos, " " + rng.choice(HOSTILE) + " ")
    return "".join(tokens)


def plan_cases(level: str, seed: int, count: int):
    rng = random.Random(f"{level}-{seed}")
    shipped = _shipped()
    for i in range(count):
        name, text = shipped[i % len(shipped)]
        yield {"plan": mutate(text, level, rng), "from": name, "deep": i % 25 == 0}


TERMINALS = {
    "_NL": ["\n", "\n\n", "\n  "],
    "NAME": ["x", "y", "alpha", "batch", "gamma", "f", "g", "a1", "α", "h100.bw", "c", "r", "e", "lib.x"],
    "QUANTITY": ["3 TB/s", "2 B", "5%", "16 bit", "1 ms", "0 GB", "1e400 B", "3%/month", "50 W*h", "2 e", "1 Mbps"],
    "NUMBER": ["0", "1", "2.5", "1e9", ".5", "70_000", "1e-400", "1000000000", "0.1", "99999"],
    "STRING": ['"doc"', '"hardware/h100_sxm.plan"', '"a/b"', '"lib.plan"', '"/etc/passwd"', '""', '"../x.plan"'],
    "COMMENT": ["# c"], "TAG_VALUE": ["v"], "SIGNED_INT": ["2", "-1", "3"],
    "ADD_OP": ["+", "-"], "MUL_OP": ["*", "/", "×"], "POW_OP": ["^", "**"], "UNIT_OP": ["/", "*"], "PERCENT": ["%"],
    "COMP_OP": ["==", "!=", "<", "<=", ">", ">=", "~=", "≈"],
}


def _grammar():
    from importlib import resources

    from lark import Lark

    text = resources.files("planner.grammar").joinpath("plan.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", lexer="contextual", start=["start", "expr"])  # no post-lexer: plain text


def derive(grammar, rng: random.Random, symbol: str = "start", depth: int = 0, budget: list | None = None) -> str:
    """A random sentence of the grammar: a random expansion of each rule, the shortest ones past
    a depth (so it ends), terminals from TERMINALS or their literal text."""
    from lark.lexer import PatternStr

    budget = budget if budget is not None else [400]
    rules = _rules(grammar)
    if symbol not in rules:  # a terminal
        term = _terminals(grammar).get(symbol)
        if term is not None and isinstance(term.pattern, PatternStr):
            return f" {term.pattern.value} "
        return " " + rng.choice(TERMINALS.get(symbol, ["x"])) + " "
    options = rules[symbol]
    budget[0] -= 1
    if depth > 12 or budget[0] < 0:
        options = [min(options, key=lambda e: sum(1 for s in e if s.name in rules))]
    expansion = rng.choice(options)
    parts = [derive(grammar, rng, s.name, depth + 1, budget) for s in expansion]
    if symbol == "start":  # a handful of statements, not one
        for _ in range(rng.randint(0, 6)):
            parts.append(derive(grammar, rng, "_statement", depth + 1, budget) + "\n")
    return "".join(parts)


_CACHE: dict = {}


def _rules(grammar) -> dict:
    if "rules" not in _CACHE:
        rules: dict = {}
        for r in grammar.rules:
            rules.setdefault(r.origin.name, []).append(r.expansion)
        _CACHE["rules"] = rules
    return _CACHE["rules"]


def _terminals(grammar) -> dict:
    if "terms" not in _CACHE:
        _CACHE["terms"] = {t.name: t for t in grammar.terminals}
    return _CACHE["terms"]


def grammar_cases(seed: int, count: int):
    rng = random.Random(f"grammar-{seed}")
    grammar = _grammar()
    for i in range(count):
        yield {"plan": derive(grammar, rng), "from": "grammar", "deep": i % 5 == 0}


def hypothesis_cases(seed: int, count: int):
    """Plans drawn by hypothesis from the grammar (its lark strategy); slower, so fewer."""
    from importlib import resources

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.lark import from_lark
    from lark import Lark
    from lark.lexer import PatternStr

    text = resources.files("planner.grammar").joinpath("plan.lark").read_text(encoding="utf-8")
    grammar = Lark(text, parser="lalr", lexer="contextual", start="start")
    explicit = {name: st.sampled_from(values).map(lambda v: f" {v} ") for name, values in TERMINALS.items()}
    for t in grammar.terminals:
        if isinstance(t.pattern, PatternStr) and t.name not in explicit:
            explicit[t.name] = st.just(f" {t.pattern.value} ")
    out: list[str] = []

    @settings(max_examples=count, suppress_health_check=list(HealthCheck), database=None, deadline=None,
              phases=[Phase.generate])
    @given(from_lark(grammar, start="start", explicit=explicit))
    def draw(plan):
        out.append(plan)

    from hypothesis import seed as hseed

    hseed(seed)(draw)()
    for plan in out[:count]:
        yield {"plan": plan, "from": "hypothesis", "deep": True}


CLI_VALUES = ["0.5", "1.5", "0", "-1", "1e400", "1e-400", "nan", "inf", "3 TB/s", "3 s", "true", "1 / 0", "2 ^ 99999",
              "10 ^ 1000000000", "(", "", "a", "alpha", "1..8", "1..8 step 0", "1..1e9", "1..8 times 1", "0..8 times 2",
              "1..8 count 0", "1..8 count 100000000", "[1, 2", "[]", "0.3,0.6", "1 GB..8 GB step 1 GB", "5%",
              "\x00", "\u202e1", "1 Mbps", "1e", '"x"', "x = 1", "1,", ",", "max(1, 2)", "ln(0)", "sqrt(-1)"]

SAMPLE_VALUES = ["0", "1", "2", "50", "-1", "1e400", "1e-400", "nan", "inf", "2.5", "5e1", "1_00", "20000000", "",
                 "1e99999", "0x10", "\u0661\u0662"]
SEED_VALUES = ["0", "1", "-1", "-99999999999999999999", "1e400", "1e300", "2.5", "nan", "", "18446744073709551616",
               "1e3", "٣"]


def cli_cases(seed: int, count: int):
    rng = random.Random(f"cli-{seed}")
    plan = str(ROOT / "sheets" / "token_cost.plan")
    names = ["alpha", "gamma", "batch", "bits_per_weight", "hbm_bandwidth", "speedup", "nope", "", "alpha=1"]
    for _ in range(count):
        name, value = rng.choice(names), rng.choice(CLI_VALUES)
        if rng.random() < 0.2:  # sample counts and seeds: the literal rule, on the command line
            args = ["simulate", plan, "--samples", rng.choice(SAMPLE_VALUES), "--seed", rng.choice(SEED_VALUES),
                    "--method", rng.choice(["lhs", "random", "counter"]), "--show", "speedup"]
        elif rng.random() < 0.5:
            args = ["eval", plan, "--set", f"{name}={value}"]
        elif rng.random() < 0.5:
            args = ["sweep", plan, f"{name}={value}", "--show", "speedup"]
        else:
            args = ["solve", plan, "--for", name, "--where", rng.choice(["speedup = 1", value, "speedup >= " + value])]
        yield {"cli": args}


# ---- distribution declarations (every family, parameters across the float range) ---------------

DIST_NUMBERS = ["0", "-0", "1", "-1", "0.5", "2.5", "7", "100", "-100", "1e-320", "-1e-320", "1e400", "-1e400",
                "1e300", "-1e300", "1e-300", "-1e-300", "1e299", "1e308", "1e-308", "5e-324", "1e-301", "1e301",
                "nan", "inf", "-inf", "NaN", "1e", ".5", "1_000", "1e+400", "(1)", "-(-2)", "x", "1/0"]
DIST_UNITS = ["", "", "", " %", " ms", " GB", " s", " TB/s"]
DIST_FAMILIES = {"normal": 2, "lognormal": 2, "uniform": 2, "triangular": 3, "pert": 3, "discrete": 0, "to": 2}
DIST_CONSTRAINTS = ["", "", "", " where x >= 0", " where 0 <= x <= 1", " where integer", " where x <= 100",
                    " where x > 1e-300", " where integer, x >= 0"]
DIST_WEIGHTS = ["50%", "0.5", "30%", "70%", "20%", "100%", "0", "-50%", "1e-320", "1e400", "nan", "0.25"]


def distribution_cases(seed: int, count: int):
    """An uncertain input of every family (and a quantity of it), its parameters drawn by hypothesis across
    the float range: zero, negatives, 1e-320, 1e400, 5e-324, nan-like text, any finite float."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    number = st.one_of(st.sampled_from(DIST_NUMBERS),
                       st.floats(allow_nan=False, allow_infinity=False).map(repr),
                       st.integers(-10 ** 6, 10 ** 6).map(str))
    out: list[dict] = []

    @settings(max_examples=count, suppress_health_check=list(HealthCheck), database=None, deadline=None,
              phases=[Phase.generate])
    @given(st.sampled_from(sorted(DIST_FAMILIES)), st.lists(number, min_size=2, max_size=3),
           st.lists(st.tuples(number, st.sampled_from(DIST_WEIGHTS)), min_size=1, max_size=3),
           st.sampled_from(DIST_UNITS), st.booleans(), st.one_of(st.none(), number),
           st.sampled_from(["lhs", "random", "counter"]), st.integers(0, 2 ** 70), st.booleans(),
           st.sampled_from(DIST_CONSTRAINTS))
    def draw(family, numbers, pairs, unit, mixed, point, method, seed, ordered, constraint):
        if ordered:  # low to high, weights that add to 100%: more of the cases that load reach the sampler
            try:
                numbers = sorted(numbers, key=float)
                values = sorted({v: float(v) for v, _ in pairs}, key=float)
            except ValueError:
                values = [v for v, _ in pairs]
            pairs = list(zip(values, {1: ["100%"], 2: ["50%", "0.5"], 3: ["25%", "25%", "50%"]}[len(values)]))
            mixed = False

        def lit(i, n):
            return n + (unit if not (mixed and i % 2) else "")
        if family == "to":
            dist = f"{lit(0, numbers[0])} to {lit(1, numbers[-1])}"
        elif family == "discrete":
            dist = "discrete(" + ", ".join(f"{lit(i, v)}, {w}" for i, (v, w) in enumerate(pairs)) + ")"
        else:
            params = (numbers * 2)[:DIST_FAMILIES[family]]
            dist = f"{family}(" + ", ".join(lit(i, n) for i, n in enumerate(params)) + ")"
        head = f"{point}{unit} ~ " if point is not None else ""
        out.append({"plan": f"x = {head}{dist}{constraint}\ny = x * 2\n", "method": method, "seed": seed})

    hseed(seed)(draw)()
    yield from out[:count]


def run_distribution(case: dict, workdir: Path) -> None:
    """Load and evaluate, then simulate 20 samples: a value or a located PlanError, never an internal error;
    and eval and simulate accept the same declarations (simulate refuses no distribution that loads, for
    its parameters: only for what its samples do, such as a value past a float's range)."""
    import planner
    from planner.language.errors import (ConstraintError, DistributionError, EvaluationError, PlanError, UnitError,
                                         render)
    from planner.questions import simulate

    try:
        plan = planner.loads(case["plan"], "fuzz.plan", base=workdir)
        plan.evaluate(None)
    except PlanError as err:
        assert err.span is not None, f"no location: {err.message}"
        render(err)
        return
    try:
        (sim,) = simulate.run(plan, samples=20, seed=case["seed"], method=case["method"])
        sim.stats("x"), sim.stats("y")
    except (ConstraintError, DistributionError, EvaluationError, UnitError) as err:
        raise AssertionError(f"eval accepts what simulate refuses: {err.message}") from None
    except PlanError as err:
        assert err.span is not None, f"no location: {err.message}"
        render(err)


TEMPLATE_SNIPPETS = [
    "{{ ''.__class__.__mro__ }}", "{{ notes.append(1) }}", "{{ range(10**9) | list }}", "{{ 'x' * 10**9 }}",
    "{{ 10 ** 10 ** 10 }}", "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "{{ lipsum(10**6) }}",
    "{{ '%*d' % (10**9, 1) }}", "{{ '{:>1000000000}'.format(1) }}", "{% include 't.j2' %}", "{{ undefined_x }}",
    "{% for q in inputs %}{{ q.nme }}{% endfor %}", "{{ 1 / 0 }}", "{{ (1.5 ** 10000) }}", "{% extends 't.j2' %}",
    "{{ title | fmt(digits=10**9) }}", "{{ cycler }}", "{{ self }}", "{{ config }}", "{% set x = [] %}{{ x.append }}",
    "{{ inputs | map(attribute='__class__') | list }}", "{{ ((10 ** 1000) ** 1000) ** 1000 }}", "{% raw %}",
    "{{", "}}", "{%", "%}", "{#", "|", "~", "{{ title ~ title ~ title }}", "{{ quantities['x'] }}",
]


def template_cases(seed: int, count: int):
    rng = random.Random(f"template-{seed}")
    base = (ROOT / "templates" / "report.md.j2").read_text(encoding="utf-8")
    for i in range(count):
        if i % 3 == 0:
            text = "\n".join(rng.sample(TEMPLATE_SNIPPETS, rng.randint(1, 3))) + "\n"
        else:
            text = mutate(base, rng.choice(["chars", "lines", "tokens"]), rng)
            lines = text.split("\n")
            lines.insert(rng.randrange(len(lines)), rng.choice(TEMPLATE_SNIPPETS))
            text = "\n".join(lines)
        yield {"template": text}


# ---- hostile prose through `planner report`, checked against an HTML sanitizer's view ----------

PROSE = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", '<a href="javascript:alert(1)">a</a>',
         "[click](javascript:alert(1))", "[c](JaVaScRiPt:alert(1))", "[c](&#106;avascript:alert(1))",
         "[c]( javascript:alert(1))", "[c](<javascript:alert(1)>)", "<javascript:alert(1)>",
         "[c](java\tscript:alert(1))", "[r]\n\n[r]: javascript:alert(1)", "![i](javascript:alert(1))",
         "[d](data:text/html;base64,PHNjcmlwdD4=)", "[v](vbscript:msgbox(1))", "<data:text/html,x>",
         "[ok](https://example.org/a_b?c=1&d=2)", "<https://example.org>", "[m](mailto:a@example.org)",
         "[rel](other.md#part)", "&lt;script&gt;", "&#60;img src=x onerror=alert(1)&#62;", "&amp;", "`", "``",
         "```", "`<b onmouseover=alert(1)>`", "$", "$x^$", "$`x`$", "\\frac", "{{", "}}", "{,_w4a16e16}",
         "{1, 2}", "}", "{}", "{x}", "{x -> ms}", "{{x}}", "\u0301", "é", "🙂", "α", "≈", "\u00a0", "<!--", "-->",
         "<style>*{}</style>", "<svg onload=alert(1)>", "<iframe src=javascript:alert(1)>", "\\", "*", "_",
         "**b**", "#", "# h", ">", "|", "- ", "1. ", "\n", "\n\n", "\n\n<script>alert(1)</script>",
         "<details open>", "</details>", "<b onclick=alert(1)>", "~~~", "    <i>", "<", ">", "&"]

PROSE_PLAN = """title "{title}"
note "{note}"
note "{live} {{{{x}}}} is {{x -> ms}}"
unit USD
x = 2 s "{doc}" [source "{source}"]
{price}
n = 3 "{count}" where n > 0
cost = price * n "{cost}" [headline]
check cost > 1 USD
scenario big "{scenario}" {{ x = 3 s }}
solve n where cost = # {comment}
    60 USD as needed "{sentence}"
"""


def _string(text: str) -> str:
    """Text as the inside of a plan's string (backslashes and quotes escaped, line breaks as `\\n`)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def prose_cases(seed: int, count: int):
    rng = random.Random(f"prose-{seed}")
    words = ["a", "the cost", " ", ". ", "x is"]

    def some() -> str:
        return _string("".join(rng.choice(PROSE + words) for _ in range(rng.randint(1, 4))))

    for i in range(count):
        plots = i % 10 == 0  # a plan with an uncertain input, written with `-o`: its histograms and tornado
        price = "price = 10 USD to 20 USD" if plots else "price = 12 USD"
        fields = {k: some() for k in ("title", "note", "live", "doc", "source", "count", "cost", "scenario",
                                      "sentence")}
        comment = "".join(rng.choice(PROSE) for _ in range(2)).replace("\n", " ")  # the sentence planner writes quotes it
        yield {"prose": PROSE_PLAN.format(price=price + f' "{some()}"', comment=comment, **fields), "plots": plots}


_SAFE_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "code", "pre", "a", "ul", "ol", "li", "table",
              "thead", "tbody", "tr", "th", "td", "br", "sub", "details", "summary", "wbr", "img", "hr", "s",
              "blockquote"}
_SAFE_ATTRIBUTES = {"href", "src", "alt", "title", "open", "style", "class", "start"}


def unsafe_html(markdown: str) -> list[str]:
    """What a renderer that trusts the text would make dangerous of a report: the Markdown rendered to
    HTML (markdown-it-py, raw HTML on, every link allowed), then each tag and attribute read back as a
    sanitizer reads them. Returns the findings: tags beyond what the report itself writes, event
    handlers, URLs with a scheme other than http(s)/mailto, images other than the report's own plots."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.validateLink = lambda url: True  # as a renderer that does not filter links
    found: list[str] = []

    class Audit(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in _SAFE_TAGS:
                found.append(f"<{tag}>")
            for key, value in attrs:
                value = value or ""
                bare = re.sub(r"[\x00-\x20\x7f]", "", value).lower()
                if key.startswith("on") or key not in _SAFE_ATTRIBUTES:
                    found.append(f"<{tag} {key}=...>")
                elif key in ("href", "src") and re.match(r"[a-z][a-z0-9+.-]*:", bare) \
                        and not bare.startswith(("http:", "https:", "mailto:")):
                    found.append(f"<{tag} {key}={value!r}>")
                elif key == "src" and not re.fullmatch(r"[\w.-]+\.png", value):
                    found.append(f"<{tag} src={value!r}> (not one of the report's plots)")
                elif key == "style" and not re.fullmatch(r"text-align:(left|right|center)", value):
                    found.append(f"<{tag} style={value!r}>")

        handle_startendtag = handle_starttag

    Audit(convert_charrefs=True).feed(md.render(markdown))
    return found


# ---- running one case -------------------------------------------------------------------

def run_plan(case: dict, workdir: Path) -> None:
    import planner
    from planner.language.errors import PlanError, render
    from planner.questions.checks import run_checks

    try:
        plan = planner.loads(case["plan"], "fuzz.plan", base=workdir)
    except PlanError as err:
        render(err)
        return
    for scenario in plan.resolve_scenarios("all")[:3]:
        try:
            plan.evaluate(scenario)
        except PlanError as err:
            render(err)
    for r in run_checks(plan):
        if r.passed and r.lhs is not None:
            assert not isinstance(r.lhs, float) or r.lhs == r.lhs, "a check with a NaN value passed"
    if case.get("deep"):
        from planner.outputs.build import report_outputs, workbook_output
        from planner.outputs.viewmodel import analyse

        try:
            analysis = analyse(plan)
            workbook_output(analysis, "fuzz.xlsx")
            report_outputs(analysis, "fuzz.md", None, plots=False)
        except PlanError as err:
            render(err)


def run_cli(case: dict, workdir: Path) -> None:
    from planner.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(case["cli"])
        except SystemExit as exit:  # argparse's refusal of an option's value, with the usage
            code = exit.code
            assert code == 2 and "error: argument" in err.getvalue(), f"exit {code}: {err.getvalue()[-2000:]}"
    assert code in (0, 1, 2), f"exit {code}: {err.getvalue()[-2000:]}"
    assert "Traceback" not in err.getvalue()


_VIEW = {}


def run_template(case: dict, workdir: Path) -> None:
    from planner.language.errors import PlanError, render
    from planner.outputs import report

    if "view" not in _VIEW:
        import planner
        from planner.outputs.viewmodel import analyse, view_model

        _VIEW["view"] = view_model(analyse(planner.load(ROOT / "sheets" / "token_cost.plan")),
                                   {"enabled": False, "note": "", "files": {}})
    path = workdir / "t.j2"
    path.write_text(case["template"], encoding="utf-8")
    try:
        report.render(_VIEW["view"], str(path))
    except PlanError as err:
        render(err)


def run_prose(case: dict, workdir: Path) -> None:
    """`planner report` of a plan with hostile prose: a report or a plan error, never an internal error;
    and nothing in the report that a browser would run."""
    from planner.cli import main

    plan = workdir / "prose.plan"
    plan.write_text(case["prose"], encoding="utf-8")
    target = workdir / "out" / "prose.md"
    out, err = io.StringIO(), io.StringIO()
    args = ["--no-cache", "report", str(plan)] + (["-o", str(target)] if case["plots"] else [])
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    assert code in (0, 1, 2), f"exit {code}: {err.getvalue()[-2000:]}"
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()[-2000:]
    if code == 2:
        assert "error[" in err.getvalue(), err.getvalue()[-2000:]
        return
    report = target.read_text(encoding="utf-8") if case["plots"] else out.getvalue()
    problems = unsafe_html(report)
    assert not problems, f"unsafe HTML in the report: {problems[:5]}"


# ---- the compiled-plan cache: corrupt, truncated, swapped and concurrently written entries ----------

CACHE_PLANS = ["x = 3\ny = x * 2\n", "a = 2 where a > 0\nb = sum(a * k for k in 1..4)\n",
               'import "lib.plan" as lib\nz = lib.x + 1\n', "p = 10%\nq = (1 + p)^3\n"]
CACHE_OPS = ["flip", "truncate", "append", "swap", "header", "empty", "concurrent", "zero"]


def cache_cases(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        yield {"cache": rng.choice(CACHE_OPS), "plans": rng.sample(range(len(CACHE_PLANS)), 2),
               "at": rng.random(), "bytes": rng.randint(1, 64), "seed": rng.randint(0, 2**31)}


def run_cache(case: dict, workdir: Path) -> None:
    """Corrupt the cache, then load: the figures are the cold ones (or a PlanError), never others."""
    import os
    import threading

    from planner.compute import cache
    from planner.compute.evaluation import load

    import tempfile

    folder = Path(tempfile.mkdtemp(dir=workdir, prefix="xdg-"))  # each case its own cache: an entry another
    os.environ["XDG_CACHE_HOME"] = str(folder)  # case left empty or zeroed is not this case's to corrupt
    cache.enable(True)
    try:
        paths = []
        for i in case["plans"]:
            path = workdir / f"p{i}.plan"
            path.write_text(CACHE_PLANS[i])
            paths.append(path)
        cold = [dict(load(p).evaluate().values) for p in paths]  # writes the entries (cache on)
        entries = sorted((folder / "planner").glob("*.cache"))
        rng = random.Random(case["seed"])
        op = case["cache"]
        if entries:
            entry = entries[0]
            data = bytearray(entry.read_bytes())
            at = int(case["at"] * max(len(data) - 1, 1))
            if op == "flip":
                for _ in range(case["bytes"]):
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
                entry.write_bytes(bytes(data))
            elif op == "truncate":
                entry.write_bytes(bytes(data[:at]))
            elif op == "append":
                entry.write_bytes(bytes(data) + os.urandom(case["bytes"]))
            elif op == "swap" and len(entries) > 1:  # one plan's entry under the other's name
                a, b = entries[0].read_bytes(), entries[1].read_bytes()
                entries[0].write_bytes(b)
                entries[1].write_bytes(a)
            elif op == "header":
                entry.write_bytes(bytes(data[:at]) + os.urandom(case["bytes"]) + bytes(data[at + case["bytes"]:]))
            elif op == "empty":
                entry.write_bytes(b"")
            elif op == "zero":
                entry.write_bytes(bytes(len(data)))
        if op == "concurrent":  # writers and readers at once, on fresh entries
            for e in entries:
                e.unlink()
            got: list = []
            threads = [threading.Thread(target=lambda p=p: got.append((p, dict(load(p).evaluate().values))))
                       for p in paths * 3]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for p, values in got:
                assert values == cold[paths.index(p)], f"{p.name}: {values} != {cold[paths.index(p)]}"
        for p, expected in zip(paths, cold):
            values = dict(load(p).evaluate().values)
            assert values == expected, f"{p.name} after {op}: {values} != {expected}"
    finally:
        cache.enable(False)


# ---- the language server's framing: a client that sends garbage --------------------------------------

def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


# Whole frames the server must refuse and read on after (each ends where the next message may start)
BAD_FRAMES = [
    b"Content-Length: 99999999999999\r\n\r\n", b"Content-Length: 18446744073709551617\r\n\r\n",
    b"Content-Length: ten\r\n\r\n", b"Content-Length: -5\r\n\r\n", b"Content-Type: x\r\n\r\n",
    _frame(b'{"jsonrpc": "2.0", "id": 9, "method": '), _frame(b"[1, 2, 3]"), _frame(b"\xff\xfe\x00"),
    _frame(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}'), _frame(b'{"jsonrpc": "2.0", "method": 5}'),
    _frame(b'"just a string"'), _frame(b"null"), _frame(b"{}"), b"\r\n\r\n\n",
    _frame(b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/nonsense", "params": 3}'),
]
PIECES = [b"Content-Length: ", b"12", b"\r\n", b"\r\n\r\n", b"{", b"}", b"Content-Length: 99999999999999999999",
          b"Content-Type: x", b"\n", b"\xff\xfe", b'"method"', b":"]


def framing_cases(seed: int, count: int):
    rng = random.Random(seed)
    for i in range(count):
        whole = rng.random() < 0.6  # whole bad frames: the good session after them must be answered
        if whole:
            parts = [rng.randrange(len(BAD_FRAMES)) for _ in range(rng.randint(1, 6))]
        else:
            parts = [rng.choice([rng.randrange(len(PIECES)), -rng.randint(1, 40)]) for _ in range(rng.randint(1, 12))]
        yield {"framing": "whole" if whole else "raw", "parts": parts, "early": rng.random() < 0.3,
               "seed": rng.randint(0, 2**31)}


def run_framing(case: dict, workdir: Path) -> None:
    """A real `planner lsp` fed the case's bytes, then a good session: it never prints a traceback, every
    frame it writes is JSON-RPC (errors only with the protocol's codes), it answers the good session
    after whole bad frames, and it ends at the end of its input."""
    import subprocess

    rng = random.Random(case["seed"])
    if case["framing"] == "whole":
        garbage = b"".join(BAD_FRAMES[i] for i in case["parts"])
    else:
        garbage = b"".join(PIECES[i] if i >= 0 else rng.randbytes(-i) for i in case["parts"])
    plan = workdir / "served.plan"
    plan.write_text("x = 3 GB\ny = x * 2\n", encoding="utf-8")
    uri = plan.as_uri()
    good = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": None, "rootUri": workdir.as_uri(), "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "plan", "version": 1, "text": plan.read_text()}}},
            {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
             "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}}},
            {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"}]
    session = b"".join(_frame(json.dumps(m).encode()) for m in good)
    # the garbage before initialize (early requests, -32002) or after it
    stream = garbage + session if case["early"] else session[:0] + _frame(json.dumps(good[0]).encode()) + \
        garbage + b"".join(_frame(json.dumps(m).encode()) for m in good[1:])
    proc = subprocess.run([sys.executable, "-m", "planner", "lsp"], input=stream, capture_output=True,
                          timeout=60, cwd=workdir)
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err[-2000:]
    out, answered = proc.stdout, set()
    while out:
        head, sep, rest = out.partition(b"\r\n\r\n")
        assert sep, f"a partial frame at the end of the output: {out[:200]!r}"
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
        message = json.loads(rest[:length])
        out = rest[length:]
        if "error" in message:
            code = message["error"]["code"]
            assert code in (-32700, -32600, -32002, -32601, -32602), message
            assert "traceback" not in json.dumps(message).lower(), message
        if "id" in message and "result" in message:
            answered.add(message["id"])
    if case["framing"] == "whole":
        assert {1, 2, 3} <= answered, f"the good session after whole bad frames was not answered: {answered}"
        assert proc.returncode == 0, f"exit {proc.returncode} after shutdown and exit: {err[-1000:]}"
    else:
        assert proc.returncode in (0, 1), f"exit {proc.returncode}: {err[-1000:]}"  # 1: exit without shutdown


# ---- workbooks: `planner import` of a mutated export ---------------------------------------------------

def _cell_values():
    import datetime

    return ["1e400", "-1e400", "1e309%", "1e-400", "1e99999999", "-1e-99999999", 1e308, 1e-310, -0.0, 0, -1, 10 ** 15,
            "", " ", "65%", "1,800", "1_000", "nan", "inf", "-inf", "TRUE", True, False, "0x10",
            datetime.datetime(2024, 1, 5), datetime.date(1900, 1, 1), datetime.time(12, 30), datetime.timedelta(days=3),
            "#DIV/0!", "#N/A", "#REF!", "=1+", "=A1*2", "=1/0", "=SUM(", "'=2", "=Inputs!B7", "2.5", "3/4", "1e", ".5",
            "١٢", "\u202e12", "x" * 5000, None, 0.65, 2.25, 240, 1e-300, 1e300,
            # typed into a Unit column: another unit of the same dimension, of another, or none
            "USD", "kUSD", "MUSD/h", "USD/s", "GB", "1e400 USD", "USD^99999", "(", "%", "h^-1", "USD/h/h"]


WORKBOOK_OPS = ["cells", "cells", "cells", "digits", "truncate", "duplicate", "lying", "bomb", "flip", "drop", "junk",
                "doctype", "grow"]
_BOOKS: dict = {}


def workbook_cases(seed: int, count: int):
    rng = random.Random(f"workbook-{seed}")
    values = _cell_values()
    for _ in range(count):
        yield {"workbook": rng.choice(WORKBOOK_OPS), "cells": [(rng.random(), rng.randrange(len(values)))
                                                                for _ in range(rng.randint(1, 3))],
               "at": rng.random(), "bytes": rng.randint(1, 64), "seed": rng.randint(0, 2**31),
               "args": rng.choice([[], ["--write", "--dry-run"], ["--write"], ["--format", "json"]])}


def _exported(workdir: Path) -> tuple[str, bytes, list]:
    """The buy-vs-rent plan's text, its exported workbook and the cells an analyst may type into (every
    input on the Inputs sheet; every input row of every scenario column on the Scenarios sheet)."""
    if "book" not in _BOOKS:
        import openpyxl

        from planner.outputs.excel.writer import Book, to_bytes
        from planner.plan import load_compiled

        text = (ROOT / "tests" / "plans" / "buy_vs_rent.plan").read_text(encoding="utf-8")
        path = workdir / "fuzz.plan"  # the plan's own name: a write is refused as another plan's otherwise
        path.write_text(text, encoding="utf-8")
        data = to_bytes(Book(load_compiled(path)).build())
        wb = openpyxl.load_workbook(io.BytesIO(data))
        cells = []
        for dn in wb.defined_names.values():
            for sheet, coord in dn.destinations:
                if sheet == "Inputs":
                    cells.append(("Inputs", coord.replace("$", "")))
                    cells.append(("Inputs", "C" + coord.split("$")[-1]))  # its Unit column
        ws = wb["Scenarios"]
        rows = [c.row for c in ws["B"] if isinstance(c.value, str) and c.value in
                {"gpus", "server_price", "rent_rate", "utilization", "discount_rate", "hosting"}]
        cols = [c.column for c in ws[4] if c.column >= 4 and c.value]
        cells += [("Scenarios", ws.cell(row=r, column=c).coordinate) for r in rows for c in cols]
        _BOOKS["book"] = (text, data, sorted(cells))
    return _BOOKS["book"]


def _mutated_book(case: dict, data: bytes, cells: list) -> bytes:
    import struct
    import warnings
    import zipfile

    import openpyxl

    rng = random.Random(case["seed"])
    values = _cell_values()
    wb = openpyxl.load_workbook(io.BytesIO(data))
    for at, i in case["cells"]:
        sheet, coord = cells[int(at * len(cells))]
        try:
            wb[sheet][coord].value = values[i]
        except (ValueError, TypeError):  # openpyxl refuses to store it: the analyst could not type it either
            pass
    out = io.BytesIO()
    wb.save(out)
    data = out.getvalue()
    op = case["workbook"]
    if op == "truncate":
        return data[:int(case["at"] * len(data))]
    if op == "flip":
        data = bytearray(data)
        for _ in range(case["bytes"]):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(data)
    if op == "lying":  # a part's sizes in its headers say less (or more) than it holds
        data = bytearray(data)
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
            info = rng.choice(z.infolist())
        size = max(0, info.file_size + rng.choice([-info.file_size, -1, 1, 1000, -100]))
        struct.pack_into("<I", data, info.header_offset + 22, size)
        central = data.find(b"PK\x01\x02" + bytes(data[info.header_offset + 4:info.header_offset + 6]))
        while central >= 0 and data[central + 46:central + 46 + len(info.filename)] != info.filename.encode():
            central = data.find(b"PK\x01\x02", central + 4)
        if central >= 0:
            struct.pack_into("<I", data, central + 24, size)
        return bytes(data)
    parts = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            parts[info.filename] = z.read(info.filename)
    names = sorted(parts)
    extra = []
    if op == "duplicate":
        name = rng.choice(names)
        extra.append((name, parts[name][:int(case["at"] * len(parts[name]))]))
    elif op == "bomb":  # small, but a ratio no workbook has
        parts[rng.choice(names)] = b"<x>" + b" " * rng.choice([2_000_000, 5_000_000]) + b"</x>"
    elif op == "drop":
        del parts[rng.choice(names)]
    elif op == "digits":  # a number cell's saved value as no spreadsheet writes it: huge, tiny, 5,000 digits
        name = rng.choice([n for n in names if n.startswith("xl/worksheets/")])
        number = rng.choice([b"9" * 400, b"9" * 5000, b"1e400", b"-1E-400", b"1e308", b"NaN", b"INF", b"", b"0x1F"])
        parts[name] = re.sub(rb"<v>-?[0-9.]+(?:[eE][-+]?[0-9]+)?</v>", b"<v>" + number + b"</v>", parts[name],
                             count=rng.randint(1, 50))
    elif op == "junk":
        parts[rng.choice(names)] = rng.randbytes(case["bytes"] * 10)
    elif op == "doctype":
        name = rng.choice([n for n in names if n.endswith(".xml")])
        parts[name] = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>' + parts[name].split(b"?>", 1)[-1]
    elif op == "grow":  # many parts, or a large honest one
        if rng.random() < 0.5:
            for i in range(rng.choice([10, 1200])):
                extra.append((f"xl/media/p{i}.bin", b"x"))
        else:
            parts["xl/media/noise.bin"] = rng.randbytes(200_000)
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        warnings.simplefilter("ignore")  # a duplicate name
        for name, body in list(parts.items()) + extra:
            z.writestr(name, body)
    return out.getvalue()


def run_workbook(case: dict, workdir: Path) -> None:
    """`planner import` (and `--write`, `--dry-run`) of a mutated workbook: exit 0 or 2 with a clear error,
    never an internal error or a traceback; the plan is never changed by a failed or dry run."""
    from planner.cli import main

    text, data, cells = _exported(workdir)
    plan = workdir / "fuzz.plan"
    plan.write_text(text, encoding="utf-8")
    book = workdir / "fuzz.xlsx"
    book.write_bytes(_mutated_book(case, data, cells))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["import", str(book), "--plan", str(plan), *case["args"]])
    assert code in (0, 2), f"exit {code}: {err.getvalue()[-2000:]}"
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()[-2000:]
    if code != 0 or "--dry-run" in case["args"] or "--write" not in case["args"]:
        assert plan.read_text(encoding="utf-8") == text, f"the plan changed (exit {code})"


# ---- main --------------------------------------------------------------------------------

def cases(kind: str, seed: int, count: int):
    if kind in ("tokens", "chars", "lines"):
        return plan_cases(kind, seed, count)
    if kind == "grammar":
        return grammar_cases(seed, count)
    if kind == "hypothesis":
        return hypothesis_cases(seed, count)
    if kind == "cli":
        return cli_cases(seed, count)
    if kind == "cache":
        return cache_cases(seed, count)
    if kind == "template":
        return template_cases(seed, count)
    if kind == "framing":
        return framing_cases(seed, count)
    if kind == "distribution":
        return distribution_cases(seed, count)
    if kind == "workbook":
        return workbook_cases(seed, count)
    if kind == "prose":
        return prose_cases(seed, count)
    raise SystemExit(f"unknown kind {kind}")


def main(argv: list[str]) -> int:
    import tempfile

    from planner.language.limits import deep

    kind, seed, count, state = argv[0], int(argv[1]), int(argv[2]), Path(argv[3])
    import planner.outputs.report as report

    report.RENDER_SECONDS = 5  # the shipped report renders in well under a second: a slow case is found sooner
    sys.setrecursionlimit(50_000)  # as the CLI does
    runner = {"cli": run_cli, "template": run_template, "cache": run_cache, "framing": run_framing,
              "distribution": run_distribution, "workbook": run_workbook, "prose": run_prose}.get(kind, run_plan)
    findings, ran, slowest = [], 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "lib.plan").write_text("x = 1\n")
        for case in cases(kind, seed, count):
            state.write_text(json.dumps(case), encoding="utf-8")
            start = time.perf_counter()
            try:
                deep(runner, case, workdir)  # as the CLI runs every command
            except Exception as exc:  # noqa: BLE001 - a finding: anything but a PlanError
                findings.append({"case": case, "error": f"{type(exc).__name__}: {exc}"[:500],
                                 "traceback": traceback.format_exc()[-3000:]})
            took = time.perf_counter() - start
            slowest = max(slowest, took)
            if took > SECONDS_PER_CASE:
                findings.append({"case": case, "error": f"took {took:.1f} s (limit {SECONDS_PER_CASE} s)"})
            ran += 1
    print(json.dumps({"kind": kind, "ran": ran, "slowest": round(slowest, 2), "findings": findings}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
