"""benchmarks/plans/saas_growth.plan as a plain Python script: a SaaS company month by month for 36 months,
account executives hired one a month towards a target and selling from their fourth month, customers that
churn, revenue that expands, support agents hired as the base grows, a loan repaid by the annuity formula;
the runway, the lowest cash, the ARR after 36 months, the operating break-even month, CAC and its payback,
the NPV and IRR (by bisection) of the operating flows, and the questions' answers by bisection or counting,
in the plan as written and each scenario."""

import json
import math

BASE = dict(start_cash=800e3, loan=1500e3, loan_rate=0.12, loan_term=36, customers0=150.0, arpa=800.0,
            price_rise=0.10, churn=0.025, expansion=0.01, inbound0=6.0, inbound_growth=0.03, hosting=0.18,
            reps0=4, rep_target=12, hires_per_month=1, deals_per_rep=2.5, rep_cost=14e3,
            customers_per_agent=80.0, agent_cost=7e3, fixed_costs=90e3, fixed_growth=0.01, discount_rate=0.15)
SCENARIOS = {"base": {}, "no_loan": {"loan": 0.0}, "slow_hiring": {"rep_target": 8}, "high_churn": {"churn": 0.04}}
MONTHS = 36


def annuity(principal, rate, n):
    return principal / n if rate == 0 else principal * rate / (1 - (1 + rate) ** -n)


def irr(flows):
    """The rate per month where the flows' NPV (the first today) is 0, by bisection (one sign change)."""
    lo, hi = -0.5, 1.0
    npv = lambda r: sum(f / (1 + r) ** k for k, f in enumerate(flows))  # noqa: E731
    if npv(lo) * npv(hi) >= 0:
        return math.nan  # no sign change: planner reports no rate (the bracket holds every rate that matters here)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if npv(mid) * npv(lo) > 0 else (lo, mid)
    return (lo + hi) / 2


def months(p):
    """Each month's figures, as lists (month 1 first)."""
    reps, selling, hired = p["reps0"], p["reps0"], []  # hired[m-1]: hires in month m
    inbound, customers, mrr, fixed = p["inbound0"], p["customers0"], p["customers0"] * p["arpa"], p["fixed_costs"]
    payment = annuity(p["loan"], p["loan_rate"] / 12, p["loan_term"])
    out = {k: [] for k in ("reps", "new", "customers", "mrr", "operating", "cash")}
    cash = p["start_cash"] + p["loan"]
    for m in range(1, MONTHS + 1):
        hires = p["hires_per_month"] if reps < p["rep_target"] else 0
        hired.append(hires)
        reps += hires
        if m >= 4:  # a rep hired in month m - 3 sells from month m: the hiring month and two more to ramp
            selling += hired[m - 4]
        if m > 1:
            inbound *= 1 + p["inbound_growth"]
            fixed *= 1 + p["fixed_growth"]
        new = selling * p["deals_per_rep"] + inbound
        customers = customers * (1 - p["churn"]) + new
        price = p["arpa"] * (1 + p["price_rise"]) if m >= 13 else p["arpa"]
        mrr = mrr * (1 - p["churn"]) * (1 + p["expansion"]) + new * price
        agents = math.ceil(customers / p["customers_per_agent"] - 1e-12)
        operating = mrr * (1 - p["hosting"]) - reps * p["rep_cost"] - agents * p["agent_cost"] - fixed
        cash += operating - (payment if m <= p["loan_term"] else 0.0)
        for k, v in zip(out, (reps, new, customers, mrr, operating, cash)):
            out[k].append(v)
    return out, payment


def model(p):
    s, payment = months(p)
    cash, op = s["cash"], s["operating"]
    first = lambda xs, cond: next((m for m, x in enumerate(xs, 1) if cond(x)), "never")  # noqa: E731
    sales_cost = sum(s["reps"]) * p["rep_cost"]
    signed = sum(s["new"])
    cac = sales_cost / signed
    r = p["discount_rate"] / 12
    monthly_irr = irr([-p["start_cash"]] + op)
    return dict(payment=payment, runway=first(cash, lambda c: c < 0), lowest_cash=min(cash),
                ending_arr=s["mrr"][-1] * 12, breakeven=first(op, lambda o: o >= 0), sales_cost=sales_cost,
                signed=signed, cac=cac, cac_payback=cac / (p["arpa"] * (1 - p["hosting"])),
                plan_npv=sum(o / (1 + r) ** m for m, o in enumerate(op, 1)), plan_irr=monthly_irr,
                yearly_irr=(1 + monthly_irr) ** 12 - 1, mrr1=s["mrr"][0], customers1=s["customers"][0],
                cash12=cash[11], customers36=s["customers"][-1])


def least(p, name, lo, hi, holds, integer=False):
    """The least value of input ``name`` in [lo, hi] where ``holds`` (monotone: fails below, holds above)."""
    if integer:
        return next(n for n in range(lo, hi + 1) if holds(model({**p, name: n})))
    if holds(model({**p, name: lo})):
        return lo  # holds everywhere: the domain's lower end
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if holds(model({**p, name: mid})) else (mid, hi)
    return hi


def greatest(p, name, lo, hi, holds):
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if holds(model({**p, name: mid})) else (lo, mid)
    return lo


solvent = lambda f: f["lowest_cash"] >= 0  # noqa: E731
figures = {name: model({**BASE, **o}) for name, o in SCENARIOS.items()}
for name, o in SCENARIOS.items():
    figures[name]["funding_needed"] = least({**BASE, **o}, "start_cash", 0.0, 5e6, solvent)
base = figures["base"]
base["reps_for_12m"] = least(BASE, "rep_target", 4, 40, lambda f: f["ending_arr"] >= 12e6, integer=True)
base["churn_limit"] = greatest(BASE, "churn", 0.0, 0.20, solvent)
base["least_loan"] = least(BASE, "loan", 0.0, 3e6, solvent)
base["sweep_churn"] = {c: (model({**BASE, "churn": c / 100})["lowest_cash"], model({**BASE, "churn": c / 100})["ending_arr"])
                       for c in range(1, 6)}
print(json.dumps(figures, indent=1))
