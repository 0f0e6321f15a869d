"""A griffe extension for zhiku's docstrings.

A facade's ``name = Delegated("_part", Part.method)`` is documented as the method it offers (the
collaborator's signature, less ``self``, and docstring), not as an undocumented attribute that
the API reference would leave out. Sphinx roles (``:meth:`~a.b.c```) become code spans
(`` `c` ``): the docstrings are written for ``help()`` as much as for the site.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|func|attr|data|mod|exc|obj):`(~?)([^`]+)`")


class DelegatedMethods(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code_span, obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for cls in _classes(pkg):
            for name, member in list(cls.members.items()):
                if isinstance(member, griffe.Attribute) and str(member.value or "").startswith("Delegated("):
                    cls.set_member(name, _method(cls, name, member, loader))


def _code_span(match: re.Match[str]) -> str:
    """A role's target as code: ``~`` (and any dotted path) leaves its last name, as Sphinx shows it."""
    tilde, target = match.groups()
    return f"``{target.rsplit('.', 1)[-1] if tilde else target}``"


def _classes(module: griffe.Module) -> list[griffe.Class]:
    """Every class defined in ``module`` and its submodules (aliases skipped)."""
    found: list[griffe.Class] = []
    pending: list[griffe.Object] = [module]
    while pending:
        obj = pending.pop()
        for member in obj.members.values():
            if member.is_alias:
                continue
            if isinstance(member, griffe.Class):
                found.append(member)
            if isinstance(member, griffe.Module | griffe.Class):
                pending.append(member)
    return found


def _method(
    cls: griffe.Class, name: str, attribute: griffe.Attribute, loader: griffe.GriffeLoader
) -> griffe.Function:
    runtime = getattr(importlib.import_module(cls.module.path), cls.name)
    target = runtime.__dict__[name].method
    documented = loader.modules_collection.get_member(f"{target.__module__}.{target.__qualname__}")
    if not isinstance(documented, griffe.Function):
        raise TypeError(f"{cls.path}.{name} delegates to {documented.path}, not a function")
    method = griffe.Function(
        name,
        lineno=attribute.lineno,
        endlineno=attribute.endlineno,
        parameters=griffe.Parameters(*list(documented.parameters)[1:]),
        returns=documented.returns,
    )
    if documented.docstring is not None:
        method.docstring = griffe.Docstring(
            documented.docstring.value,
            lineno=documented.docstring.lineno,
            endlineno=documented.docstring.endlineno,
            parent=method,
        )
    return method
