"""Dimensions and conversions.

A :class:`Unit` is an exact rational scale to the base units plus a
:class:`Dim` (exponents over base dimensions). Base units: ``B`` (bytes)
for information and ``s`` for time; ``FLOP`` and ``token`` are
dimensionless counts, so seed-style formulas stay natural. Plans may
declare more base dimensions (``unit USD``) or derived units
(``unit kUSD = 1000 USD``).

Why not pint or ``sympy.physics.units``: values flow through SymPy
expressions and compiled numpy code as plain numbers in base units, so all
that is needed at run time is one exact scale per quantity and a static
dimension check on the IR. pint adds ~0.3 s to start-up and its quantities
do not compose with SymPy; ``sympy.physics.units`` has no FLOP/token counts,
uses floats for some prefixes and is slow for checking thousands of
formulas. The table below is small, exact and tested.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Mapping


@dataclass(frozen=True)
class Dim:
    """Exponents over base dimensions, as a sorted tuple of (base, power)."""

    powers: tuple[tuple[str, Fraction], ...] = ()

    @staticmethod
    def of(mapping: Mapping[str, Fraction | int]) -> "Dim":
        return Dim(tuple(sorted((k, Fraction(v)) for k, v in mapping.items() if v != 0)))

    @property
    def dimensionless(self) -> bool:
        return not self.powers

    def __mul__(self, other: "Dim") -> "Dim":
        d = dict(self.powers)
        for k, v in other.powers:
            d[k] = d.get(k, Fraction(0)) + v
        return Dim.of(d)

    def __truediv__(self, other: "Dim") -> "Dim":
        return self * other ** -1

    def __pow__(self, p: Fraction | int) -> "Dim":
        return Dim.of({k: v * Fraction(p) for k, v in self.powers})

    def __str__(self) -> str:
        return format_powers([(BASE_SYMBOL.get(k, k), v) for k, v in self.powers]) or "1"

    def describe(self) -> str:
        """A name for messages: ``information``, ``time``, ``information/time``."""
        if not self.powers:
            return "a plain number"
        return format_powers([(DIM_NAME.get(k, k), v) for k, v in self.powers])


DIMENSIONLESS = Dim()
INFORMATION = Dim.of({"information": 1})
TIME = Dim.of({"time": 1})
BASE_SYMBOL = {"information": "B", "time": "s"}
DIM_NAME = {"information": "bytes", "time": "time"}


def format_powers(items: Iterable[tuple[str, Fraction]]) -> str:
    num = []
    den = []
    for name, p in items:
        target = num if p > 0 else den
        q = abs(p)
        target.append(name if q == 1 else f"{name}^{q}")
    if not num and not den:
        return ""
    text = "*".join(num) if num else "1"
    if den:
        text += "/" + ("/".join(den))
    return text


@dataclass(frozen=True)
class Unit:
    scale: Fraction  # value in base units of one of this unit
    dim: Dim
    text: str = ""

    def __mul__(self, other: "Unit") -> "Unit":
        return Unit(self.scale * other.scale, self.dim * other.dim)

    def __pow__(self, p: int) -> "Unit":
        return Unit(self.scale ** p, self.dim ** p)


ONE = Unit(Fraction(1), DIMENSIONLESS, "")

_SI_BIG = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_SI_SMALL = {"m": Fraction(1, 10**3), "u": Fraction(1, 10**6), "µ": Fraction(1, 10**6),
             "μ": Fraction(1, 10**6), "n": Fraction(1, 10**9), "p": Fraction(1, 10**12)}


def _builtin_units() -> dict[str, Unit]:
    table: dict[str, Unit] = {}

    def add(name: str, scale, dim: Dim) -> None:
        table[name] = Unit(Fraction(scale), dim, name)

    # information: base unit is the byte
    for base, scale in (("B", 1), ("bit", Fraction(1, 8))):
        add(base, scale, INFORMATION)
        for prefix, factor in {**_SI_BIG, **_BINARY}.items():
            add(prefix + base, scale * factor, INFORMATION)
    add("byte", 1, INFORMATION)
    add("bytes", 1, INFORMATION)
    add("bits", Fraction(1, 8), INFORMATION)
    # time: base unit is the second
    add("s", 1, TIME)
    for prefix, factor in _SI_SMALL.items():
        add(prefix + "s", factor, TIME)
    add("sec", 1, TIME)
    add("min", 60, TIME)
    add("h", 3600, TIME)
    add("hr", 3600, TIME)
    add("hour", 3600, TIME)
    add("day", 86400, TIME)
    add("week", 7 * 86400, TIME)
    add("year", 365 * 86400, TIME)
    add("month", Fraction(365 * 86400, 12), TIME)  # a twelfth of a 365-day year
    # dimensionless counts
    for base in ("FLOP", "flop", "token", "tokens", "op", "OP"):
        add(base, 1, DIMENSIONLESS)
        for prefix, factor in _SI_BIG.items():
            add(prefix + base, factor, DIMENSIONLESS)
    add("%", Fraction(1, 100), DIMENSIONLESS)
    add("ppm", Fraction(1, 10**6), DIMENSIONLESS)
    return table


BUILTIN_UNITS = _builtin_units()


class UnitTable:
    """The units a plan can use: built-ins plus its own ``unit`` declarations."""

    def __init__(self) -> None:
        self.units: dict[str, Unit] = dict(BUILTIN_UNITS)
        self.declared: dict[str, object] = {}

    def lookup(self, name: str) -> Unit | None:
        return self.units.get(name)

    def declare_base(self, name: str) -> Unit:
        unit = Unit(Fraction(1), Dim.of({name: 1}), name)
        self.units[name] = unit
        return unit

    def declare(self, name: str, unit: Unit) -> Unit:
        unit = Unit(unit.scale, unit.dim, name)
        self.units[name] = unit
        return unit

    def names(self) -> list[str]:
        return list(self.units)


def canonical_text(dim: Dim) -> str:
    """Display text of the base unit for a dimension (``B/s``, ``s``, "")."""
    return "" if dim.dimensionless else str(dim)
