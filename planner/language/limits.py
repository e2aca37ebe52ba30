"""What a plan may ask of planner, and deep work on a big stack.

A plan is data from anywhere, so its size and shape are bounded before any
stage works on it, each bound a located error naming the limit (family
``limit``; the "Limits" table of docs/hostile.md lists them):

* a plan file (or an imported one) has at most ``MAX_FILE_BYTES`` bytes
  and ``MAX_TOKENS`` tokens;
* one statement has at most ``MAX_STATEMENT_TOKENS`` tokens (about half
  as many terms: a sum of 10,000 terms is fine, of 100,000 is refused);
* expressions nest at most ``MAX_DEPTH`` levels (brackets, calls, a chain
  of `^`, prefix `-`/`not`), counted on the token stream while parsing;
* a call of a user function expands to at most ``MAX_EXPANSION`` nodes and
  ``MAX_EXPANDED_DEPTH`` levels (checked in the analysis, before anything is
  expanded, so ``f_k(x) = f_{k-1}(x) + f_{k-1}(x)`` is refused at once);
* exact arithmetic on constants (``10 ^ 1000000000``) is refused past
  ``MAX_EXACT_BITS``, in :mod:`planner.language.dims`.

Within those bounds the passes over an expression still recurse about once
per level, and CPython's C stack (8 MB on the main thread) overflows, a
segmentation fault, before ``RecursionError`` at a few thousand levels of
some SymPy and lark calls. :func:`deep` runs work on a thread with a
``STACK_BYTES`` stack and a recursion limit it can afford; the CLI runs every
command through it and :func:`planner.load` loads through it, so every
stage, present and future, gets the same protection. A ``RecursionError``
that still happens becomes a :class:`~planner.language.errors.LimitError`.
"""

from __future__ import annotations

import gc
import re
import sys
import threading
import unicodedata
from contextlib import contextmanager

from . import speed

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Callable, Optional, TypeVar

    T = TypeVar("T")

MAX_FILE_BYTES = 8_000_000
MAX_TOKENS = 1_500_000
MAX_STATEMENT_TOKENS = 25_000
MAX_DEPTH = 500
MAX_EXPANSION = 200_000
MAX_EXPANDED_DEPTH = 12_000
MAX_EXACT_BITS = 100_000  # about 30,000 digits: exact constants larger than that are refused

STACK_BYTES = 1 << 30  # virtual: only the pages a deep walk touches are used
DEEP_RECURSION = 400_000  # Python frames on that stack (measured: under 2 KB of C stack each)


class LimitExceeded(Exception):
    """Raised inside the parser's post-lexer (which knows no source); the
    parser turns it into a located :class:`LimitError`."""

    def __init__(self, message: str, start: int, end: int, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.start, self.end, self.hint = message, start, end, hint


# Characters that never belong in plan text: C0 controls but tab, line feed, carriage return and
# form feed; DEL and the C1 controls (terminal escape sequences start with these); and the
# bidirectional overrides and isolates that make code read differently from how it runs
# ("Trojan Source"; Rust refuses them in source too).
_NOT_TEXT = "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"  # (compiled when first used:
# a plan from the cache is not read again)


def check_text(source) -> None:
    """Refuse text that is not plan text, naming the position and the character, never the line."""
    m = re.search(_NOT_TEXT, source.text)
    if m is None:
        return
    from .errors import NotPlanText
    from .source import Span

    ch = m.group()
    if ch == "\0":
        name = "a NUL byte (U+0000)"
    elif "\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069":
        name = f"the bidirectional control U+{ord(ch):04X} ({unicodedata.name(ch).lower()})"
    else:
        name = f"the control character U+{ord(ch):04X}" + (" (escape)" if ch == "\x1b" else "")
    raise NotPlanText(f"{name}: this is not plan text", Span(source, m.start(), m.end()),
                      hint="plans are UTF-8 text without control characters; the line is not shown")


# Token types for the nesting count (names of grammar/plan.lark's terminals).
_OPEN = {"LPAR", "LSQB"}
_CLOSE = {"RPAR", "RSQB"}
_CHAIN = {"POW_OP", "MINUS", "PLUS", "NOT"}  # nest without brackets: `2^2^2`, `- - x`, `not not p`
_BREAK = {"ADD_OP", "MUL_OP", "COMP_OP", "AND", "OR", "COMMA", "EQUAL", "_NL"}


class TokenBudget:
    """Counts tokens and nesting while the post-lexer streams them."""

    def __init__(self) -> None:
        self.total = 0
        self.in_statement = 0
        self.statement_start = 0
        self.levels: list[int] = [0]  # per open bracket: the chain count at that level
        self.depth = 1

    def see(self, tok) -> None:
        self.total += 1
        kind = tok.type
        if kind != "_NL":  # a newline (blank lines and comments with it) is no term of a statement
            self.in_statement += 1
            if self.in_statement == 1:
                self.statement_start = tok.start_pos
        if kind in _OPEN:
            self.levels.append(0)
            self.depth += 1
        elif kind in _CLOSE:
            if len(self.levels) > 1:
                self.depth -= 1 + self.levels.pop()
        elif kind in _CHAIN:
            self.levels[-1] += 1
            self.depth += 1
        elif kind in _BREAK:
            self.depth -= self.levels[-1]
            self.levels[-1] = 0
        if self.depth > MAX_DEPTH:
            raise LimitExceeded(f"this expression nests deeper than {MAX_DEPTH:,} levels (the limit)",
                                tok.start_pos, tok.end_pos,
                                "give inner parts names of their own: `inner = ...`, then use `inner`")
        if self.in_statement > MAX_STATEMENT_TOKENS:
            raise LimitExceeded(f"this statement has more than {MAX_STATEMENT_TOKENS:,} tokens (the limit: "
                                "about half as many terms)", self.statement_start, tok.end_pos,
                                "split it into several quantities, each a part of the sum")
        if self.total > MAX_TOKENS:
            raise LimitExceeded(f"the file has more than {MAX_TOKENS:,} tokens (the limit)",
                                tok.start_pos, tok.end_pos, "split the plan into files that import each other")

    def end_statement(self) -> None:
        self.in_statement = 0
        self.levels = [0]
        self.depth = 1


# ---- a big stack ---------------------------------------------------------------

_local = threading.local()


def deep(fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)`` on a thread with a big stack (or right here when
    already on one); its result, or its exception, as if called directly."""
    if getattr(_local, "deep", False) or not speed.on("deep"):  # (off: planner.language.speed)
        return _guarded(fn, args, kwargs)
    return _on_thread(fn, args, kwargs, None)


def within(seconds: float, fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)`` on a thread of its own with a big stack, waited for at most ``seconds``:
    its result, or its exception, as if called directly; past that a :class:`TimeoutError`, and the
    thread is stopped (:func:`_stop`)."""
    return _on_thread(fn, args, kwargs, seconds)


class _Stopped(BaseException):
    """Raised inside a thread whose wait ran out (:func:`within`); a BaseException, so that no
    ``except Exception`` of the work (SymPy has some) catches it and carries on."""


def _stop(thread: threading.Thread) -> None:
    """``thread`` stopped at its next Python instruction, by an exception raised in it (CPython's
    ``PyThreadState_SetAsyncExc``, the one way to stop a thread): a closed form past its budget stops
    using a core (under ``planner serve``, where it ran on as long as SymPy took). A call into C (a huge
    integer's product) finishes first; where the interpreter has no such call (not CPython), the thread
    runs on, as before, and what it finds is dropped."""
    try:
        import ctypes

        raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):
        return
    if thread.ident is not None and thread.is_alive():
        raise_in(ctypes.c_ulong(thread.ident), ctypes.py_object(_Stopped))


def _on_thread(fn, args, kwargs, seconds: Optional[float]):
    import time

    box: dict[str, object] = {}

    def work() -> None:
        _local.deep = True
        try:
            box["value"] = _guarded(fn, args, kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    thread = _start(work)
    if thread is None:  # no big thread on this platform: the parse-time limits still hold
        return _guarded(fn, args, kwargs)
    end = None if seconds is None else time.monotonic() + seconds
    while thread.is_alive():
        if end is not None and time.monotonic() >= end:
            _stop(thread)
            raise TimeoutError(f"more than {seconds:g} s")
        thread.join(0.5 if end is None else min(0.5, max(0.0, end - time.monotonic())))  # (lets Ctrl-C through)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


_start_lock = threading.Lock()


def _start(work: Callable[[], None]) -> Optional[threading.Thread]:
    with _start_lock:  # stack_size is process-wide: set it only for this thread's start
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):
            return None
        try:
            thread = threading.Thread(target=work, name="planner-deep", daemon=True)
            thread.start()
        except RuntimeError:
            return None
        finally:
            threading.stack_size(previous)
    return thread


def _guarded(fn, args, kwargs):
    from .errors import LimitError

    limit = sys.getrecursionlimit()
    on_big_stack = getattr(_local, "deep", False)
    if on_big_stack:
        sys.setrecursionlimit(max(limit, DEEP_RECURSION))
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        raise LimitError("the plan is nested too deeply for planner to work on it",
                         hint=f"the limits (nesting {MAX_DEPTH:,} levels, {MAX_STATEMENT_TOKENS:,} tokens a "
                              "statement) are in docs/hostile.md; give parts of long formulas names of their own") from None
    finally:
        if on_big_stack:
            sys.setrecursionlimit(limit)


# ---- no collector while big structures are built ---------------------------------------

RECURSION_LIMIT = 50_000


@contextmanager
def paused_gc():
    """No cyclic garbage collection while a plan is built: loading allocates many
    long-lived objects (parse tree, IR, SymPy trees) and the collector would walk
    them over and over (40% of the load time of a 10,000-quantity plan). It runs
    again, as before, when the block ends.

    The recursion limit is raised meanwhile: the passes over a formula recurse
    once per operator, so a sum of a few hundred terms would exceed Python's
    default of 1,000 frames (Python 3.11 keeps these frames off the C stack).

    In the command line's process (:func:`own_collector`), what the block built goes straight to
    the collector's oldest generation when it ends (:func:`gc.freeze`, then :func:`gc.unfreeze`,
    which puts the frozen objects there): left in the youngest, all of it would be walked by the
    first collection after the block, 0.2 s for a 10,000-line plan and 2 s for a 100,000-line one.
    Once the command line has frozen the loaded plan (:func:`freeze`), what a block builds is
    frozen with it. In anyone else's process it is left as it is: unfreezing would also unfreeze
    what its owner froze, and asking the collector what is frozen walks every frozen object."""
    enabled = gc.isenabled() and speed.on("gc")  # (off: the collector as Python runs it)
    limit = sys.getrecursionlimit()
    if enabled:
        gc.disable()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            if _COLLECTOR["owned"]:
                gc.freeze()
                if not _COLLECTOR["frozen"]:
                    gc.unfreeze()
            gc.enable()


_COLLECTOR = {"owned": False, "frozen": False}  # the command line's process; the plan frozen by freeze()


def own_collector(on: bool) -> None:
    """The command line says the process is its own: nothing but planner freezes objects in it
    (:func:`paused_gc` may then move what it built to the oldest generation). Off again, what
    :func:`freeze` froze is unfrozen."""
    _COLLECTOR["owned"] = on
    if not on:
        unfreeze()


def freeze() -> None:
    """:func:`gc.freeze` for the loaded plan, known to :func:`paused_gc`."""
    if not speed.on("gc"):
        return
    gc.freeze()
    _COLLECTOR["frozen"] = True


def unfreeze() -> None:
    gc.unfreeze()
    _COLLECTOR["frozen"] = False
