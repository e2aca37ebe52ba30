"""Dimensions and conversions.

A :class:`Unit` is an exact rational scale to the base units plus a
:class:`Dim` (exponents over base dimensions). Base units: ``B`` (bytes)
for information, ``s`` for time and ``J`` for energy (``W`` is ``J/s``);
``FLOP`` and ``token`` are dimensionless counts, so seed-style formulas
stay natural. A year is 365 days (:data:`YEAR_DAYS`), a month a twelfth of it. Plans may
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

from fractions import Fraction

from .lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Iterable, Mapping


@dataclass(frozen=True)
class Dim:
    """Exponents over base dimensions, as a sorted tuple of (base, power)."""

    powers: tuple[tuple[str, Fraction], ...] = ()

    # equality and hash as the data class would write them, written here so that hashing the
    # dimensions below at import does not make the class (and import dataclasses: see lazy)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self.powers == other.powers  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.powers,))

    @staticmethod
    def of(mapping: Mapping[str, Fraction | int]) -> "Dim":
        return Dim(tuple(sorted((k, Fraction(v)) for k, v in mapping.items() if v != 0)))

    @property
    def dimensionless(self) -> bool:
        return not self.powers

    def __mul__(self, other: "Dim") -> "Dim":
        if not other.powers:  # a plain number: most products in a plan
            return self
        if not self.powers:
            return other
        d = dict(self.powers)
        for k, v in other.powers:
            d[k] = d.get(k, Fraction(0)) + v
        return Dim.of(d)

    def __truediv__(self, other: "Dim") -> "Dim":
        return self if not other.powers else self * other ** -1

    def __pow__(self, p: Fraction | int) -> "Dim":
        if not self.powers or p == 1:
            return self
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
ENERGY = Dim.of({"energy": 1})
POWER = ENERGY / TIME
BASE_SYMBOL = {"information": "B", "time": "s", "energy": "J"}
DIM_NAME = {"information": "bytes", "time": "time", "energy": "energy"}
NAMED = {POWER: "W"}  # derived dimensions shown by their own unit's name (J/s is W)


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


_SI_BIG = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_SI_SMALL = {"m": Fraction(1, 10**3), "u": Fraction(1, 10**6), "µ": Fraction(1, 10**6),
             "μ": Fraction(1, 10**6), "n": Fraction(1, 10**9), "p": Fraction(1, 10**12)}


_LONG_BIG = {"kilo": 10**3, "mega": 10**6, "giga": 10**9, "tera": 10**12, "peta": 10**15, "exa": 10**18}
_LONG_BINARY = {"kibi": 2**10, "mebi": 2**20, "gibi": 2**30, "tebi": 2**40, "pebi": 2**50, "exbi": 2**60}
_LONG_SMALL = {"milli": Fraction(1, 10**3), "micro": Fraction(1, 10**6), "nano": Fraction(1, 10**9),
               "pico": Fraction(1, 10**12)}

# The length of a year: 365 days (a common calendar year), so a month (a twelfth of it) is
# 30.416... days and 12 month == 1 year exactly. pint's `year` is the Julian year (365.25 days);
# planner keeps the calendar year so that yearly and monthly figures of a finance plan agree.
YEAR_DAYS = 365


def _builtin_units() -> dict[str, Unit]:
    """The built-in units: symbols, plus long names and plurals as aliases, following pint's names
    (``second``/``seconds``/``sec``, ``hour``/``hours``/``hr``, ``byte``/``bytes``, ``gigabyte``,
    ``watt``, ``kilowatt_hour``...)."""
    table: dict[str, Unit] = {}

    def add(name: str, scale, dim: Dim, plural: bool = False) -> None:
        table[name] = Unit(Fraction(scale), dim, name)
        if plural:
            table[name + "s"] = Unit(Fraction(scale), dim, name + "s")

    # information: base unit is the byte
    for base, long, scale in (("B", "byte", 1), ("bit", "bit", Fraction(1, 8))):
        add(base, scale, INFORMATION)
        add(long, scale, INFORMATION, plural=True)
        for prefix, factor in {**_SI_BIG, **_BINARY}.items():
            add(prefix + base, scale * factor, INFORMATION)
        for prefix, factor in {**_LONG_BIG, **_LONG_BINARY}.items():
            add(prefix + long, scale * factor, INFORMATION, plural=True)
    add("octet", 1, INFORMATION, plural=True)
    # time: base unit is the second
    add("s", 1, TIME)
    add("sec", 1, TIME)
    add("second", 1, TIME, plural=True)
    for prefix, factor in _SI_SMALL.items():
        add(prefix + "s", factor, TIME)
    for prefix, factor in _LONG_SMALL.items():
        add(prefix + "second", factor, TIME, plural=True)
    add("min", 60, TIME)
    add("minute", 60, TIME, plural=True)
    for name in ("h", "hr"):
        add(name, 3600, TIME)
    add("hour", 3600, TIME, plural=True)
    add("d", 86400, TIME)
    add("day", 86400, TIME, plural=True)
    add("week", 7 * 86400, TIME, plural=True)
    add("year", YEAR_DAYS * 86400, TIME, plural=True)
    add("yr", YEAR_DAYS * 86400, TIME)
    add("month", Fraction(YEAR_DAYS * 86400, 12), TIME, plural=True)  # a twelfth of a year
    # energy: base unit is the joule; power is energy per second (W = J/s)
    for base, long, scale, dim in (("J", "joule", 1, ENERGY), ("W", "watt", 1, POWER),
                                   ("Wh", "watt_hour", 3600, ENERGY)):
        add(base, scale, dim)
        add(long, scale, dim, plural=True)
        for prefix in ("k", "M", "G", "T"):
            add(prefix + base, scale * _SI_BIG[prefix], dim)
        for prefix in ("kilo", "mega", "giga", "tera"):
            add(prefix + long, scale * _LONG_BIG[prefix], dim, plural=True)
        add("m" + base, scale * Fraction(1, 1000), dim)
        add("milli" + long, scale * Fraction(1, 1000), dim, plural=True)
    # dimensionless counts
    for base in ("FLOP", "flop", "token", "tokens", "op", "ops", "OP"):
        add(base, 1, DIMENSIONLESS)
        for prefix, factor in _SI_BIG.items():
            add(prefix + base, factor, DIMENSIONLESS)
    add("%", Fraction(1, 100), DIMENSIONLESS)
    add("percent", Fraction(1, 100), DIMENSIONLESS)
    add("ppm", Fraction(1, 10**6), DIMENSIONLESS)
    return table


# Unknown units people type, with what they most likely mean (edit distance would suggest
# `ms` for `m`, which is rarely meant: planner has no metres).
LIKELY = {
    "m": "`m` is not a unit here (planner has no metres): write `min` for minutes or `month` for months",
    "M": "`M` alone is not a unit: write `month`, or a prefix with a unit (`MB`, `Mtoken`)",
    "mo": "write `month` (or `months`)", "mos": "write `month` (or `months`)", "mth": "write `month`",
    "mths": "write `months`", "hrs": "write `h`, `hr` or `hours`", "mins": "write `min` or `minutes`",
    "secs": "write `s`, `sec` or `seconds`", "yrs": "write `yr` or `years`", "wk": "write `week`",
    "wks": "write `weeks`", "y": "write `year` (or `yr`)", "kwh": "write `kWh`", "KWh": "write `kWh`",
    "kw": "write `kW`", "KW": "write `kW`", "mwh": "write `MWh` (megawatt hours) or `mWh`",
}


BUILTIN_UNITS = _builtin_units()


class UnitTable:
    """The units a plan can use: built-ins plus its own ``unit`` declarations."""

    def __init__(self) -> None:
        self.units: dict[str, Unit] = dict(BUILTIN_UNITS)
        self.declared: dict[str, object] = {}
        # A file's own meaning of a built-in unit's name (`unit GB = 1024 MB` in a plan written before GB
        # was built in): (file name, unit name) -> unit, used for what that file writes and nowhere else.
        self.local: dict[tuple[str, str], Unit] = {}
        self.root = ""  # the plan's own file: unit text from outside any file (`--set`, a live value) is its
        self.files: frozenset[str] = frozenset()  # the files whose statements the plan holds

    def lookup(self, name: str, source=None) -> Unit | None:
        """The unit ``name`` means where ``source`` (a Source, or None for the plan's own file) writes it."""
        if self.local:
            owner = source.name if source is not None and source.name in self.files else self.root
            unit = self.local.get((owner, name))
            if unit is not None:
                return unit
        return self.units.get(name)

    def override(self, name: str, unit: Unit, source) -> Unit:
        """``name`` means ``unit`` in the file ``source`` only; the built-in stays for every other file."""
        unit = Unit(unit.scale, unit.dim, name)
        self.local[(source.name, name)] = unit
        return unit

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
    if dim.dimensionless:
        return ""
    return NAMED.get(dim) or str(dim)
