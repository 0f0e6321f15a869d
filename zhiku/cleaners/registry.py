"""The ``cleaners`` registry and :func:`build_cleaners`, which turns configured names into cleaners."""

from __future__ import annotations

from functools import partial

from zhiku.cleaners.base import Cleaner
from zhiku.cleaners.default import DefaultCleaner
from zhiku.cleaners.rules import RemoveExtraSpaces, RemoveUrlsEmails
from zhiku.cleaners.unstructured_rules import REFUSED_RULES, UNSTRUCTURED_RULES, UnstructuredRule
from zhiku.core.errors import ConfigError
from zhiku.core.registry import Registry

cleaners: Registry[Cleaner] = Registry("cleaners")
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
            raise ConfigError(
                f"cleaner {name!r} is refused: {REFUSED_RULES[name]}; known: {', '.join(cleaners.names())}"
            )
        built.append(cleaners.create(name))
    return built
