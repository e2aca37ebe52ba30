"""benchmarks/plans/fleet_60_months.plan as a plain Python script: vans bought as demand needs them,
each on a 48-month loan, month by month; the starting cash that makes the lowest balance zero (by
bisection) and the first horizon whose final cash reaches 5,000 kUSD (by counting)."""

import json
import math

demand0, growth, price, per_van = 9000.0, 0.06, 6.0, 1500.0
van_price, loan_rate, term = 45_000.0, 0.07 / 12, 48
energy, upkeep, driver_pay, overhead = 900.0, 400.0, 3600.0, 25_000.0
payment = van_price * loan_rate / (1 - (1 + loan_rate) ** -term)


def flows(horizon):
    vans, bought, out = [], [], []
    for m in range(1, horizon + 1):
        demand = demand0 * (1 + growth) ** (m - 1)
        vans.append(math.ceil(demand / per_van))
        bought.append(vans[-1] - (vans[-2] if m > 1 else 0))
        loans = sum(bought[k - 1] * payment for k in range(1, m + 1) if k > m - term)
        out.append(demand * price - loans - vans[-1] * (energy + upkeep + driver_pay) - overhead)
    return out, vans


def balances(start, horizon):
    cash, out = start, []
    for f in flows(horizon)[0]:
        cash += f
        out.append(cash)
    return out


start, months = 600_000.0, 60
lowest = min(balances(start, months))
lo, hi = 0.0, 1e10
for _ in range(200):
    mid = (lo + hi) / 2
    if mid in (lo, hi):
        break
    lo, hi = (mid, hi) if min(balances(mid, months)) < 0 else (lo, mid)
cash_needed = hi
cash = balances(start, months)
payback = next((m for m in range(2, months + 1) if cash[m - 1] >= start and cash[m - 2] < start), None)
months_to_5m = next(n for n in range(12, 85) if balances(start, n)[-1] >= 5_000_000)
figures = {"payment_kUSD": payment / 1000, "lowest_cash_kUSD": lowest / 1000, "final_cash_kUSD": cash[-1] / 1000,
           "fleet_end": flows(months)[1][-1], "payback_month": payback, "cash_needed_kUSD": cash_needed / 1000,
           "months_to_5m": months_to_5m}
checks = [abs(payment / 1000 - 1.078) < 0.0005, figures["fleet_end"] == 187, lowest >= 0, cash_needed < start,
          min(balances(cash_needed, months)) >= -1e-6, months_to_5m > 24]
print(json.dumps({**figures, "checks_passed": sum(checks), "checks": len(checks)}))
