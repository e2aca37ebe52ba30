"""Markdown reports: Jinja templates over the plain view model.

The only home of jinja2. Templates, the shipped ``report.md.j2`` and users'
own, run in :class:`jinja2.sandbox.ImmutableSandboxedEnvironment`: no
attribute starting with ``_``, no mutation of the view model, no unsafe
callables, and guards on ``**`` and repetition so a template cannot burn
the machine. Undefined names are errors (``StrictUndefined``); autoescape is
off (the output is Markdown, not HTML). Any error a template causes, syntax,
undefined name, sandbox violation or a failing operation, becomes a
:class:`~planner.errors.TemplateError` pointing at the template's line.

Filters for Markdown (documented in the README):

* ``cell``: make text safe inside a table cell (``|`` escaped, newlines as spaces);
* ``math``: inline math that renders on GitHub, ``$`...`$``;
* ``code``: an inline code span (longer fences when the text has backticks);
* ``text``: plain text made safe for Markdown (``*``, ``_``, ``[``... escaped
  outside `code spans`), for messages and SymPy expressions;
* ``fmt(digits=6, unit="")``: a number with ``digits`` significant digits.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from jinja2 import BaseLoader, StrictUndefined, TemplateNotFound
from jinja2.exceptions import SecurityError, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .errors import TemplateError, UsageError, suggest
from .plan import format_value
from .source import Source, Span

DEFAULT_TEMPLATE = "report.md.j2"
MAX_REPEAT = 1_000_000  # characters or items a `*` may produce
MAX_POWER = 1024  # largest integer exponent a `**` may use


# ---- filters ---------------------------------------------------------------------

def cell(value: Any) -> str:
    """Text for a Markdown table cell: ``|`` escaped, line breaks flattened."""
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", r"\|")


def math(latex: Any) -> str:
    """Inline math that GitHub renders: ``$`...`$`` (backticks keep Markdown out)."""
    return f"$`{latex}`$" if latex not in (None, "") else ""


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_MARKDOWN = re.compile(r"([\\*_\[\]<>#~])")  # `|` is the business of `cell`


def text(value: Any) -> str:
    """Plain text (planner's messages, SymPy expressions like ``5*x**4``) made
    safe for Markdown: special characters escaped outside `code spans`."""
    value = "" if value is None else str(value)
    out, last = [], 0
    for m in _CODE_SPAN.finditer(value):
        out.append(_MARKDOWN.sub(r"\\\1", value[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_MARKDOWN.sub(r"\\\1", value[last:]))
    return "".join(out)


def code(text: Any) -> str:
    text = "" if text is None else str(text)
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fmt(value: Any, digits: int = 6, unit: str = "") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return format_value(value)
    return format_value(float(value), unit, int(digits))


FILTERS: dict[str, Callable] = {"cell": cell, "math": math, "code": code, "text": text, "fmt": fmt}


# ---- environment --------------------------------------------------------------------

class _Loader(BaseLoader):
    """Serves the shipped templates, or one user template (and files next to it).

    Remembers every text it served, by file name, so errors can be located."""

    def __init__(self, directory: Optional[Path]) -> None:
        self.directory = directory
        self.served: dict[str, Source] = {}

    def get_source(self, environment, template: str):
        if self.directory is None:
            from importlib import resources

            res = resources.files("planner.templates").joinpath(template)
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


class _Environment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["*", "**"])

    def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int) and not isinstance(right, bool) and abs(right) > MAX_POWER:
            raise SecurityError(f"exponent {right} is too large for a template (limit {MAX_POWER})")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_REPEAT:
                    raise SecurityError(f"repetition would make {len(seq) * n} items (limit {MAX_REPEAT})")
        return super().call_binop(context, operator, left, right)


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
    return env


# ---- rendering ------------------------------------------------------------------------

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
        text = env.get_template(name).render(view)
    except TemplateSyntaxError as exc:
        raise _located(loader, exc, exc.filename, exc.lineno, f"template syntax error: {exc.message}") from None
    except TemplateNotFound as exc:
        raise TemplateError(f"template not found: {exc.name}", _traceback_span(loader, exc)) from None
    except Exception as exc:  # noqa: BLE001 - only errors raised inside the template
        where = _template_frame(loader, exc)
        if where is None:
            raise
        err = _located(loader, exc, where[0], where[1], _describe(exc))
        if isinstance(exc, UndefinedError):
            err.hint = _did_you_mean(exc, view) or err.hint
        raise err from None
    return text if text.endswith("\n") else text + "\n"


def _describe(exc: BaseException) -> str:
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
    (SecurityError, "templates see plain data only (dicts, lists, strings, numbers); see the README's view model"),
    (UndefinedError, "every key of the view model is listed in the README; use `x is defined` for optional ones"),
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
