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
            for name in _METHODS:
                if getattr(cls.__dict__.get(name), "_lazy_placeholder", False):
                    delattr(cls, name)
            del cls.__dataclass_fields__, cls.__dataclass_params__
            dataclasses.dataclass(cls, **params)
    return cls


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
