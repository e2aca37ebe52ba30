"""Data classes made on first use: ``@lazy_dataclass(frozen=True)`` is ``@dataclass(frozen=True)``
with the work of making the class (its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and,
frozen, ``__setattr__``/``__delattr__``, each generated and compiled by :mod:`dataclasses`) done
when the class is first used rather than when its module is imported.

Making a data class costs about a millisecond; the IR alone has thirty, and a small ``planner
eval`` spent a third of its time making classes it then barely used (a plan from the
compiled-plan cache is unpickled: no ``__init__`` runs). Creating an instance gets the class only
its ``__init__``, written from its annotations (each field stored in the instance's ``__dict__``,
defaults and default factories as :mod:`dataclasses` applies them; a class it cannot write that for
is made whole instead). A class here is an ordinary data class the moment anything asks for more of
its behaviour: comparing, hashing, printing or setting an attribute, and :func:`dataclasses.fields`
(``__dataclass_fields__``) or :func:`dataclasses.is_dataclass`; ``__match_args__`` is there from the
start. Thread-safe (the parser runs on a thread of its own). A method of the class's own
(``Span.__repr__``) stays, as :mod:`dataclasses` leaves it; base classes that are data classes are
not supported.

:mod:`dataclasses` itself is imported only when a class is made (it brings :mod:`inspect`, and with
it :mod:`ast`, :mod:`dis` and :mod:`tokenize`: 15 ms, a sixth of a warm ``planner eval``); a field
with options is declared with this module's :func:`field`, which takes the same arguments.
"""

from __future__ import annotations

import sys
import threading

_METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")
_LOCK = threading.RLock()
_PENDING: dict[type, dict] = {}


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()  # no default (dataclasses.MISSING, without importing dataclasses)


class Field:
    """What :func:`field` declares, kept until the class is made (then a :func:`dataclasses.field`
    with the same arguments)."""

    __slots__ = ("options",)

    def __init__(self, options: dict) -> None:
        self.options = options

    def __getattr__(self, name: str):
        if name in ("default", "default_factory", "kw_only"):
            return self.options.get(name, MISSING)
        if name in ("init", "repr", "compare"):
            return self.options.get(name, True)
        raise AttributeError(name)

    def real(self):
        import dataclasses

        return dataclasses.field(**self.options)


def field(**options) -> Field:
    """:func:`dataclasses.field` for a class of :func:`lazy_dataclass` (the same arguments)."""
    from .speed import on

    return Field(options) if on("lazy") else _dataclasses().field(**options)


def _dataclasses():
    import dataclasses

    return dataclasses


def lazy_dataclass(cls=None, /, **params):
    """``@dataclasses.dataclass(**params)``, made on first use (see the module); made at once when
    the trick is off (:mod:`planner.language.speed`)."""
    from .speed import on

    if not on("lazy"):
        return _dataclasses().dataclass(cls, **params) if cls is not None else _dataclasses().dataclass(**params)

    def wrap(cls: type) -> type:
        if any("__dataclass_fields__" in vars(b) for b in cls.__mro__[1:]):
            raise TypeError(f"{cls.__name__} derives from a data class: use dataclasses.dataclass")
        cls.__match_args__ = tuple(cls.__dict__.get("__annotations__", {}))
        _PENDING[cls] = params
        for name in _METHODS:
            if name not in cls.__dict__:  # a method of its own stays, as dataclass leaves it
                setattr(cls, name, _PLACEHOLDERS[name])
        cls.__dataclass_fields__ = _FIELDS
        cls.__dataclass_params__ = _PARAMS
        return cls

    return wrap if cls is None else wrap(cls)


def make(cls: type) -> type:
    """``cls`` made into its data class now (nothing when it already is)."""
    with _LOCK:
        params = _PENDING.pop(cls, None)
        if params is not None:
            own = {name for name in _METHODS if name in cls.__dict__ and not _ours(cls.__dict__[name])}
            for name in _METHODS:
                if _ours(cls.__dict__.get(name)):
                    delattr(cls, name)
            del cls.__dataclass_fields__, cls.__dataclass_params__
            for name in cls.__dict__.get("__annotations__", {}):
                if isinstance(cls.__dict__.get(name), Field):
                    setattr(cls, name, cls.__dict__[name].real())
            dataclasses = _dataclasses()
            dataclasses.dataclass(cls, **params)
            if params.get("frozen") and "__init__" not in own:
                _direct_init(cls)
    return cls


def _ours(method) -> bool:
    return getattr(method, "_lazy_placeholder", False) or getattr(method, "_lazy_init", False)


def _direct_init(cls: type) -> None:
    """A frozen data class's ``__init__`` storing each field in the instance's ``__dict__``, as
    :mod:`dataclasses` leaves it, instead of calling ``object.__setattr__`` per field (the frozen
    ``__setattr__`` then refuses later assignments as before): building an IR node or a span took
    twice as long the other way, and a 10,000-line plan builds a few hundred thousand. Default
    factories are called as :mod:`dataclasses` calls them; classes with anything else in their
    ``__init__`` (``__post_init__``, fields outside it, keyword-only fields, slots) keep the one
    :mod:`dataclasses` wrote."""
    dataclasses = _dataclasses()
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__ or any(not f.init or f.kw_only for f in fields):
        return
    init = _init_for(cls, [(f.name, (MISSING if f.default is dataclasses.MISSING else f.default)
                            if f.default_factory is dataclasses.MISSING else _Factory(f.default_factory))
                           for f in fields])
    if init is not None:
        cls.__init__ = init


class _Factory:
    """A field's ``default_factory``, as :func:`_init_for` takes it."""

    def __init__(self, factory) -> None:
        self.factory = factory


_UNSET = object()  # the default of a field with a factory: the factory is called when it is left out


def _init_for(cls: type, fields: list[tuple[str, object]]):
    """``__init__(self, <fields>)`` storing them in ``self.__dict__`` (a default of
    :data:`MISSING`: none; a :class:`_Factory`: called for each instance, as dataclasses
    does); None for a field name it cannot take."""
    if any(not name.isidentifier() or name in ("self", "_d", "_UNSET") for name, _ in fields):
        return None
    namespace: dict = {"_UNSET": _UNSET}
    params = []
    body = ""
    for name, default in fields:
        if default is MISSING:
            params.append(name)
        elif isinstance(default, _Factory):
            namespace[f"_factory_{name}"] = default.factory
            params.append(f"{name}=_UNSET")
            body += f"    if {name} is _UNSET:\n        {name} = _factory_{name}()\n"
        else:
            namespace[f"_default_{name}"] = default
            params.append(f"{name}=_default_{name}")
    body += "".join(f"    _d[{name!r}] = {name}\n" for name, _ in fields) or "    pass\n"
    exec(f"def __init__(self, {', '.join(params)}):\n    _d = self.__dict__\n{body}", namespace)  # noqa: S102
    init = namespace["__init__"]  # (our own field names, as dataclasses itself generates code)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _quick_init(cls: type) -> bool:
    """For a class not made yet, only its ``__init__`` (:func:`_init_for`, from its annotations and
    defaults), so that building instances does not make the class: ``__eq__``, ``__hash__``,
    ``__repr__`` and the rest stay placeholders until something asks for them (making the classes a
    small plan builds was a sixth of a small ``planner eval``). Storing into ``__dict__`` is what a
    frozen data class's ``__init__`` does, and what a plain one's ``self.name = value`` does when
    neither the class's ``__setattr__`` nor a descriptor of that name is in the way (else, and for
    ``InitVar``, ``ClassVar``, keyword-only fields or ``__post_init__``: False, and the class is
    made)."""
    with _LOCK:
        params = _PENDING.get(cls)
        if params is None or params.get("init") is False or hasattr(cls, "__post_init__") \
                or "__slots__" in cls.__dict__ or "__setattr__" in cls.__dict__ and not _ours(cls.__dict__["__setattr__"]):
            return False
        fields = []
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if not isinstance(annotation, str) or any(w in annotation for w in ("ClassVar", "InitVar", "KW_ONLY")):
                return False
            default = cls.__dict__.get(name, MISSING)
            real = sys.modules.get("dataclasses")  # a dataclasses.field() means it is imported
            if isinstance(default, Field) or (real is not None and isinstance(default, real.Field)):
                missing = MISSING if isinstance(default, Field) else real.MISSING
                if not default.init or default.kw_only is True:
                    return False
                if default.default_factory is not missing:
                    default = _Factory(default.default_factory)
                else:
                    default = MISSING if default.default is missing else default.default
            elif hasattr(type(default), "__get__"):
                return False  # a descriptor: the data class's `self.name = value` would go through it
            fields.append((name, default))
        init = _init_for(cls, fields)
        if init is None:
            return False
        init._lazy_init = True
        cls.__init__ = init
        return True


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


def _shared(name: str):
    """The placeholder of method ``name``, one for every class (the class it stands in for is the
    one of ``self``'s classes that holds it: making a closure per class and method was half the
    time of declaring a class)."""

    def method(self, *args, **kwargs):
        cls = next((k for k in type(self).__mro__ if k.__dict__.get(name) is method), None)
        if cls is None:  # called on an object of another class: A.__eq__(b, a)
            raise TypeError(f"{name} of a lazy data class called on a {type(self).__name__}")
        if not (name == "__init__" and _quick_init(cls)):
            make(cls)
        return getattr(cls, name)(self, *args, **kwargs)

    method._lazy_placeholder = True
    method.__name__ = method.__qualname__ = name
    return method


_PLACEHOLDERS = {name: _shared(name) for name in _METHODS}
