"""``record``: attrs' ``define`` with one shared ``__repr__``, ``__eq__`` and (frozen) ``__hash__``, each what
attrs' own does: compiling them per class was most of a class's cost on every start. ``field`` is attrs'."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from attrs import field as field


def fields_repr(self: Any) -> str:
    shown = [f"{a.name}={a.repr(getattr(self, a.name)) if callable(a.repr) else repr(getattr(self, a.name))}"
             for a in attrs.fields(type(self)) if a.repr is not False]
    name = type(self).__qualname__.rsplit(">.", 1)[-1]  # as attrs: no "f.<locals>." prefix
    return f"{name}({', '.join(shown)})"


def _compared(self: Any) -> tuple:  # the values attrs compares: its eq fields, eq_key applied
    return tuple(a.eq_key(getattr(self, a.name)) if a.eq_key else getattr(self, a.name)
                 for a in type(self).__attrs_attrs__ if a.eq)


def fields_eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    same: Any = True  # as attrs' generated ``a == a2 and b == b2 ...``, field by field
    for mine, theirs in zip(_compared(self), _compared(other), strict=True):
        if not (same := mine == theirs):
            break
    return same


def _record(maybe_cls: Any = None, *, eq: bool = True, **options: Any) -> Any:
    def wrap(cls: Any) -> Any:
        own = cls.__dict__  # as attrs' auto_detect: a method the class writes is kept
        made = attrs.define(cls, repr=False, eq=False, **options)
        made.__repr__ = own.get("__repr__", fields_repr)
        if eq and "__eq__" not in own:  # as attrs: equal by fields; hashable only when frozen
            made.__eq__ = fields_eq
            made.__hash__ = own.get("__hash__", (lambda s: hash((type(s), _compared(s))))
                                    if options.get("frozen") else None)
        return made

    return wrap(maybe_cls) if maybe_cls is not None else wrap


if TYPE_CHECKING:  # the type checkers' attrs support knows attrs' own name for it
    from attrs import define as record
else:
    record = _record
