"""`planner simulate`: Monte Carlo over the uncertain inputs."""

from __future__ import annotations

from .common import _load, _past_memory, overrides_from, scenarios_from
from .emit import emit
from .options import EXIT_OK, _add_common, _dask, _format, _names, _percentiles, _sampling
from .output import note, write_output


def add_simulate(sub) -> None:
    p = sub.add_parser("simulate", help="Monte Carlo over the uncertain inputs: mean, sd, percentiles",
                       description="Sample every uncertain input (`x = 40%% to 70%%`, `normal(mean, sd)` ...) once, "
                                   "evaluate every quantity on those samples in each scenario, and print each "
                                   "quantity's point value, mean, standard deviation and percentiles. One shared "
                                   "sample set per run: every scenario sees the same samples.")
    _add_common(p)
    _sampling(p, dask=True)
    _dask(p, "simulation")
    p.add_argument("--show", type=_names, action="extend", metavar="NAME[,NAME...]",
                   help="quantities to show, a comma list; repeatable; a series shows its fan, its percentiles "
                        "in each period (default: the uncertain inputs and every quantity they reach, and the "
                        "fans of the series they reach, the headline ones where there are any)")
    p.add_argument("--percentiles", type=_percentiles, metavar="P[,P...]", default=[5.0, 50.0, 95.0],
                   help="percentiles to show, a comma list (default: 5,50,95)")
    p.add_argument("--probability", "-p", action="append", default=[], metavar="CONDITION",
                   help='the probability of a condition, in plan syntax ("cost < 2 USD"); repeatable')
    p.add_argument("--sensitivity", action="store_true",
                   help="also show each quantity's rank correlation with each uncertain input (a tornado, "
                        "largest first); the JSON output always has them")
    p.add_argument("--solve", metavar="'INPUT where CONDITION'",
                   help="the value of INPUT at the edge of a probability condition, by bisection over the "
                        "fixed sample set: --solve 'rent_price where P(owning_is_cheaper) >= 80%%'")
    _format(p, ("table", "json", "csv", "markdown"))
    p.set_defaults(handler=cmd_simulate)


def _simulate_solve(plan, args, scenarios, overrides, origins) -> int:
    from ..language.errors import UsageError
    from ..language.lower import lower_expr
    from ..language.source import Source
    from ..outputs.simulation import solve_text
    from ..questions import simulate

    target, sep, condition = args.solve.partition(" where ")
    if not sep:
        raise UsageError(f"--solve {args.solve!r}: write 'INPUT where CONDITION'",
                         hint="--solve 'rent_price where P(owning_is_cheaper) >= 80%'")
    cond = lower_expr(Source("--solve", condition))
    answers = [simulate.solve_probability(plan, target.strip(), cond, s, args.samples, args.seed, args.method,
                                          overrides, origins) for s in scenarios]
    write_output(solve_text(plan, answers, scenarios))
    return EXIT_OK


def _simulate_chunked(plan, args, scenarios, overrides, origins, names, fans, probabilities) -> int:
    """``planner simulate --dask``: the simulation in chunks of samples, reduced to figures."""
    from ..language.errors import UsageError
    from ..outputs.simulation import SimulationView
    from ..questions import chunked

    chunked.libraries()
    if args.solve:
        raise UsageError("--solve bisects over samples held in memory: it does not run with --dask",
                         hint="leave out --dask")
    if args.sensitivity:
        raise UsageError("--sensitivity ranks every sample, and a --dask run keeps none", hint="leave out --dask")
    from ..outputs.progress import Progress

    with Progress("simulate --dask") as progress, chunked.scheduler(args.scheduler, progress.step) as run:
        sims = chunked.simulate_chunked(run, plan, scenarios, args.samples, args.seed, args.method, overrides,
                                        origins, names, probabilities, args.percentiles, args.chunk_mb)
    emit(SimulationView(sims, names, args.percentiles, probabilities, fans=fans), args.format)
    note(f"{sims[0].samples:,} samples in chunks of {sims[0].chunk:,}, on {sims[0].where}")
    return EXIT_OK


def cmd_simulate(args) -> int:
    from ..language.errors import UnknownNameError, suggest
    from ..language.lower import lower_expr
    from ..language.source import Source
    from ..outputs.simulation import SimulationView, shown
    from ..questions import simulate

    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    for n in args.show or ():
        if n not in plan.model.quantities:
            guess = suggest(n, plan.model.quantities)
            raise UnknownNameError(f"--show names `{n}`, which is not in {plan.path}",
                                   hint=f"did you mean `{guess}`?" if guess else None)
    names, fans = shown(plan, args.show)
    probabilities = [(text, lower_expr(Source("--probability", text))) for text in args.probability]
    chunked = args.dask or args.scheduler is not None
    args.method = args.method or ("random" if chunked else "lhs")
    if chunked:
        return _simulate_chunked(plan, args, scenarios, overrides, origins, names, fans, probabilities)
    if args.solve:
        return _simulate_solve(plan, args, scenarios, overrides, origins)
    from ..language import ir
    from ..outputs.progress import Progress

    flags = [] if args.show else simulate.default_flags(plan)  # said in words: true in 38.8% of samples
    keep = names + flags + [n.name for _, c in probabilities for n in ir.free_names(c) if n.name in plan.model.quantities]
    if args.samples > simulate.MAX_SAMPLES:
        with _past_memory("more samples"):
            simulate.check_samples(args.samples)
    with Progress("simulate", args.samples * len(scenarios), "samples") as progress:
        sims = simulate.run(plan, scenarios, args.samples, args.seed, args.method, overrides, origins, keep,
                            progress=progress.advance)
    for sim in sims:  # a condition that cannot be evaluated fails before anything is written
        for _, cond in probabilities:
            sim.probability(cond)
    emit(SimulationView(sims, names, args.percentiles, probabilities, args.sensitivity, flags, fans), args.format)
    return EXIT_OK
