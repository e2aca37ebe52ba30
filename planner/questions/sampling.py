"""Samples of uncertain inputs: uniform numbers (Latin hypercube or plain), turned into each
distribution's values through its inverse CDF. numpy only.

* Each input draws from its own stream, seeded by the run's seed and the input's name
  (``SeedSequence([seed, crc32(name)])`` into PCG64): the same seed gives the same samples on
  every machine, and adding an input to a plan leaves the others' samples as they were.
* Latin hypercube (the default): the n samples of an input fall one in each of n equal slices
  of probability, in an order shuffled per input, so the inputs are independent while each
  one's marginal is covered evenly (far less sampling noise in means and percentiles than plain
  Monte Carlo at the same n).
* The standard normal's inverse CDF is Wichura's AS241 (the algorithm of Python's
  ``statistics.NormalDist.inv_cdf``, about 1e-16 relative), vectorised.
"""

from __future__ import annotations

import math
import zlib
from typing import Mapping, Sequence

import numpy as np

from ..language.uncertain import log_params

Z95 = 1.6448536269514722  # the standard normal's 95th percentile


def _poly(coefs: Sequence[float], r: np.ndarray) -> np.ndarray:
    out = np.full_like(r, coefs[0])
    for c in coefs[1:]:
        out = out * r + c
    return out


# AS241's coefficients, highest power first (as Python's statistics module writes them)
_A = (2.5090809287301226727e+3, 3.3430575583588128105e+4, 6.7265770927008700853e+4, 4.5921953931549871457e+4,
      1.3731693765509461125e+4, 1.9715909503065514427e+3, 1.3314166789178437745e+2, 3.3871328727963666080e+0)
_B = (5.2264952788528545610e+3, 2.8729085735721942674e+4, 3.9307895800092710610e+4, 2.1213794301586595867e+4,
      5.3941960214247511077e+3, 6.8718700749205790830e+2, 4.2313330701600911252e+1, 1.0)
_C = (7.74545014278341407640e-4, 2.27238449892691845833e-2, 2.41780725177450611770e-1, 1.27045825245236838258e+0,
      3.64784832476320460504e+0, 5.76949722146069140550e+0, 4.63033784615654529590e+0, 1.42343711074968357734e+0)
_D = (1.05075007164441684324e-9, 5.47593808499534494600e-4, 1.51986665636164571966e-2, 1.48103976427480074590e-1,
      6.89767334985100004550e-1, 1.67638483018380384940e+0, 2.05319162663775882187e+0, 1.0)
_E = (2.01033439929228813265e-7, 2.71155556874348757815e-5, 1.24266094738807843860e-3, 2.65321895265761230930e-2,
      2.96560571828504891230e-1, 1.78482653991729133580e+0, 5.46378491116411436990e+0, 6.65790464350110377720e+0)
_F = (2.04426310338993978564e-15, 1.42151175831644588870e-7, 1.84631831751005468180e-5, 7.86869131145613259100e-4,
      1.48753612908506148525e-2, 1.36929880922735805310e-1, 5.99832206555887937690e-1, 1.0)


def ndtri(p: np.ndarray) -> np.ndarray:
    """The standard normal's inverse CDF at each ``p`` in (0, 1) (AS241)."""
    p = np.asarray(p, dtype=float)
    q = p - 0.5
    out = np.empty_like(p)
    central = np.abs(q) <= 0.425
    if central.any():
        qc = q[central]
        r = 0.180625 - qc * qc
        out[central] = qc * _poly(_A, r) / _poly(_B, r)
    tail = ~central
    if tail.any():
        qt = q[tail]
        r = np.sqrt(-np.log(np.where(qt <= 0, p[tail], 1.0 - p[tail])))
        x = np.empty_like(r)
        near = r <= 5.0
        rn = r[near] - 1.6
        x[near] = _poly(_C, rn) / _poly(_D, rn)
        rf = r[~near] - 5.0
        x[~near] = _poly(_E, rf) / _poly(_F, rf)
        out[tail] = np.where(qt < 0, -x, x)
    return out


def stream(seed: int, name: str) -> np.random.Generator:
    """The random stream of input ``name`` in a run seeded with ``seed``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode("utf-8"))])))


# ---- a counter-based generator, the same in numpy and in a spreadsheet's formulas ----------

PRIME = 999_983  # the largest prime below 10^6: every intermediate value is an integer below 10^12,
# exact in doubles and within the 15 significant digits spreadsheet engines keep (LibreOffice rounds
# to 15 digits in places: a larger prime gave wrong remainders there)
_ROUNDS = ((736_871, 12_345, 54_321), (275_017, 67_891, 19_876))  # per half: trial multiplier, two offsets
_I, _S = 27_509, 12_979  # multipliers of the input's id and of the seed


def input_id(name: str) -> int:
    """A small number per input name (its stream in the counter generator)."""
    return zlib.crc32(name.encode("utf-8")) % 100_003


def _offset(name: str, seed: int, half: int) -> int:
    return (input_id(name) * _I + seed * _S + half * 7_919) % PRIME


def counter_uniforms(trials, seed: int, name: str) -> np.ndarray:
    """The uniform number of each trial (1, 2, ...) for input ``name``: two hashes of the trial number,
    the input's id and the seed, each three rounds of ``MOD(x^2 + c, p)`` in exact integer arithmetic,
    read as the high and low digits of a number in (0, 1). No state: trial k's number is the same
    wherever it is computed, so a workbook's formulas (:func:`counter_formula`) draw what planner draws."""
    t = np.asarray(trials, dtype=float)
    halves = []
    for half, (k, c1, c2) in enumerate(_ROUNDS):
        x = np.mod(t * k + _offset(name, seed, half), PRIME)
        x = np.mod(x * x + c1, PRIME)
        x = np.mod(x * x + c2, PRIME)
        halves.append(x)
    return (halves[0] + (halves[1] + 0.5) / PRIME) / PRIME


def counter_formula(trial: str, seed: int, name: str) -> str:
    """:func:`counter_uniforms` as a spreadsheet formula (without ``=``) over the cell or number ``trial``."""
    p = PRIME
    halves = []
    for half, (k, c1, c2) in enumerate(_ROUNDS):
        x = f"MOD({trial}*{k}+{_offset(name, seed, half)},{p})"
        x = f"MOD({x}^2+{c1},{p})"
        x = f"MOD({x}^2+{c2},{p})"
        halves.append(x)
    return f"({halves[0]}+({halves[1]}+0.5)/{p})/{p}"


def uniforms(n: int, seed: int, name: str, method: str = "lhs", start: int = 0) -> np.ndarray:
    """``n`` numbers in (0, 1) for input ``name``: a Latin hypercube column (``lhs``), plain draws
    (``random``) or the counter generator's numbers of trials 1..n (``counter``: a workbook's Trials).
    ``start``: the numbers from sample ``start`` on, without drawing the ones before (``random`` and
    ``counter``: a chunk of samples; a Latin hypercube shuffles all of them at once)."""
    if method == "counter":
        return counter_uniforms(np.arange(start + 1, start + n + 1), seed, name)
    rng = stream(seed, name)
    rng.bit_generator.advance(start)  # each float of Generator.random is one 64-bit draw of PCG64
    if method == "lhs":
        u = (rng.permutation(n) + rng.random(n)) / n
    else:
        u = rng.random(n)
    # (0, 1) open: the inverse CDFs of unbounded distributions are infinite at 0 and 1
    return np.clip(u, np.finfo(float).tiny, 1.0 - np.finfo(float).epsneg)


def draw(spec: Mapping[str, tuple], n: int, seed: int, method: str, copula=None, start: int = 0
         ) -> dict[str, np.ndarray]:
    """``n`` samples, from sample ``start`` on (:func:`uniforms`), of each input of ``spec`` (name -> (kind,
    params, within), base units) through its inverse CDF; the inputs of a Gaussian copula (``copula``:
    their names and ``L``, the factor of their normals' correlation matrix) through their correlated scores."""
    uniform = {name: uniforms(n, seed, name, method, start) for name in spec}
    out = {name: inverse_cdf(kind, params, uniform[name], within) for name, (kind, params, within) in spec.items()}
    if copula is not None:
        names, factor = copula
        z = correlated_scores([ndtri(uniform[name]) for name in names], factor)
        for name, score in zip(names, z):
            kind, params, within = spec[name]
            out[name] = from_normal(kind, params, score, within)
    return out


def inverse_cdf(kind: str, params: Sequence[float], u: np.ndarray, within: tuple[float, float] = (0.0, 1.0)
                ) -> np.ndarray:
    """The values of a distribution (``kind``, ``params`` in base units) at probabilities ``u``;
    ``within`` (probabilities) truncates it: ``u`` is spread over that part of the distribution."""
    if within != (0.0, 1.0):
        u = within[0] + u * (within[1] - within[0])
    if kind in ("range", "lognormal"):  # P5 = low and P95 = high; or this mean and sd (of the values)
        mu, sigma = log_params(kind, params)
        return np.exp(mu + sigma * ndtri(u))
    if kind == "normal":
        mean, sd = params
        return mean + sd * ndtri(u)
    if kind == "uniform":
        low, high = params
        return low + (high - low) * u
    if kind == "triangular":
        low, mode, high = params
        w = high - low
        split = (mode - low) / w
        if w * max(mode - low, high - mode) > 1e300:  # the product overflows: the same, as two roots
            return np.where(u < split, low + np.sqrt(u * w) * math.sqrt(mode - low),
                            high - np.sqrt((1 - u) * w) * math.sqrt(high - mode))
        return np.where(u < split, low + np.sqrt(u * w * (mode - low)), high - np.sqrt((1 - u) * w * (high - mode)))
    if kind == "pert":
        low, _, high = params
        a, b = pert_shape(params)
        return low + (high - low) * beta_inverse(a, b, u)
    if kind == "discrete":
        values, cum = discrete_table(params)
        return np.asarray(values)[np.searchsorted(np.asarray(cum), u, side="right")]
    raise ValueError(f"unknown distribution {kind!r}")


def discrete_table(params: Sequence[float]) -> tuple[list[float], list[float]]:
    """A ``discrete``'s values (rising) and the cumulative weights after each but the last, summed left to
    right: trial ``u`` takes the first value whose cumulative weight is above ``u`` (as the workbook's
    ``IF(u<c1, v1, IF(u<c2, v2, v3))``)."""
    values, weights = list(params[::2]), list(params[1::2])
    cum, acc = [], 0.0
    for w in weights[:-1]:
        acc += w
        cum.append(acc)
    return values, cum


def betainc(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """The regularized incomplete beta I_x(a, b) at each ``x`` in [0, 1] (Numerical Recipes' continued
    fraction, on the side of each ``x`` where it converges fast: a few dozen terms for a pert's shapes)."""
    x = np.asarray(x, dtype=float)
    flip = x > (a + 1) / (a + b + 2)
    xs = np.clip(np.where(flip, 1 - x, x), 0.0, 1.0)
    aa, bb = np.where(flip, b, a), np.where(flip, a, b)
    with np.errstate(divide="ignore"):
        front = np.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + aa * np.log(xs) + bb * np.log1p(-xs)) / aa
    tiny = 1e-300

    def fix(v):
        return np.where(np.abs(v) < tiny, tiny, v)

    c = np.ones_like(xs)
    d = 1.0 / fix(1.0 - (aa + bb) * xs / (aa + 1))
    h = d.copy()
    for m in range(1, 300):
        for num in (m * (bb - m) * xs / ((aa + 2 * m - 1) * (aa + 2 * m)),
                    -(aa + m) * (aa + bb + m) * xs / ((aa + 2 * m) * (aa + 2 * m + 1))):
            d = 1.0 / fix(1.0 + num * d)
            c = fix(1.0 + num / c)
            h = h * d * c
        if np.all(np.abs(d * c - 1.0) < 4e-16):
            break
    r = front * h
    return np.where(xs == 0, np.where(flip, 1.0, 0.0), np.where(flip, 1 - r, r))


def beta_inverse(a: float, b: float, u: np.ndarray) -> np.ndarray:
    """The x with I_x(a, b) = u at each ``u`` (a, b >= 1, as a pert's are): from the CDF on a grid read
    backwards, Newton's steps on :func:`betainc`, kept inside a bracket that halves where a step would
    leave it, each sample until its step is below 1e-15."""
    u = np.asarray(u, dtype=float)
    grid = np.linspace(0.0, 1.0, 2049)  # the start: the CDF on a grid, read backwards
    out = np.interp(u, betainc(a, b, grid), grid)
    log_b = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    index = np.arange(u.size)  # the samples still moving, and their x, u and bracket
    x, ua = out.copy(), u.copy()
    lo, hi = np.zeros_like(u), np.ones_like(u)
    for _ in range(100):
        if index.size == 0:
            break
        f = betainc(a, b, x) - ua
        below = f < 0
        lo = np.where(below, x, lo)
        hi = np.where(below, hi, x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pdf = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_b)
            step = x - f / pdf
        bad = ~np.isfinite(step) | (step < lo) | (step > hi)
        new = np.where(bad, (lo + hi) / 2, step)
        done = (f == 0) | (np.abs(new - x) <= 1e-14 * x) | (hi - lo <= 1e-15 * hi)
        out[index] = np.where(f == 0, x, new)
        keep = ~done
        index, x, ua, lo, hi = index[keep], new[keep], ua[keep], lo[keep], hi[keep]
    return out


def pert_shape(params: Sequence[float]) -> tuple[float, float]:
    low, mode, high = params
    return 1 + 4 * (mode - low) / (high - low), 1 + 4 * (high - mode) / (high - low)


_ERFC = np.frompyfunc(math.erfc, 1, 1)


def ncdf(z: np.ndarray) -> np.ndarray:
    """The standard normal's CDF at each ``z``, ``erfc(-z / sqrt 2) / 2`` (the C library's erfc, as the
    spreadsheet engines' NORMSDIST computes it to about 1e-16)."""
    return 0.5 * _ERFC(-np.asarray(z, dtype=float) / math.sqrt(2)).astype(float)


def from_normal(kind: str, params: Sequence[float], z: np.ndarray, within: tuple[float, float] = (0.0, 1.0)
                ) -> np.ndarray:
    """The values of a distribution at standard normal scores ``z`` (a Gaussian copula's output): the
    normal family straight from ``z``, any other through its probability ``ncdf(z)``."""
    if within == (0.0, 1.0) and kind in NORMAL_FAMILY:
        if kind == "normal":
            return params[0] + params[1] * z
        mu, sigma = log_params(kind, params)
        return np.exp(mu + sigma * z)
    u = np.clip(ncdf(z), np.finfo(float).tiny, 1.0 - np.finfo(float).epsneg)
    return inverse_cdf(kind, params, u, within)


NORMAL_FAMILY = ("range", "lognormal", "normal")


def correlated_scores(z: Sequence[np.ndarray], factor: Sequence[Sequence[float]]) -> list[np.ndarray]:
    """The Gaussian copula's step: row ``j`` of ``factor`` (``L`` with ``L L^T`` the normals'
    correlation matrix) times the independent scores ``z``, summed left to right (as a workbook cell's
    ``L_j1*z1+L_j2*z2+...`` is)."""
    out = []
    for j, row in enumerate(factor):
        acc = row[0] * z[0]
        for k in range(1, j + 1):
            acc = acc + row[k] * z[k]
        out.append(acc)
    return out
