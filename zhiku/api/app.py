"""The Flask application factory."""

from __future__ import annotations

from flask import Blueprint, Flask

import zhiku
from zhiku.api.context import EXTENSION, ApiContext
from zhiku.api.errors import register_error_handlers
from zhiku.api.hit_counts import HitCounter, segment_hit_writer
from zhiku.api.keys import ApiKeys
from zhiku.api.limits import QueueQuota, RateLimits
from zhiku.api.openapi import PREFIX, openapi_document
from zhiku.api.views import ALL
from zhiku.api.views.meta import OPENAPI_EXTENSION
from zhiku.console import register_console
from zhiku.core.config import Settings
from zhiku.core.errors import StoreBusy
from zhiku.datasource.stores import check_store_servers
from zhiku.knowledge_base import KnowledgeBase
from zhiku.knowledge_base.catalog import Catalog
from zhiku.knowledge_base.runtime.celery_queue import CeleryIndexing, TaskSender, celery_app
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.uploads import open_uploads
from zhiku.knowledge_base.runtime.workers import IndexingWorkers

#: Room above the upload limit for the rest of a multipart form or a JSON body.
_BODY_SLACK_BYTES = 1024 * 1024


def create_app(
    settings: Settings, kb: KnowledgeBase | None = None, *, auth: bool = True, workers: bool = True
) -> Flask:
    """The API app and the web console (at ``/``) over ``kb`` (opened from ``settings`` when not
    given), with its indexing workers started (``settings.indexing_workers`` threads) unless
    ``workers=False``. With ``task_queue = "celery"`` documents are sent to Celery workers
    instead, and this process runs the lease reaper and, owning embedded stores, writes the
    versions the workers prepare.

    ``auth=False`` serves every request as a key for all datasets: only for a process that
    embeds the app behind its own access control (or tests); ``zhiku serve`` always checks keys.
    Close with ``app.extensions["zhiku"].close()``: it stops the workers and, if the app opened
    the knowledge base, closes it.
    """
    owns_kb = kb is None
    check_store_servers(settings)  # a database without pgvector stops the start, saying what to do
    knowledge_base = kb or KnowledgeBase(settings)
    if workers and not knowledge_base.owns_stores:
        if owns_kb:
            knowledge_base.close()
        raise StoreBusy(
            f"{settings.home} is already served by another zhiku process: its embedded stores admit one"
        )
    pool: IndexingWorkers | CeleryIndexing | None = None
    uploads = open_uploads(settings, knowledge_base.sessions)
    if settings.task_queue == "celery":
        queue = IndexingQueue(knowledge_base.sessions, uploads, TaskSender(celery_app(settings)))
        # no upload sweep: another API process may be between storing an upload and its row
        queue.dispatch(knowledge_base.recovered)
        pool = CeleryIndexing(knowledge_base, queue) if workers else None
    else:
        queue = IndexingQueue(knowledge_base.sessions, uploads)
        queue.sweep_uploads()
        pool = IndexingWorkers(knowledge_base, queue, settings.indexing_workers) if workers else None

    app = Flask(__name__, static_folder=None)  # the console serves its own files
    app.config["MAX_CONTENT_LENGTH"] = int(settings.upload_max_mb * 1024 * 1024) + _BODY_SLACK_BYTES
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.json.sort_keys = False  # type: ignore[attr-defined]
    blueprint = Blueprint("v1", __name__, url_prefix=PREFIX)
    limits = RateLimits(app, settings)
    for group in ALL:
        group.register(blueprint, limits)
    app.register_blueprint(blueprint)
    register_console(app, settings, limits)
    register_error_handlers(app)
    app.extensions[EXTENSION] = ApiContext(
        settings=settings,
        kb=knowledge_base,
        queue=queue,
        workers=pool,
        keys=ApiKeys(knowledge_base.sessions),
        catalog=Catalog(knowledge_base.sessions),
        quota=QueueQuota(knowledge_base.states, settings.queue_max_per_key),
        auth=auth,
        owns_kb=owns_kb,
        hits=HitCounter(segment_hit_writer(knowledge_base.sessions)).start(),
    )
    app.extensions[OPENAPI_EXTENSION] = openapi_document(ALL, version=zhiku.__version__)
    if pool is not None:
        pool.start()
    return app
