"""Imports, scenario axes and the shipped hardware library (issue 6)."""

import itertools

import pytest
from conftest import SHEETS

import planner
from planner.language.errors import PlanError, flatten, render
from planner.language.imports import library_entries


def test_import_with_namespace_and_selected_names(plan_file, tmp_path):
    plan_file('bw = 3 TB/s "bandwidth" [source "sheet"]\npeak = 1000 TFLOP/s\n'
              'twice(x) = 2 * x\nderived = bw * 1 s -> TB\nscenario ignored { bw = 1 TB/s }\n', "gpu.plan")
    path = plan_file('import "gpu.plan" as g\nfrom "gpu" import peak, twice\n'
                     'w = 140 GB\nt = w / g.bw -> ms\nc = twice(1e12) / peak -> ms\nd = g.twice(g.derived) -> TB\n'
                     'scenario faster { g.bw = 6 TB/s }\n')
    plan = planner.load(path)
    assert plan.evaluate().display("t") == pytest.approx(46.6667, abs=1e-4)
    assert plan.evaluate("faster").display("t") == pytest.approx(23.3333, abs=1e-4)
    assert plan.evaluate().display("c") == pytest.approx(2.0)
    assert plan.evaluate().display("d") == pytest.approx(6.0)
    assert plan.model.quantities["g.bw"].tags == ("source: sheet",)
    assert plan.scenario_names == ["faster"]  # the imported plan's scenarios stay behind


def test_import_from_the_library():
    plan = planner.loads('import "hardware/h100_sxm.plan" as h100\nt = 140 GB / h100.hbm_bandwidth -> ms\n')
    assert plan.evaluate().display("t") == pytest.approx(140 / 3.35, rel=1e-12)


@pytest.mark.parametrize("files,main,family,needle", [
    ({}, 'import "nope.plan" as n\n', "import", 'cannot find "nope.plan"'),
    ({}, 'import "hardware/h100.plan" as n\n', "import",
     'did you mean "hardware/h100_nvl.plan", "hardware/h100_pcie.plan" or "hardware/h100_sxm.plan"?'),
    ({"a.plan": 'import "b.plan"\nx = 1\n', "b.plan": 'import "a.plan"\ny = 2\n'}, 'import "a.plan"\n',
     "import", "import cycle: a.plan -> b.plan -> a.plan"),
    ({"g.plan": "bw = 1\n"}, 'from "g.plan" import bw\nbw = 2\n', "duplicate", "`bw` is defined twice"),
    ({"g.plan": "bw = 1\n"}, 'import "g.plan" as x\nimport "g.plan" as x\n', "duplicate", "namespace `x` is imported twice"),
    ({"g.plan": "bw = 1\n"}, 'from "g.plan" import bww\n', "import", "did you mean `bw`?"),
    ({"g.plan": "bw = 1 TB/s\ny = bw + 1 s\n"}, 'import "g.plan"\nz = g.y\n', "unit", "g.plan:2:"),
])
def test_import_errors(plan_file, files, main, family, needle):
    for name, text in files.items():
        plan_file(text, name)
    path = plan_file(main, "main.plan")
    with pytest.raises(PlanError) as info:
        planner.load(path)
    err = flatten(info.value)[0]
    assert err.family == family
    assert needle in render(info.value)


AXES = """
params = 70e9
bits = 16 bit
bw = 3 TB/s
w = params * bits -> GB
t = w / bw -> ms
axis gpu { h100 { bw = 3.35 TB/s }
           h200 { bw = 4.8 TB/s } }
axis precision {
    bf16 { bits = 16 bit }
    fp8  { bits = 8 bit }
}
scenario slow { bw = 1 TB/s }
"""


def test_axes_make_every_combination():
    plan = planner.loads(AXES)
    assert plan.scenario_names == ["slow", "h100/bf16", "h100/fp8", "h200/bf16", "h200/fp8"]
    for (gpu, bw), (prec, bits) in itertools.product([("h100", 3.35e12), ("h200", 4.8e12)],
                                                     [("bf16", 2), ("fp8", 1)]):
        assert plan.evaluate(f"{gpu}/{prec}").values["t"] == pytest.approx(70e9 * bits / bw)


@pytest.mark.parametrize("spec,expected", [
    ("gpu=h100,precision=fp8", ["h100/fp8"]),
    ("gpu=h200", ["h200/bf16", "h200/fp8"]),
    ("precision=bf16,gpu=all", ["h100/bf16", "h200/bf16"]),
    ("gpu=h100,gpu=h200,precision=fp8", ["h100/fp8", "h200/fp8"]),
    ("h200/fp8,slow", ["h200/fp8", "slow"]),
])
def test_axis_selection(spec, expected):
    assert planner.loads(AXES).resolve_scenarios(spec) == expected


def test_axis_selection_from_cli(cli, plan_file):
    code, out, _ = cli("eval", plan_file(AXES), "--scenario", "gpu=h200,precision=fp8", "--only", "t")
    assert code == 0
    assert "h200/fp8" in out and "14.5833" in out
    code, _, err = cli("eval", plan_file(AXES), "--scenario", "gpu=a100")
    assert code == 2 and "axis `gpu` has no `a100`" in err


def test_axes_that_set_the_same_input_clash():
    with pytest.raises(PlanError) as info:
        planner.loads(AXES + "axis other { x { bw = 1 TB/s } }\n")
    assert "axes `gpu` and `other` both set `bw`" in str(info.value)


def test_checks_follow_axes():
    plan = planner.loads(AXES + "check t ~= 14.583 ms in gpu=h200, precision=fp8\n")
    from planner.questions.checks import run_checks

    results = run_checks(plan)
    assert [(r.scenario, r.passed) for r in results] == [("h200/fp8", True)]


# ---- the hardware library -----------------------------------------------------

def test_library_has_the_accelerators():
    entries = library_entries()
    for name in ["h100_sxm", "h200", "a100_80gb", "a100_40gb", "l40s", "mi300x"]:
        assert f"hardware/{name}.plan" in entries


# Dense peaks from the vendors' documents (the sparse figure is twice these): the H100 whitepaper's 989.4,
# the H200 datasheet's 1,979 with sparsity halved.
DENSE_BF16 = {"h100_sxm": 989.4, "h200": 989.5, "a100_80gb": 312, "a100_40gb": 312, "l40s": 362.05, "mi300x": 1307.4}
BANDWIDTH = {"h100_sxm": 3.35e12, "h200": 4.8e12, "a100_80gb": 2.039e12, "a100_40gb": 1.555e12, "l40s": 864e9,
             "mi300x": 5.3e12}
# Memory as the driver reports it (nvidia-smi MiB, ROCm bytes) and as marketed.
CAPACITY = {"h100_sxm": 81559 * 2**20, "h200": 143771 * 2**20, "a100_80gb": 81920 * 2**20, "a100_40gb": 40960 * 2**20,
            "l40s": 46068 * 2**20, "mi300x": 206141652992}
MARKETED = {"h100_sxm": 80e9, "h200": 141e9, "a100_80gb": 80e9, "a100_40gb": 40e9, "l40s": 48e9, "mi300x": 192e9}


@pytest.mark.parametrize("gpu", sorted(DENSE_BF16))
def test_library_figures_are_dense_and_sourced(gpu):
    plan = planner.loads(f'import "hardware/{gpu}.plan" as g\n', all_imports=True)
    ev = plan.evaluate()
    q = plan.model.quantities
    assert ev.values["g.peak_bf16_dense"] == pytest.approx(DENSE_BF16[gpu] * 1e12)
    assert ev.values["g.hbm_bandwidth"] == pytest.approx(BANDWIDTH[gpu])
    assert ev.values["g.hbm_capacity_driver"] == pytest.approx(CAPACITY[gpu])
    assert ev.values["g.hbm_capacity_marketing"] == pytest.approx(MARKETED[gpu])
    assert ev.values["g.hbm_capacity_driver"] > ev.values["g.hbm_capacity_marketing"]  # "80 GB" is more than 80e9 bytes
    # the old name keeps its old meaning, the vendor's figure, and says so where a plan uses it
    assert ev.values["g.hbm_capacity"] == ev.values["g.hbm_capacity_marketing"]
    user = planner.loads(f'import "hardware/{gpu}.plan" as g\nfree = g.hbm_capacity - 10 GB\n', "u.plan")
    (warning,) = user.warnings
    assert warning.message.startswith("`g.hbm_capacity` is deprecated") and "hbm_capacity_driver" in warning.message
    assert warning.span.line == 2
    # about twice the dense figure (the L40S datasheet rounds: 362.05 dense, 733 sparse)
    assert ev.values["g.peak_bf16_sparse"] == pytest.approx(2 * DENSE_BF16[gpu] * 1e12, rel=0.02)
    for name, quantity in q.items():
        if quantity.is_input:
            assert any(t.startswith("source:") for t in quantity.tags), name
        if name.endswith("_sparse"):
            assert "with sparsity" in quantity.tags, name
        if name.endswith("_dense") and "peak" in name:
            assert "with sparsity" not in quantity.tags, name


def test_h100_dense_bf16_is_989_not_1979():
    plan = planner.loads('import "hardware/h100_sxm.plan" as h100\npeak = h100.peak_bf16_dense\n')
    assert plan.evaluate().display("h100.peak_bf16_dense") == pytest.approx(989.4)


# ---- imports bring only what the plan uses ------------------------------------------

LIB = "bw = 3 TB/s\ncap = 80 GB\nspare = 7\nratio = cap / bw -> s\nhelper(x) = x * spare\nunused_f(x) = x\n"


@pytest.mark.parametrize("main, kept, dropped", [
    ('import "lib.plan" as g\nt = g.cap / g.bw -> s\n', {"g.cap", "g.bw"}, {"g.spare", "g.ratio"}),
    ('import "lib.plan" as g\nt = g.ratio\n', {"g.ratio", "g.cap", "g.bw"}, {"g.spare"}),  # through what it uses
    ('import "lib.plan" as g\nt = g.helper(2)\n', {"g.spare"}, {"g.cap", "g.bw", "g.ratio"}),  # through a function
    ('import "lib.plan" as g\nx = 1 TB/s\nscenario s { x = g.bw }\n', {"g.bw"}, {"g.cap"}),  # an override's value
    ('import "lib.plan" as g\nscenario s { g.spare = 8 }\n', {"g.spare"}, {"g.bw"}),  # an override's target
    ('import "lib.plan" as g\ncheck g.cap == 80 GB\n', {"g.cap"}, {"g.bw"}),  # a check
    ('from "lib.plan" import cap\n', {"cap"}, {"lib.bw", "lib.spare"}),  # selected names stay
    # dotted names in questions: a sweep's axis and its `show`, a solve's target, an optimisation's input
    ('import "lib.plan" as g\nt = 2 TB / g.bw -> s\nsweep g.bw in [1 TB/s, 2 TB/s] show t\n', {"g.bw"},
     {"g.cap", "g.spare"}),
    ('import "lib.plan" as g\nt = 1\nsweep t in [1, 2] show g.ratio\n', {"g.ratio", "g.cap", "g.bw"}, {"g.spare"}),
    ('import "lib.plan" as g\nx = 3 * g.spare\nsolve g.spare where x = 30 as most\n', {"g.spare"},
     {"g.bw"}),
    ('import "lib.plan" as g\ny = 1\nsolve g.spare where y = 1\n', {"g.spare"}, {"g.bw"}),
    ('import "lib.plan" as g\nt = 2 TB / g.bw\nminimize t over g.bw in [1 TB/s, 2 TB/s]\n', {"g.bw"}, {"g.cap"}),
])
def test_imports_bring_only_what_is_used(plan_file, main, kept, dropped):
    plan_file(LIB, "lib.plan")
    path = plan_file(main, "main.plan")
    names = set(planner.load(path).model.quantities)
    assert kept <= names
    assert not (dropped & names)
    everything = set(planner.load(path, all_imports=True).model.quantities)
    assert kept | dropped <= everything


def test_questions_take_imported_names(plan_file, cli):
    plan_file("b = 4 where integer, 1 <= b <= 100\nw = 3\n", "l13.plan")
    path = plan_file('import "l13.plan" as l13\nimport "hardware/h100_sxm.plan" as h100\n'
                     "t = 16 GB / h100.hbm_bandwidth -> ms\ncost = l13.b * l13.w\n"
                     "solve max l13.b where cost <= 30 as most_b\n"
                     "sweep h100.hbm_bandwidth in 2 TB/s..4 TB/s count 3 show t, h100.hbm_bandwidth\n"
                     "minimize t over h100.hbm_bandwidth in [2 TB/s, 3 TB/s] in base as fastest\n"
                     "check most_b == 10\ncheck fastest == 3 TB/s\n", "main.plan")
    code, out, _ = cli("check", path)
    assert code == 0 and "2 passed" in out
    code, out, _ = cli("sweep", path, "--format", "csv")
    assert code == 0 and "4,4" in out.replace(".0", "")  # 16 GB at 4 TB/s: 4 ms
    code, out, _ = cli("solve", path, "--for", "h100.hbm_bandwidth", "--where", "t = 8 ms")
    assert code == 0 and "h100.hbm_bandwidth = 2 TB/s" in out


def test_eval_all_shows_unused_imports(plan_file, cli):
    plan_file(LIB, "lib.plan")
    path = plan_file('import "lib.plan" as g\nt = g.cap / g.bw -> s\n', "main.plan")
    code, out, _ = cli("eval", path)
    assert code == 0 and "g.cap" in out and "g.spare" not in out
    code, out, _ = cli("eval", path, "--all")
    assert code == 0 and "g.spare" in out and "g.ratio" in out


# ---- the shipped comparison plan: two models, two GPUs, three precisions --------

def _hand(params, layers, bits, bw, peak, batch=16, context=4096):
    weights = params * bits / 8
    kv = 2 * layers * 8 * 128 * 2 * context
    return max((weights + batch * kv) / bw, 2 * params * batch / peak), weights + batch * kv


MODELS = {"small": (8e9, 32), "large": (70e9, 80)}
GPUS = {"h100": (3.35e12, 989.4e12, 1978.9e12, 81559 * 2**20), "mi300x": (5.3e12, 1307.4e12, 2614.9e12, 206141652992)}
PRECISIONS = {"bf16": (16, False), "fp8": (8, True), "int4": (4.15, False)}


@pytest.mark.parametrize("model,gpu,precision", list(itertools.product(MODELS, GPUS, PRECISIONS)))
def test_gpu_compare_matches_hand_calculation(model, gpu, precision):
    plan = planner.load(SHEETS / "gpu_compare.plan")
    params, layers = MODELS[model]
    bw, peak16, peak8, capacity = GPUS[gpu]
    bits, fp8 = PRECISIONS[precision]
    step, memory = _hand(params, layers, bits, bw, peak8 if fp8 else peak16)
    ev = plan.evaluate(f"{model}/{gpu}/{precision}")
    assert ev.values["step_time"] == pytest.approx(step, rel=1e-12)
    assert ev.values["memory_needed"] == pytest.approx(memory, rel=1e-12)
    assert ev.values["fits_one_gpu"] is (memory <= capacity)


def test_library_command(cli):
    code, out, _ = cli("library")
    assert code == 0 and "hardware/h100_sxm.plan" in out and "NVIDIA H100 SXM5 80GB" in out
    code, out, _ = cli("library", "hardware/h100_sxm")
    assert code == 0 and "peak_bf16_dense = 989.4 TFLOP/s" in out
    code, _, err = cli("library", "hardware/h100")
    assert code == 2 and "`hardware/h100_pcie.plan` or `hardware/h100_sxm.plan`?" in err


def test_scenario_reference_to_a_combination():
    from planner.questions.checks import run_checks

    plan = planner.loads(AXES + 'check t@"h100/bf16" / t@"h200/fp8" ~= 2.8657\n')
    assert [r.passed for r in run_checks(plan)] == [True]
    with pytest.raises(PlanError, match="unknown scenario `h100/fp9`"):
        planner.loads(AXES + 'check t@"h100/fp9" > 0\n')


@pytest.mark.parametrize("member", ["all", "base"])
def test_axis_members_cannot_be_named_all_or_base(member):
    text = f"p = 1\nq = 1\naxis t {{ one {{ p = 1 }}\n {member} {{ p = 2 }} }}\naxis u {{ x {{ q = 1 }}\n y {{ q = 2 }} }}\n"
    with pytest.raises(PlanError, match=f"`{member}` is reserved"):
        planner.loads(text)


def test_a_check_names_a_combination_in_quotes():
    from planner.questions.checks import run_checks

    plan = planner.loads(AXES + 'check t ~= 14.583 ms in "h200/fp8"\n')
    assert [(r.scenario, r.passed) for r in run_checks(plan)] == [("h200/fp8", True)]
