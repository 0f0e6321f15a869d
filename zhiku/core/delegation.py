"""A facade's method that is a collaborator's method, declared in one line.

``add_files = Delegated("_intake", DocumentIntake.add_files)`` in a class body makes
``facade.add_files(...)`` the bound ``facade._intake.add_files(...)``: the same arguments,
return type (mypy checks callers against the collaborator's signature), errors and docstring,
with no wrapper written out to drift from it.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

Target = TypeVar("Target")
Params = ParamSpec("Params")
Result = TypeVar("Result")


class Delegated(Generic[Target, Params, Result]):
    """``method`` of the object an instance holds in ``attribute``, offered as its own."""

    def __init__(self, attribute: str, method: Callable[Concatenate[Target, Params], Result]) -> None:
        self.attribute = attribute
        self.method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> Callable[Params, Result]: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return types.MethodType(self.method, getattr(instance, self.attribute))

    def __repr__(self) -> str:
        """What ``help()`` of the facade shows: where the method lives and how it is called."""
        signature = inspect.signature(self.method)
        called = signature.replace(parameters=list(signature.parameters.values())[1:])
        return f"{self.method.__qualname__}{called}"
