"""benchmarks/plans/lease_or_buy_36.plan as a plain Python script: month by month, buying 8 GPUs on a
loan (the payment by the annuity formula) against leasing every GPU needed; the net present value of
buying's advantage, the yearly IRR of the purchase (by bisection), the payback month (by counting) and
the lease price at which buying breaks even (by bisection), in the plan as written and each scenario."""

import json
import math

MONTH = 365 * 86400 / 12  # seconds: a month is a twelfth of a 365-day year
BASE = dict(gpus=8, gpu_price=32_000.0, loan_rate=0.09, loan_months=36, running=450.0, resale=0.30,
            lease=2_200.0, demand0=10e9, growth=0.06, per_gpu=1500.0, discount=0.10)
SCENARIOS = {"base": {}, "slow_growth": {"growth": 0.03}, "cheap_lease": {"lease": 1_600.0},
             "dear_money": {"loan_rate": 0.14, "discount": 0.14}}
HORIZON = 36


def annuity(principal, rate, n):
    return principal / n if rate == 0 else principal * rate / (1 - (1 + rate) ** -n)


def model(p):
    capex = p["gpus"] * p["gpu_price"]
    payment = annuity(capex, p["loan_rate"] / 12, p["loan_months"])
    demand, needed = p["demand0"], []
    for m in range(1, HORIZON + 1):
        if m > 1:
            demand *= 1 + p["growth"]
        needed.append(math.ceil(demand / (p["per_gpu"] * MONTH)))
    buy, lease, unlevered = [], [], []
    for m, n in enumerate(needed, start=1):
        extra = max(0, n - p["gpus"])
        end = p["resale"] * capex if m == HORIZON else 0.0
        loan = payment if m <= p["loan_months"] else 0.0
        buy.append(-(loan + p["gpus"] * p["running"] + extra * p["lease"]) + end)
        lease.append(-n * p["lease"])
        unlevered.append(n * p["lease"] - extra * p["lease"] - p["gpus"] * p["running"] + end)
    advantage = [b - l for b, l in zip(buy, lease)]
    r = p["discount"] / 12
    npv = sum(a / (1 + r) ** m for m, a in enumerate(advantage, start=1))
    flows = [-capex] + unlevered
    lo, hi = -0.5, 1.0  # the NPV of the purchase falls as the rate rises: bisection for NPV = 0
    for _ in range(200):
        mid = (lo + hi) / 2
        if sum(f / (1 + mid) ** k for k, f in enumerate(flows)) > 0:
            lo = mid
        else:
            hi = mid
    irr = (lo + hi) / 2
    cum_b = cum_l = 0.0
    payback = None
    for m, (b, l) in enumerate(zip(buy, lease), start=1):
        cum_b, cum_l = cum_b + b, cum_l + l
        if payback is None and cum_b >= cum_l:
            payback = m
    return dict(capex=capex, payment=payment, needed1=needed[0], peak=max(needed), total_buy=sum(buy),
                total_lease=sum(lease), npv=npv, irr=irr, irr_yearly=(1 + irr) ** 12 - 1, payback=payback)


def breakeven(p):
    lo, hi = 1e-6, 1e6  # buying's NPV grows with the lease price
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if model({**p, "lease": mid})["npv"] < 0 else (lo, mid)
    return (lo + hi) / 2


figures = {}
for name, overrides in SCENARIOS.items():
    p = {**BASE, **overrides}
    figures[name] = {**model(p), "breakeven_lease": breakeven(p)}
base = figures["base"]
checks = [abs(base["payment"] - 8141) <= 0.5, base["needed1"] == 3, base["peak"] == 20, base["npv"] > 0,
          base["breakeven_lease"] < BASE["lease"], base["payback"] is not None]
print(json.dumps({**figures, "checks_passed": sum(checks), "checks": len(checks)}, indent=1))
