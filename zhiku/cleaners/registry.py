"""The ``cleaners`` registry and :func:`build_cleaners`, which turns configured names into cleaners."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from zhiku.cleaners.base import Cleaner
from zhiku.cleaners.default import DefaultCleaner
from zhiku.cleaners.rules import RemoveExtraSpaces, RemoveUrlsEmails
from zhiku.cleaners.unstructured_rules import REFUSED_RULES, UNSTRUCTURED_RULES, UnstructuredRule
from zhiku.core.errors import ConfigError
from zhiku.core.registry import Registry

#: The contract of the ``cleaners`` registry: a cleaner takes no options (a rule is its name).
CleanerFactory = Callable[[], Cleaner]

cleaners: Registry[CleanerFactory] = Registry("cleaners")
cleaners.add("default", DefaultCleaner)
cleaners.add("remove_extra_spaces", RemoveExtraSpaces)
cleaners.add("remove_urls_emails", RemoveUrlsEmails)
for _function, _line_wise in UNSTRUCTURED_RULES.items():
    cleaners.add(_function, partial(UnstructuredRule, _function, _line_wise))


def build_cleaners(names: list[str]) -> list[Cleaner]:
    """Cleaners for ``names`` in order.

    Raises ConfigError for an unknown name (listing the known ones) and for a refused
    unstructured function (saying why it is refused).
    """
    built = []
    for name in names:
        if name in REFUSED_RULES:
            installed = ", ".join(cleaners.available())
            raise ConfigError(f"cleaner {name!r} is refused: {REFUSED_RULES[name]}; installed: {installed}")
        built.append(cleaners.factory(name)())
    return built
