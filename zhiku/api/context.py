"""What the views share: the knowledge base, the indexing queue and workers, keys and the catalog."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from zhiku.api.auth import principal
from zhiku.api.hit_counts import HitCounter
from zhiku.api.keys import ApiKeys
from zhiku.api.limits import QueueQuota
from zhiku.core.config import Settings
from zhiku.core.errors import NotFound
from zhiku.knowledge_base import Dataset, KnowledgeBase
from zhiku.knowledge_base.catalog import Catalog, DatasetSummary
from zhiku.knowledge_base.runtime.celery_queue import CeleryIndexing
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.workers import IndexingWorkers

EXTENSION = "zhiku"


@dataclass
class ApiContext:
    settings: Settings
    kb: KnowledgeBase
    queue: IndexingQueue
    workers: IndexingWorkers | CeleryIndexing | None
    keys: ApiKeys
    catalog: Catalog
    quota: QueueQuota
    auth: bool
    owns_kb: bool
    #: Segment hit counts, written in the background (see :mod:`zhiku.api.hit_counts`).
    hits: HitCounter
    #: The token of ``<home>/server.json``: commands run beside ``zhiku serve`` send it as their key.
    local_token: str | None = None

    def close(self, timeout: float = 10.0) -> None:
        """Stop the workers (waiting up to ``timeout`` s) and close the knowledge base if the app
        opened it. If a document is still being indexed, the stores stay open: the process is
        about to exit and that document is queued again at the next start. Pending hit counts
        are written first."""
        self.hits.close()
        finished = self.workers.stop(timeout) if self.workers is not None else True
        if self.owns_kb and finished:
            self.kb.close()


def context() -> ApiContext:
    return current_app.extensions[EXTENSION]  # type: ignore[no-any-return]


def visible_dataset(name_or_id: str) -> Dataset:
    """The dataset if it exists and the caller's key may use it; the same 404 otherwise."""
    try:
        dataset = context().kb.dataset(name_or_id)
    except NotFound:
        dataset = None
    if dataset is None or not principal().can_use(dataset.id):
        raise NotFound(f"no dataset {name_or_id!r}")
    return dataset


def visible_dataset_with_settings(name_or_id: str) -> tuple[Dataset, DatasetSummary]:
    """:func:`visible_dataset` and its settings as stored, in one read (what a search reads)."""
    try:
        dataset, settings = context().kb.dataset_with_settings(name_or_id)
    except NotFound:
        raise NotFound(f"no dataset {name_or_id!r}") from None
    if not principal().can_use(dataset.id):
        raise NotFound(f"no dataset {name_or_id!r}")
    return dataset, settings
