"""Data classes made on first use: ``@lazy_dataclass(frozen=True)`` is ``@dataclass(frozen=True)``
with the work of making the class (its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and,
frozen, ``__setattr__``/``__delattr__``, each generated and compiled by :mod:`dataclasses`) done
when the class is first used rather than when its module is imported.

Making a data class costs about a millisecond; the IR alone has thirty, and a small ``planner
eval`` spent a third of its time making classes it then barely used (a plan from the
compiled-plan cache is unpickled: no ``__init__`` runs). A class here is an ordinary data class
the moment anything asks for its behaviour: creating an instance, comparing, hashing, printing or
setting an attribute, and :func:`dataclasses.fields` (``__dataclass_fields__``) or
:func:`dataclasses.is_dataclass`; ``__match_args__`` is there from the start. Thread-safe (the
parser runs on a thread of its own). A method of the class's own (``Span.__repr__``) stays, as
:mod:`dataclasses` leaves it; base classes that are data classes are not supported.
"""

from __future__ import annotations

import dataclasses
import threading

_METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")
_LOCK = threading.RLock()
_PENDING: dict[type, dict] = {}


def lazy_dataclass(cls=None, /, **params):
    """``@dataclasses.dataclass(**params)``, made on first use (see the module)."""

    def wrap(cls: type) -> type:
        if any(dataclasses.is_dataclass(b) for b in cls.__mro__[1:]):
            raise TypeError(f"{cls.__name__} derives from a data class: use dataclasses.dataclass")
        cls.__match_args__ = tuple(cls.__dict__.get("__annotations__", {}))
        _PENDING[cls] = params
        for name in _METHODS:
            if name not in cls.__dict__:  # a method of its own stays, as dataclass leaves it
                setattr(cls, name, _placeholder(cls, name))
        cls.__dataclass_fields__ = _FIELDS
        cls.__dataclass_params__ = _PARAMS
        return cls

    return wrap if cls is None else wrap(cls)


def make(cls: type) -> type:
    """``cls`` made into its data class now (nothing when it already is)."""
    with _LOCK:
        params = _PENDING.pop(cls, None)
        if params is not None:
            own = {name for name in _METHODS if not getattr(cls.__dict__.get(name), "_lazy_placeholder", False)
                   and name in cls.__dict__}
            for name in _METHODS:
                if getattr(cls.__dict__.get(name), "_lazy_placeholder", False):
                    delattr(cls, name)
            del cls.__dataclass_fields__, cls.__dataclass_params__
            dataclasses.dataclass(cls, **params)
            if params.get("frozen") and "__init__" not in own:
                _direct_init(cls)
    return cls


def _direct_init(cls: type) -> None:
    """A frozen data class's ``__init__`` storing each field in the instance's ``__dict__``, as
    :mod:`dataclasses` leaves it, instead of calling ``object.__setattr__`` per field (the frozen
    ``__setattr__`` then refuses later assignments as before): building an IR node or a span took
    twice as long the other way, and a 10,000-line plan builds a few hundred thousand. Classes with
    anything else in their ``__init__`` (``__post_init__``, default factories, fields outside it,
    keyword-only fields, slots) keep the one :mod:`dataclasses` wrote."""
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__ or any(
            not f.init or f.default_factory is not dataclasses.MISSING or f.kw_only or not f.name.isidentifier()
            or f.name in ("self", "_d") for f in fields):
        return
    namespace: dict = {}
    params = []
    for f in fields:
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"    _d[{f.name!r}] = {f.name}\n" for f in fields) or "    pass\n"
    source = f"def __init__(self, {', '.join(params)}):\n    _d = self.__dict__\n{body}"
    exec(source, namespace)  # noqa: S102  (our own field names, as dataclasses itself generates)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init


class _Makes:
    """``__dataclass_fields__`` (or ``__dataclass_params__``) until the class is made: asking for
    it makes the class and answers with the real one."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        owner = owner if owner is not None else type(obj)
        for klass in owner.__mro__:
            if klass.__dict__.get(self.name) is self:
                make(klass)
                return getattr(owner, self.name)
        raise AttributeError(self.name)


_FIELDS = _Makes("__dataclass_fields__")
_PARAMS = _Makes("__dataclass_params__")


def _placeholder(cls: type, name: str):
    def method(self, *args, **kwargs):
        make(cls)
        return getattr(cls, name)(self, *args, **kwargs)

    method._lazy_placeholder = True
    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    return method
