"""Markdown reports: Jinja templates over the plain view model.

The only home of jinja2. Templates, the shipped ``report.md.j2`` and users'
own, run in :class:`jinja2.sandbox.ImmutableSandboxedEnvironment`: no
attribute starting with ``_``, no mutation of the view model, no unsafe
callables, and bounds on what a template builds so it cannot burn the
machine: ``**`` and ``*`` have their own limits, and no text or list may
grow past ``MAX_TEXT`` characters or items (concatenation, joins,
replacements, padding and format widths, macro output, the output itself),
each checked before the text is built. Undefined names are errors (``StrictUndefined``); autoescape is
off (the output is Markdown, not HTML). Any error a template causes, syntax,
undefined name, sandbox violation or a failing operation, becomes a
:class:`~planner.language.errors.TemplateError` pointing at the template's line.

Filters for Markdown (documented in docs/report.md):

* ``cell``: make text safe inside a table cell (``|`` escaped, newlines as spaces);
* ``math``: inline math that renders on GitHub, ``$`...`$``;
* ``code``: an inline code span (longer fences when the text has backticks);
* ``text``: plain text made safe for Markdown and HTML (``*``, ``_``, ``[``, ``<``, ``&``... escaped
  outside `code spans`; :mod:`planner.outputs.markup`, the one escaping rule);
* ``markdown``: the plan's sentences as limited Markdown (emphasis, code spans, links to http(s),
  mailto and relative URLs; no HTML) by the same rule;
* ``fmt(digits=6, unit="")``: a number with ``digits`` significant digits;
* ``ident``: an identifier as ``<code>`` that may break after ``_``, ``.`` and ``/``.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from functools import update_wrapper
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from jinja2 import BaseLoader, StrictUndefined, TemplateNotFound, Undefined
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..compute.evaluation import format_value
from ..language.errors import TemplateError, UsageError, suggest
from ..language.source import Source, Span
from .markup import code, markdown, text

DEFAULT_TEMPLATE = "report.md.j2"
MAX_REPEAT = 1_000_000  # characters or items a `*` may produce
MAX_POWER = 1024  # largest integer exponent a `**` may use
MAX_TEXT = 20_000_000  # characters (or items) of any text or list a template builds, the output included
MAX_LIPSUM = 1000  # paragraphs of `lipsum(n)`
MAX_INT_BITS = 100_000  # bits of an integer `**` or `*` may make (about 30,000 digits)
MAX_CALL_DEPTH = 200  # macro calls (and recursive loops) nested inside each other
MAX_INCLUDES = 10_000  # templates fetched in one render (`include`, `import`, `extends`)
RENDER_SECONDS = 60  # CPU is a budget too: `{% for i in range(10**5) %}{% for j in range(10**5) %}`


# ---- filters ---------------------------------------------------------------------

def cell(value: Any) -> str:
    """Text for a Markdown table cell: ``|`` escaped, line breaks flattened."""
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", r"\|")


def math(latex: Any) -> str:
    """Inline math that GitHub renders: ``$`...`$`` (backticks keep Markdown out; on one line)."""
    return f"$`{' '.join(str(latex).splitlines())}`$" if latex not in (None, "") else ""


def fmt(value: Any, digits: int = 6, unit: str = "") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return format_value(value)
    return format_value(float(value), unit, int(digits))


def ident(name: Any) -> str:
    """An identifier as code that may break after ``_``, ``.`` and ``/`` (``<wbr>``), so a long name
    (a row's identifier, a scenario's column heading) does not widen its table past GitHub's column."""
    import html

    text = html.escape("" if name is None else str(name))
    return "<code>" + re.sub(r"([_./])", r"\1<wbr>", text) + "</code>"


FILTERS: dict[str, Callable] = {"cell": cell, "math": math, "code": code, "text": text, "markdown": markdown,
                                "fmt": fmt, "ident": ident}


# ---- environment --------------------------------------------------------------------

class _Loader(BaseLoader):
    """Serves the shipped templates, or one user template (and files next to it).

    Remembers every text it served, by file name, so errors can be located."""

    def __init__(self, directory: Optional[Path]) -> None:
        self.directory = directory
        self.served: dict[str, Source] = {}

    def get_source(self, environment, template: str):
        if self.directory is None:
            from ..language.data import data_dir

            res = data_dir("templates") / template
            if "/" in template or "\\" in template or not res.is_file():
                raise TemplateNotFound(template)
            text, filename = res.read_text(encoding="utf-8"), f"<planner>/templates/{template}"
        else:
            path = (self.directory / template).resolve()
            if self.directory.resolve() not in path.parents or not path.is_file():
                raise TemplateNotFound(template)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise TemplateNotFound(f"{template} ({exc})") from None
            filename = str(self.directory / template)
        self.served[filename] = Source(filename, text)
        return text, filename, lambda: True


class _TooBig(SecurityError):
    """A template tried to build more text than MAX_TEXT (or a huge width, count or power)."""


def _limit(size: int, what: str) -> None:
    if size > MAX_TEXT:
        raise _TooBig(f"{what} would make {size:,} characters or items (limit {MAX_TEXT:,})")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple, dict)) else 0


_DIGITS = re.compile(r"\d+")


def _check_arguments(args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Widths and counts: an integer argument above MAX_TEXT would only build text past it."""
    for v in (*args, *kwargs.values()):
        if type(v) is int and v > MAX_TEXT:
            raise _TooBig(f"the argument {v:,} is above the limit of {MAX_TEXT:,} for a template")


def _check_format(fmt: Any) -> None:
    """A format string (``%`` or ``.format``) whose width or precision is above MAX_TEXT."""
    if isinstance(fmt, str):
        _check_arguments([int(d) for d in _DIGITS.findall(fmt) if len(d) > 7], {})


def _estimate(name: str, obj: Any, args: Sequence[Any]) -> int:
    """The size of a join or a replacement, known before it is built."""
    if name == "join" and args and isinstance(args[0], (list, tuple)):
        return sum(len(str(x)) for x in args[0]) + len(str(obj)) * len(args[0])
    if name == "replace" and isinstance(obj, str) and len(args) >= 2:
        old, new = str(args[0]), str(args[1])
        return len(obj) + (obj.count(old) if old else len(obj) + 1) * max(0, len(new) - len(old))
    return 0


def _bounded_filter(name: str, func: Callable) -> Callable:
    """A filter whose arguments and result are held to MAX_TEXT."""
    first = 2 if getattr(func, "jinja_pass_arg", None) else 1  # the value follows the context/environment

    def bounded(*args: Any, **kwargs: Any) -> Any:
        value, rest = args[first - 1], args[first:]
        _check_arguments(rest, kwargs)
        if name == "format":
            _check_format(value)
        if name in ("join", "replace"):
            _limit(_estimate(name, rest[0] if rest else "", [value]) if name == "join"
                   else _estimate(name, value, rest), f"the filter `{name}`")
        result = func(*args, **kwargs)
        _limit(_size(result), f"the filter `{name}`")
        return result

    return update_wrapper(bounded, func)


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002 - Jinja's names
    from jinja2.utils import generate_lorem_ipsum

    if n > MAX_LIPSUM or max > 1000:
        raise _TooBig(f"lipsum makes at most {MAX_LIPSUM} paragraphs of at most 1000 words (limit)")
    return generate_lorem_ipsum(n, html, min, max)


class _CodeGenerator(CodeGenerator):
    def visit_For(self, node, frame) -> None:  # every loop iterates through the environment's clock
        from jinja2 import nodes

        node.iter = nodes.Call(nodes.EnvironmentAttribute("ticking"), [node.iter], [], None, None,
                               lineno=node.iter.lineno)
        super().visit_For(node, frame)

    def visit_Concat(self, node, frame) -> None:  # `a ~ b`, through the environment's bounded concat
        self.write("environment.concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _Environment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["*", "**", "+", "%"])
    code_generator_class = _CodeGenerator
    deadline = float("inf")  # time.monotonic() past which a render stops (set by render)
    depth = 0  # calls (macros, recursive loops) in progress
    includes = 0  # templates fetched so far (`include`, `import`, `extends`)

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _TooSlow(f"the template ran for more than {RENDER_SECONDS:g} s")

    def ticking(self, iterable):
        """A loop's items, with the clock checked as it goes (an empty nested loop calls nothing else)."""
        self.tick()
        if isinstance(iterable, Undefined):
            return iterable
        return _Ticking(self, iterable)

    def get_template(self, name: Any, parent: Optional[str] = None, *args: Any, **kwargs: Any):
        self.includes += 1
        if parent is not None and name == parent:  # `include`/`extends` of itself: would recurse until a limit
            raise _TooBig(f"`{name}` includes or extends itself")
        if self.includes > MAX_INCLUDES:
            raise _TooBig(f"more than {MAX_INCLUDES:,} templates included (templates that include each other?)")
        return super().get_template(name, parent, *args, **kwargs)

    def concat(self, parts) -> str:  # `~`, macro and block bodies, and the whole output
        parts = [p if isinstance(p, str) else str(p) for p in parts]
        _limit(sum(map(len, parts)), "the text")
        return "".join(parts)

    def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
        self.tick()
        if operator == "**" and isinstance(right, int) and not isinstance(right, bool) and abs(right) > MAX_POWER:
            raise _TooBig(f"exponent {right} is too large for a template (limit {MAX_POWER})")
        if operator in ("**", "*") and _is_int(left) and _is_int(right):
            bits = (abs(left).bit_length() * abs(right) if operator == "**"
                    else abs(left).bit_length() + abs(right).bit_length())
            if bits > MAX_INT_BITS:  # ((10 ** 1000) ** 1000) ** 1000 is 3.3 billion bits
                raise _TooBig(f"`{operator}` would make an integer of about {bits:,} bits (limit {MAX_INT_BITS:,})")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_REPEAT:
                    raise _TooBig(f"repetition would make {len(seq) * n} items (limit {MAX_REPEAT})")
        if operator == "+":
            _limit(_size(left) + _size(right), "`+`")
        if operator == "%" and isinstance(left, str):
            _check_format(left)
            _check_arguments(right if isinstance(right, tuple) else (right,), {})
        return super().call_binop(context, operator, left, right)

    def call(__self, __context, __obj, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - Jinja's signature
        __self.tick()
        _check_arguments(args, kwargs)
        name = getattr(__obj, "__name__", "")
        _limit(_estimate(name, getattr(__obj, "__self__", None), args), f"`{name}`")
        if __self.depth >= MAX_CALL_DEPTH:  # a macro that calls itself, on any stack
            raise _TooBig(f"calls nested deeper than {MAX_CALL_DEPTH} levels (a macro that calls itself?)")
        __self.depth += 1
        try:
            result = super().call(__context, __obj, *args, **kwargs)
        finally:
            __self.depth -= 1
        _limit(_size(result), f"`{name or 'the call'}`")
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        self.tick()
        return super().getattr(obj, attribute)

    def wrap_str_format(self, value: Any) -> Optional[Callable[..., str]]:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _check_format(value.__self__)
        return wrapped


class _Ticking:
    """An iterator that checks the render's clock every 1,000 items."""

    def __init__(self, env: _Environment, iterable) -> None:
        self.env, self.items, self.n = env, iter(iterable), 0

    def __iter__(self):
        return self

    def __next__(self):
        self.n += 1
        if self.n % 1000 == 0:
            self.env.tick()
        return next(self.items)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _environment(loader: _Loader) -> _Environment:
    env = _Environment(
        loader=loader,
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.filters = {name: _bounded_filter(name, f) for name, f in env.filters.items()}
    env.globals["lipsum"] = _lipsum
    return env


# ---- rendering ------------------------------------------------------------------------

class _TooSlow(Exception):
    """A template that renders for longer than RENDER_SECONDS."""


@contextmanager
def _time_limit(env: _Environment, seconds: float):
    """Stop a render after ``seconds``: every loop iteration (per 1,000 items), call, operator and
    attribute checks the clock, on any thread (the CLI renders on a worker thread with a big stack)."""
    env.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        env.deadline = float("inf")


def render(view: Mapping[str, Any], template: Optional[str] = None) -> str:
    """Render the view model with the shipped template or a user's template file.

    Raises :class:`TemplateError` (a PlanError) for any error the template
    causes, pointing at the template's line."""
    if template is None:
        loader, name = _Loader(None), DEFAULT_TEMPLATE
    else:
        path = Path(template)
        if not path.is_file():
            raise UsageError(f"no such template: {template}" if not path.exists() else f"{template} is not a file")
        loader, name = _Loader(path.parent), path.name
    env = _environment(loader)
    try:
        with _time_limit(env, RENDER_SECONDS):
            text = env.get_template(name).render(view)
    except TemplateSyntaxError as exc:
        raise _located(loader, exc, exc.filename, exc.lineno, f"template syntax error: {exc.message}") from None
    except TemplateNotFound as exc:
        raise TemplateError(f"template not found: {exc.name}", _traceback_span(loader, exc)) from None
    except Exception as exc:  # noqa: BLE001 - only errors raised inside the template
        where = _template_frame(loader, exc)
        if where is None and isinstance(exc, (_TooBig, _TooSlow)):  # no one line to blame
            raise _located(loader, exc, None, None, f"the output of {name}: {exc}") from None
        if where is None:
            raise
        err = _located(loader, exc, where[0], where[1], _describe(exc))
        if isinstance(exc, UndefinedError):
            err.hint = _did_you_mean(exc, view) or err.hint
        raise err from None
    return text if text.endswith("\n") else text + "\n"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (_TooBig, _TooSlow)):
        return f"the template went past a limit: {exc}"
    if isinstance(exc, SecurityError):
        return f"the template tried something the sandbox forbids: {exc}"
    if isinstance(exc, UndefinedError):
        return f"undefined in the template: {exc.message}"
    return f"template error: {type(exc).__name__}: {exc}"


def _did_you_mean(exc: UndefinedError, view: Mapping[str, Any]) -> Optional[str]:
    """A close key of the view model for ``'titel' is undefined`` or ``has no attribute 'nme'``."""
    words = _QUOTED.findall(exc.message or "")
    if not words:
        return None
    keys: set[str] = set()
    stack: list[Any] = [view]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            keys.update(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    guess = suggest(words[-1], keys)
    return f"did you mean `{guess}`?" if guess else None


_HINTS = (
    (_TooBig, f"templates are bounded (at most {MAX_TEXT:,} characters or items built); see docs/hostile.md"),
    (SecurityError, "templates see plain data only (dicts, lists, strings, numbers); see docs/report.md (the view model)"),
    (UndefinedError, "every key of the view model is listed in docs/report.md; use `x is defined` for optional ones"),
)


def _located(loader: _Loader, exc: BaseException, filename: Optional[str], lineno: Optional[int],
             message: str) -> TemplateError:
    source = loader.served.get(filename or "")
    span = _line_span(source, lineno, exc) if source is not None and lineno else None
    hint = next((h for kind, h in _HINTS if isinstance(exc, kind)), None)
    return TemplateError(message, span, hint=hint)


def _template_frame(loader: _Loader, exc: BaseException) -> Optional[tuple[str, int]]:
    """The innermost traceback frame that is a template line (Jinja rewrites
    template frames to carry the template's file name and line)."""
    tb = exc.__traceback__
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in loader.served:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _traceback_span(loader: _Loader, exc: BaseException) -> Optional[Span]:
    where = _template_frame(loader, exc)
    if where is None:
        return None
    return _line_span(loader.served[where[0]], where[1], exc)


_QUOTED = re.compile(r"'([^']+)'")


def _line_span(source: Source, lineno: int, exc: BaseException) -> Span:
    """The template line; narrowed to the offending name when the message quotes one."""
    lines = source.text.split("\n")
    lineno = max(1, min(lineno, len(lines)))
    start = sum(len(line) + 1 for line in lines[: lineno - 1])
    line = lines[lineno - 1]
    for word in _QUOTED.findall(str(getattr(exc, "message", None) or exc)):
        m = re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", line)
        if m:
            return Span(source, start + m.start(), start + m.end())
    stripped = len(line) - len(line.lstrip())
    end = start + len(line.rstrip())
    return Span(source, start + stripped, max(end, start + stripped + 1))
