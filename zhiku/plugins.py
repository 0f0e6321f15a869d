"""Every plug-in registry of zhiku, listed in one place.

Each registry lives beside the code that uses it (``extractors`` in :mod:`zhiku.extractors`, ...);
this list names them all, so that tools showing what is installed (``zhiku plugins``) need not
know where each one is. Registries are imported on demand: some modules they live in are heavy.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from zhiku.core.registry import Registry, plugin_entry_points

#: (module, attribute, what its plug-ins do), in the order a document meets them.
REGISTRIES: tuple[tuple[str, str, str], ...] = (
    ("zhiku.extractors.dispatch", "extractors", "read a file format into text"),
    ("zhiku.cleaners.registry", "cleaners", "clean extracted text"),
    ("zhiku.splitters", "splitters", "split text into chunks"),
    ("zhiku.index_processors", "index_processors", "turn chunks into segments (a dataset's doc_form)"),
    ("zhiku.providers.embedding", "embedding_models", "embed segments and queries"),
    ("zhiku.datasource.stores", "vector_stores", "store and search vectors (setting vector_backend)"),
    ("zhiku.datasource.stores", "fulltext_stores", "search BM25 full text (setting fulltext_backend)"),
    ("zhiku.datasource.stores", "keyword_stores", "search segment keywords (setting keyword_backend)"),
    ("zhiku.providers.rerank", "rerank_models", "rerank candidates (spec KIND:TARGET)"),
    ("zhiku.fusion.registry", "fusions", "fuse a dataset's channels (retrieval reranking.mode)"),
    ("zhiku.retrieval.routers", "routers", "pick one dataset for a query (besides 'embedding')"),
    ("zhiku.retrieval.merges", "merges", "merge several datasets' hits (merge)"),
    ("zhiku.answers.answerers", "answerers", "write the answer from the sources (answerer)"),
)


@dataclass(frozen=True)
class PluginRegistry:
    """One registry: its kind (the entry-point prefix), what it plugs, and its names."""

    kind: str
    purpose: str
    registered: list[str]
    entry_points: list[str]

    @property
    def names(self) -> list[str]:
        return sorted({*self.registered, *self.entry_points})


def registries() -> list[Registry[Any]]:
    """The registry objects, importing the modules they live in."""
    return [getattr(importlib.import_module(module), attribute) for module, attribute, _ in REGISTRIES]


def plugin_registries() -> list[PluginRegistry]:
    """Every registry with the names registered in code and those installed as entry points."""
    return [
        PluginRegistry(registry.kind, purpose, registry.names(), registry.installed())
        for registry, (_, _, purpose) in zip(registries(), REGISTRIES, strict=True)
    ]


def unclaimed_entry_points() -> list[str]:
    """Entry points of group ``zhiku.plugins`` whose ``<kind>.`` prefix names no registry
    (a typo in a plug-in's metadata, most often): zhiku never loads them."""
    kinds = {registry.kind for registry in registries()}
    return sorted(
        ep.name for ep in plugin_entry_points() if ep.name.partition(".")[0] not in kinds
    )
