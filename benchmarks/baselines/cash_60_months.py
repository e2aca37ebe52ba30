"""benchmarks/plans/cash_60_months.plan as a plain Python script: month by month, the same figures
and answers (the starting cash that makes the lowest balance zero, by bisection; the first month the
balance reaches 1,000 kUSD, by counting)."""

import json
import math

customers0, growth, price = 300.0, 0.05, 30.0
per_courier, wage, rent = 120.0, 3200.0, 6000.0
months = 60


def flows(horizon):
    out = []
    for t in range(1, horizon + 1):
        customers = customers0 * (1 + growth) ** (t - 1)
        couriers = math.ceil(customers / per_courier)
        out.append(customers * price - couriers * wage - rent)
    return out


def balances(start, horizon):
    cash, out = start, []
    for f in flows(horizon):
        cash += f
        out.append(cash)
    return out


def low(start):
    return min(balances(start, months))


start = 400_000.0
lo, hi = 0.0, 1e9  # low(start) grows with start: bisection for low = 0
for _ in range(200):
    mid = (lo + hi) / 2
    if mid in (lo, hi):
        break
    lo, hi = (mid, hi) if low(mid) < 0 else (lo, mid)
needed_start = hi
month_to_1m = next(n for n in range(1, 121) if balances(start, n)[-1] >= 1_000_000)
figures = {"low_kUSD": low(start) / 1000, "end_cash_kUSD": balances(start, months)[-1] / 1000,
           "couriers_end": math.ceil(customers0 * (1 + growth) ** (months - 1) / per_courier),
           "needed_start_kUSD": needed_start / 1000, "month_to_1m": month_to_1m}
checks = [low(start) >= 0, needed_start > 0, needed_start < start, low(needed_start) >= -1e-6, month_to_1m > 12]
print(json.dumps({**figures, "checks_passed": sum(checks), "checks": len(checks)}))
