"""Start-up: what a small command imports and builds before it answers.

``planner --version`` answers before any parser is built; a plain ``planner eval`` needs
neither numpy nor SymPy, and from the compiled-plan cache not lark either; data classes are
made on first use (planner.language.lazy) and behave as dataclasses makes them.
"""

import dataclasses
import os
import pickle
import subprocess
import sys
import threading
from typing import Optional

import pytest
from conftest import ROOT

from planner.language import lazy
from planner.language.lazy import lazy_dataclass


def _run(code: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_version_answers_without_the_command_line_parser():
    proc = _run("import sys\nfrom planner.cli import main\ncode = main(['--version'])\n"
                "heavy = {'dataclasses', 'lark', 'numpy', 'planner.language.errors'} & set(sys.modules)\n"
                "assert not heavy, heavy\nsys.exit(code)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("planner ")


def test_a_warm_eval_imports_neither_lark_nor_numpy(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    code = ("import sys\nfrom planner.cli import main\ncode = main(['eval', 'sheets/token_cost.plan', '--scenario', 'all'])\n"
            "heavy = {'lark', 'numpy', 'sympy'} & set(sys.modules)\nprint(sorted(heavy), file=sys.stderr)\n"
            "print(sorted({'dataclasses', 'inspect', 'ast', 'json', 'csv'} & set(sys.modules)),"
            " file=sys.stderr)\nsys.exit(code)\n")
    cold = _run(code, env)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.strip().splitlines()[-2] == "['lark']"  # parsed: lark; evaluated: no numpy
    warm = _run(code, env)
    assert warm.returncode == 0, warm.stderr
    # nor what a plan from the cache does not need: dataclasses (and inspect and ast with it: a third
    # of a warm run's CPU time, so the one trick kept, in planner.language.lazy), json, csv. (typing,
    # hashlib and pickle are imported: avoiding them bought 6%, below what is worth a trick.)
    assert warm.stderr.strip().splitlines()[-2:] == ["[]", "[]"]
    assert warm.stdout == cold.stdout


# ---- lazy data classes ----------------------------------------------------------------------

def _pair(field=dataclasses.field, **params):
    """The same class twice: made by dataclasses now, and lazily (its field declared with ``field``:
    dataclasses' own, or lazy's, which imports nothing)."""

    def body(field):
        return {"__annotations__": {"x": "int", "y": "Optional[str]", "z": "tuple", "w": "int"},
                "y": None, "z": field(default_factory=tuple), "w": field(default=4, compare=False),
                "__module__": __name__, "double": lambda self: 2 * self.x}

    eager = dataclasses.dataclass(type("Eager", (), body(dataclasses.field)), **params)
    made_lazily = lazy_dataclass(type("Lazy", (), body(field)), **params)
    return eager, made_lazily


@pytest.mark.parametrize("field", [dataclasses.field, lazy.field])
@pytest.mark.parametrize("params", [{}, {"frozen": True}, {"frozen": True, "eq": False}, {"repr": False},
                                    {"order": True}])
def test_lazy_data_classes_behave_as_data_classes(params, field):
    eager, lazy_cls = _pair(field, **params)
    assert lazy_cls in lazy._PENDING
    assert lazy_cls.__match_args__ == eager.__match_args__ == ("x", "y", "z", "w")
    a, b = eager(1, "q"), lazy_cls(1, "q")
    assert lazy_cls in lazy._PENDING and vars(b) == vars(a)  # an instance needs only an __init__
    assert repr(b).replace("Lazy", "Eager") == repr(a) or not params.get("repr", True)
    assert (b == lazy_cls(1, "q")) == (a == eager(1, "q"))
    assert (b == lazy_cls(2)) == (a == eager(2))
    assert (b == lazy_cls(1, "q", (), 5)) == (a == eager(1, "q", (), 5))  # w is not compared
    assert b.double() == 2 and b.z == ()
    if params.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            b.x = 5
        assert (hash(b) == hash(lazy_cls(1, "q"))) == (hash(a) == hash(eager(1, "q")))
    if params.get("order"):
        assert (b < lazy_cls(2)) and (a < eager(2))
    assert [(f.name, f.compare, f.default) for f in dataclasses.fields(lazy_cls)] \
        == [(f.name, f.compare, f.default) for f in dataclasses.fields(eager)]
    assert lazy_cls.w == eager.w == 4
    assert lazy_cls.__dataclass_params__.frozen == eager.__dataclass_params__.frozen
    assert dataclasses.replace(b, x=7).x == 7
    assert dataclasses.asdict(b) == dataclasses.asdict(a)


@lazy_dataclass(frozen=True)
class Pickled:
    x: int
    y: Optional[str] = None


def test_a_lazy_instance_pickles_and_comes_back_equal():
    back = pickle.loads(pickle.dumps(Pickled(1, "a")))
    assert back == Pickled(1, "a") and hash(back) == hash(Pickled(1, "a"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.x = 2


def test_a_lazy_class_is_made_by_whatever_asks_first():
    for ask in (lambda c: dataclasses.fields(c), lambda c: dataclasses.is_dataclass(c),
                lambda c: c.__dataclass_params__):
        _, cls = _pair(frozen=True)
        ask(cls)
        assert cls not in lazy._PENDING
    _, cls = _pair(frozen=True)
    made = cls(3)
    _, cls2 = _pair(frozen=True)
    # unpickling builds an instance without __init__: the class stays unmade until it is used
    instance = cls2.__new__(cls2)
    instance.__dict__.update(x=3, y=None, z=(), w=4)
    assert cls2 in lazy._PENDING
    assert repr(instance).endswith("(x=3, y=None, z=(), w=4)") and cls2 not in lazy._PENDING
    assert made.x == 3


def test_own_methods_stay_and_threads_make_a_class_once():
    @lazy_dataclass(frozen=True)
    class Shown:
        x: int
        label: Optional[str] = None

        def __repr__(self) -> str:
            return f"<{self.x}>"

    assert repr(Shown(4)) == "<4>" and Shown(4) == Shown(4) and hash(Shown(4)) == hash(Shown(4))

    @lazy_dataclass(frozen=True)
    class Raced:
        x: int

    seen = []
    threads = [threading.Thread(target=lambda: seen.append(hash(Raced(1)))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 1 and Raced not in lazy._PENDING


def test_the_ir_and_models_are_lazy_data_classes_that_compare_and_pickle():
    import planner
    from planner.language import ir

    plan = planner.loads("x = 2 s\ny = x * 3 -> s\n", "l.plan")
    expr = plan.model.quantities["y"].definition.expr
    assert isinstance(expr, ir.Binary) and dataclasses.is_dataclass(expr)
    again = pickle.loads(pickle.dumps(plan.model))
    back = again.quantities["y"].definition.expr
    # a Source compares by identity (as it always has), so the round trip is compared by its text
    assert repr(back) == repr(expr) and back.span.source.text == expr.span.source.text
    assert back == again.quantities["y"].definition.expr and hash(back) == hash(again.quantities["y"].definition.expr)


def test_a_frozen_lazy_class_stores_its_fields_directly_and_behaves_the_same():
    body = lambda: {"__annotations__": {"x": "int", "y": "Optional[str]"}, "y": "d", "__module__": __name__}  # noqa: E731
    eager = dataclasses.dataclass(type("Eager", (), body()), frozen=True)
    made = lazy_dataclass(type("Lazy", (), body()), frozen=True)
    for args, kwargs in [((1,), {}), ((1, "q"), {}), ((), {"x": 2}), ((3,), {"y": None})]:
        a, b = eager(*args, **kwargs), made(*args, **kwargs)
        assert (b.x, b.y) == (a.x, a.y) and vars(b) == vars(a)
        assert repr(b).replace("Lazy", "Eager") == repr(a) and hash(b) == hash(made(*args, **kwargs))
    assert "object.__setattr__" not in made.__init__.__code__.co_names and "__setattr__" not in made.__init__.__code__.co_names
    with pytest.raises(TypeError):
        made()  # x is required, as in the eager class
    with pytest.raises(TypeError):
        made(1, "q", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made(1).x = 2
    from planner.language import ir
    from planner.language.source import Source, Span

    span = Span(Source("t.plan", "x\n"), 0, 1)
    assert type(span).__init__.__code__.co_names == ("__dict__",)  # the IR's spans and nodes take the direct way
    assert ir.Name("x", span) == ir.Name("x", span) and ir.Name("x", span).span is span


def test_an_instance_gets_only_an_init_with_defaults_and_factories_as_dataclasses_applies_them():
    body = lambda: {"__annotations__": {"x": "int", "items": "list", "tag": "str"},  # noqa: E731
                    "items": dataclasses.field(default_factory=list), "tag": dataclasses.field(default="t", compare=False),
                    "__module__": __name__}
    eager = dataclasses.dataclass(type("Eager", (), body()))
    made = lazy_dataclass(type("Lazy", (), body()))
    a, b, c = made(1), made(1), made(2, [3], "u")
    assert made in lazy._PENDING  # instances built, the class not made
    assert vars(a) == vars(eager(1)) and vars(c) == vars(eager(2, [3], "u"))
    a.items.append(5)
    assert b.items == [] and a.items is not b.items  # the factory runs per instance
    with pytest.raises(TypeError):
        made()
    assert (a == made(1, [5])) and made not in lazy._PENDING  # comparing makes the class
    assert vars(made(1)) == vars(eager(1))  # and its __init__ is then the data class's


def test_the_command_line_unfreezes_what_it_froze(tmp_path):
    """_load freezes the loaded plan for the collector (a one-shot command need not walk it again);
    main() gives it back when it returns, so that running it in-process, many times, leaks nothing."""
    import gc

    from planner.cli import main

    path = tmp_path / "f.plan"
    path.write_text("x = 2\ny = x * 3\n", encoding="utf-8")
    gc.unfreeze()
    assert main(["--no-cache", "eval", str(path)]) == 0
    assert gc.get_freeze_count() == 0


def test_what_a_paused_collector_built_skips_the_young_generations():
    """In the command line's process, what paused_gc's block built is in the collector's oldest
    generation after it (the first collection need not walk a whole plan), nothing stays frozen,
    and cycles built in it are still collected; once the loaded plan is frozen, what a block
    builds is frozen with it. In a library user's process nothing of this happens: what the user
    froze stays frozen."""
    import gc

    from planner.language.limits import freeze, own_collector, paused_gc

    class Node:
        pass

    gc.collect()
    gc.unfreeze()
    own_collector(True)
    try:
        with paused_gc():
            built = [Node() for _ in range(50_000)]
            for a, b in zip(built, built[1:] + built[:1]):
                a.next = b  # one big cycle
        ids = {id(n) for n in built}
        assert not any(id(o) in ids for o in gc.get_objects(generation=0))
        assert sum(id(o) in ids for o in gc.get_objects(generation=2)) == len(built)
        assert gc.get_freeze_count() == 0
        del built, a, b
        assert gc.collect() >= 50_000  # the cycle is garbage, and collected
        kept = [Node()]
        freeze()
        with paused_gc():
            more = [Node() for _ in range(1000)]
        assert gc.get_freeze_count() >= len(kept) + len(more)
    finally:
        own_collector(False)
    assert gc.get_freeze_count() == 0
    users = [Node() for _ in range(100)]
    gc.freeze()  # the library user's own freeze
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            young = [Node() for _ in range(1000)]
        assert gc.get_freeze_count() == frozen and len(users) == 100
        # left in the young generations (a collection may have moved it from the first to the second)
        assert not any(o is young[0] for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()


# ---- the end of the process ---------------------------------------------------------------------

def test_the_command_line_ends_and_loses_nothing(tmp_path):
    """run() ends as any Python program does (sys.exit): what atexit holds runs, every byte
    written reaches the file or the pipe, and the exit status is the command's."""
    code = ("import atexit, sys\natexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
            "sys.argv = ['planner'] + sys.argv[1:]\nfrom planner.cli import run\nrun()\n")
    out = tmp_path / "sweep.csv"
    with open(out, "w") as f:
        proc = subprocess.run([sys.executable, "-c", code, "sweep", "sheets/token_cost.plan",
                               "alpha=0..0.99 count 20000", "--format", "csv"], cwd=ROOT, stdout=f,
                              stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0 and proc.stderr.strip().endswith("atexit ran"), proc.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 20001 and lines[-1].startswith("sweep alpha in 0..0.99 count 20000,base,0.99,")
    bad = tmp_path / "bad.plan"
    bad.write_text("x = 1\ncheck x == 2\n")
    failed = subprocess.run([sys.executable, "-c", code, "check", str(bad)], cwd=ROOT, capture_output=True, text=True)
    assert failed.returncode == 1 and "atexit ran" in failed.stderr
    # a reader that stops early (`| head -1`): no complaint about the closed pipe
    piped = subprocess.Popen([sys.executable, "-c", code, "sweep", "sheets/token_cost.plan", "alpha=0..0.99 count 200000",
                              "--format", "csv"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = piped.stdout.readline()
    piped.stdout.close()
    err = piped.stderr.read().decode()
    assert piped.wait() == 0 and first.startswith(b"sweep,") and "Error" not in err and "Exception" not in err, err
