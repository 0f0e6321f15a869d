"""DatasetSearch: one dataset's search — channels in parallel, live filter, fusion, cut-offs.

A query runs through these steps, each visible in :meth:`DatasetSearch.fused_with_timings`:

1. every channel the config asks for (``semantic``, ``full_text``, ``keyword``) recalls
   ``config.effective_recall_k`` candidates — with ``search_in`` = ``originals+summaries`` also
   among the segments' summaries (each store filters them itself). They run concurrently, the
   first in the calling thread, unless every one would hold the GIL throughout (an embedded
   store, the query's vector at hand): then threads would only take turns, paying a GIL hand-off
   each time, so they run one after the other in the calling thread;
2. parent-child: the catalog's ``parents_of`` maps the candidates that are child chunks (or
   summaries) to their segment; each channel keeps, per parent, its best child (score and
   rank), so fusion ranks parents and one parent never fills two slots; the children found are
   kept to be shown with their parent;
3. the live check — only served segments come out. Fusion runs on the candidates as found and
   the catalog is asked about the hits it returns (after ``score_threshold`` and ``top_k``, so
   about ten ids, not the hundreds of candidates); when all are served, they are the answer, and
   :meth:`DatasetSearch.search` has their records from that same read. The
   stores already exclude disabled segments, so a candidate not served is a transient (between a
   write's database commit and its store update, or a document in `error`); one
   ranked below the hits may still have moved its channel's normalisation a little. When a hit
   is not served, and always for a rerank model (which reads the catalog's texts) or child
   chunks, the union of the candidates is checked and those not served (disabled, deleted,
   half-indexed) are dropped before fusion, so they neither come out nor take a rank;
4. fusion by ``config.reranking.mode`` (see :mod:`zhiku.fusion.fusion` for what each final score
   means); a single-channel search keeps the channel's raw score unless a rerank model is asked;
   a hit's children are ordered by the same fusion over the children found (weighted score when
   a rerank model orders the parents);
5. each hit scored by its relevance (:mod:`zhiku.retrieval.relevance`) from what the channels
   found — a keyword-only search also reads BM25, as evidence only — then ``score_threshold``
   on the relevance, ``top_k``, then the odd/even reorder if enabled.

Channel failures: when at least one channel answers, a failed channel is logged (warning, with
its traceback), left out of the timings, and fused as if it had found nothing — the fused scores
keep their scale, so a threshold stays as strict as configured. When every channel fails,
:class:`ChannelError` naming the first failed channel is raised.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol, TypeVar, runtime_checkable

from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError, StoreError, ZhikuError
from zhiku.core.retrieval_config import Channel, RetrievalConfig
from zhiku.core.scope import DocumentScope
from zhiku.fusion.fusion import cut, rerank_with_model
from zhiku.fusion.registry import RERANKING_MODEL, check_fusion_mode, fuse
from zhiku.fusion.reorder import reorder
from zhiku.fusion.types import FusedHit
from zhiku.providers.rerank.base import RerankModel
from zhiku.retrieval.catalog import SegmentCatalog
from zhiku.retrieval.channels import Ranked
from zhiku.retrieval.evidence import LEXICAL_CHANNELS, EvidenceScale
from zhiku.retrieval.parent_child import attach_children, to_parents
from zhiku.retrieval.relevance import Calibration, rerank_relevance

logger = logging.getLogger(__name__)

T = TypeVar("T")


class SearchChannel(Protocol):
    """One way of searching a dataset, bound to its stores and query tokenizer or embedder.

    ``search`` returns at most ``limit`` ``(segment_id, raw_score)`` pairs, best first, higher is
    better, only of documents ``scope`` admits (applied inside the search, before the limit), and
    summaries among them only with ``summaries=True`` (asked only of a config searching them). It
    is called from worker threads, concurrently with the dataset's other channels.

    ``holds_gil(query)``: searching ``query`` would keep the GIL for all its time (nothing to
    embed, nothing to wait for outside the interpreter), so a thread beside it gains nothing.
    """

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]: ...

    def holds_gil(self, query: str) -> bool: ...


@runtime_checkable
class ScaledChannel(Protocol):
    """A channel that knows the most its raw score could be for a query (BM25's attainable
    score), so a hit's score over it is evidence comparable across queries."""

    def attainable(self, query: str) -> float: ...


class ChannelError(StoreError):
    """Every searched channel failed; names the first one and keeps its exception as the cause.

    ``code`` is the cause's code when the cause is a ZhikuError (e.g. ``model_unavailable`` when
    the embedding endpoint is down), else ``store_error``.
    """

    def __init__(self, channel: str, cause: Exception, also_failed: Sequence[str] = ()) -> None:
        self.channel = channel
        self.cause = cause
        if isinstance(cause, ZhikuError):
            self.code = cause.code
        message = f"{channel} search failed: {type(cause).__name__}: {cause}"
        if also_failed:
            message += f" (also failed: {', '.join(also_failed)})"
        super().__init__(message)


class DatasetSearch:
    """Searches one dataset's channels and fuses them according to a :class:`RetrievalConfig`.

    ``catalog`` answers which candidates may be returned, which are child chunks, the texts a
    rerank model reads and the hits' records (:class:`SegmentCatalog`); without it nothing is
    filtered, ``reranking_model`` is unavailable and only :meth:`fused` (fused hits) answers.
    ``executor`` runs all channels but the first (which runs in the calling thread); share one
    bounded pool between services, but not the pool whose threads call ``search``, or a full pool
    deadlocks. Without one, the service owns a small pool: call :meth:`close` (or use it as a
    context manager) when done.
    """

    def __init__(
        self,
        channels: Mapping[Channel, SearchChannel],
        *,
        catalog: SegmentCatalog | None = None,
        rerank_model: RerankModel | None = None,
        executor: ThreadPoolExecutor | None = None,
        calibration: Calibration | None = None,
    ) -> None:
        self._channels = dict(channels)
        self._calibration = calibration
        self._catalog = catalog
        self._rerank_model = rerank_model
        self._owns_executor = executor is None
        self._executor = executor or ThreadPoolExecutor(
            max_workers=max(1, len(self._channels) - 1), thread_name_prefix="zhiku-retrieve"
        )

    def search(
        self,
        query: str,
        config: RetrievalConfig,
        *,
        rerank_model: RerankModel | None = None,
        semantic_query: str | None = None,
        scope: DocumentScope | None = None,
    ) -> list[Hit]:
        """The served hits with their records (the catalog's), best first (or odd/even
        reordered); see :meth:`fused_with_timings` for the arguments. Empty query → []."""
        if self._catalog is None:
            raise ConfigError("a search for hits needs the dataset's segment catalog")
        catalog = self._catalog
        hits, read, _ = self._run(query, config, rerank_model, semantic_query, scope, catalog.hits)
        return read if read is not None else catalog.hits(hits)

    def fused(
        self,
        query: str,
        config: RetrievalConfig,
        *,
        rerank_model: RerankModel | None = None,
        semantic_query: str | None = None,
        scope: DocumentScope | None = None,
    ) -> list[FusedHit]:
        """The fused hits, best first (or odd/even reordered). Empty query → []."""
        return self.fused_with_timings(
            query, config, rerank_model=rerank_model, semantic_query=semantic_query, scope=scope
        )[0]

    def fused_with_timings(
        self,
        query: str,
        config: RetrievalConfig,
        *,
        rerank_model: RerankModel | None = None,
        semantic_query: str | None = None,
        scope: DocumentScope | None = None,
    ) -> tuple[list[FusedHit], dict[str, float]]:
        """The fused hits and, in milliseconds, each answering channel's search time and, as
        ``searches``, the time of all the channels' searches together.

        ``semantic_query`` (e.g. a HyDE passage) drives the semantic channel in place of ``query``,
        which still drives the others and a rerank model. ``scope`` restricts every channel to
        some documents (a metadata filter), inside each channel's search.
        ``rerank_model`` (for this call) takes the place of the service's own. Raises ConfigError
        if the config asks for a channel this dataset lacks, or for ``reranking_model`` without a
        (matching) model or catalog; ChannelError if every channel fails.
        """
        hits, _, timings = self._run(query, config, rerank_model, semantic_query, scope, self._served)
        return hits, timings

    def _run(
        self,
        query: str,
        config: RetrievalConfig,
        rerank_model: RerankModel | None,
        semantic_query: str | None,
        scope: DocumentScope | None,
        read: Callable[[list[FusedHit]], list[T]],
    ) -> tuple[list[FusedHit], list[T] | None, dict[str, float]]:
        """The fused hits, what ``read`` made of them when it found every one served (the first
        check: one read, about ten ids) else None, and the timings."""
        channels = config.channels
        model = rerank_model or self._rerank_model
        self._check(config, channels, model)
        if not query.strip() or (scope is not None and scope.empty):
            return [], [], {}
        searched = [*channels, *self._evidence_channels(channels)]
        texts_of = {ch: query for ch in searched}
        if semantic_query and "semantic" in texts_of:
            texts_of["semantic"] = semantic_query
        summaries = config.search_in == "originals+summaries"
        limit = config.effective_recall_k
        found, timings = self._search(texts_of, searched, limit, scope, summaries)
        scale = self._scale(query, found, limit)
        found, children, parent_of = self._to_parents(found)
        evidence = {ch: hits for ch, hits in found.items() if ch not in channels}
        found = {ch: hits for ch, hits in found.items() if ch in channels}
        reranked = config.reranking.mode == "reranking_model"
        if not parent_of and not reranked:
            hits = self._cut(query, found, evidence, scale, {}, config, model)
            hits = reorder(hits) if config.reorder else hits
            served = read(hits) if hits else []
            if len(served) == len(hits):
                return hits, served, timings
        live, texts = self._live(found, texts_needed=reranked)
        if live is not None:
            found = {ch: [(sid, s) for sid, s in hits if sid in live] for ch, hits in found.items()}
        hits = self._cut(query, found, evidence, scale, texts, config, model)
        if parent_of:
            attach_children(hits, children, parent_of, live, config, scale)
        return (reorder(hits) if config.reorder else hits), None, timings

    def _served(self, hits: list[FusedHit]) -> list[FusedHit]:
        """The served ones among ``hits`` (all of them without a catalog)."""
        if self._catalog is None or not hits:
            return hits
        live = self._catalog.live_ids([hit.segment_id for hit in hits])
        return [hit for hit in hits if hit.segment_id in live]

    def _evidence_channels(self, channels: Sequence[Channel]) -> list[Channel]:
        """Channels searched only for the relevance's evidence: BM25 beside a keyword-only search
        (whose postings' weights are no evidence a calibration reads), and beside a semantic-only
        one when the calibration cannot read this model's cosine (see ``lexical_only``)."""
        if self._calibration is None or "full_text" in channels:
            return []
        if "semantic" in channels and "cosine" in self._calibration.reads:
            return []
        return ["full_text"] if "full_text" in self._channels else []

    def _scale(self, query: str, found: Mapping[str, Ranked], limit: int) -> EvidenceScale | None:
        if self._calibration is None:
            return None
        attainable: dict[str, float] = {}
        for name in LEXICAL_CHANNELS:
            channel = self._channels.get(name)
            if name not in found or not isinstance(channel, ScaledChannel):
                continue
            try:
                attainable[name] = channel.attainable(query)
            except Exception:  # a failed scale read leaves that evidence out, like a failed channel
                logger.warning("reading the query's attainable %s score failed", name, exc_info=True)
        return EvidenceScale(self._calibration, limit, attainable)

    def _cut(
        self,
        query: str,
        found: Mapping[str, Ranked],
        evidence: Mapping[str, Ranked],
        scale: EvidenceScale | None,
        texts: Mapping[str, str],
        config: RetrievalConfig,
        model: RerankModel | None,
    ) -> list[FusedHit]:
        """The fused hits, each scored by its relevance, cut at ``score_threshold``."""
        hits = self._fuse(query, found, texts, config, model)
        if config.reranking.mode == "reranking_model":
            for hit in hits:
                hit.fusion, hit.score = hit.score, rerank_relevance(hit.score)
        elif scale is not None:
            scale.score(hits, {**found, **evidence})
        return cut(hits, score_threshold=config.score_threshold)

    def close(self) -> None:
        """Shut down the pool this service created (a pool passed in is left alone)."""
        if self._owns_executor:
            self._executor.shutdown(wait=True)

    def __enter__(self) -> DatasetSearch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check(self, config: RetrievalConfig, channels: Sequence[Channel], model: RerankModel | None) -> None:
        missing = [ch for ch in channels if ch not in self._channels]
        if missing:
            raise ConfigError(
                f"the retrieval config searches {', '.join(missing)} but this dataset has no such "
                f"channel (available: {', '.join(self._channels) or 'none'})"
            )
        if check_fusion_mode(config.reranking.mode) != RERANKING_MODEL:
            return
        wanted = config.reranking.model
        if model is None:
            raise ConfigError(f"reranking_model needs a rerank model ({wanted or 'none named'})")
        if wanted is not None and wanted != model.name:
            raise ConfigError(f"the config asks for rerank model {wanted!r}, the service has {model.name!r}")
        if self._catalog is None:
            raise ConfigError("reranking_model needs the dataset's segment catalog to supply segment texts")

    def _search(
        self,
        queries: Mapping[Channel, str],
        channels: Sequence[Channel],
        limit: int,
        scope: DocumentScope | None,
        summaries: bool,
    ) -> tuple[dict[str, Ranked], dict[str, float]]:
        """Each channel's answer to its query (a failed one as []) in config order, and the timings:
        each channel's search and, as ``searches``, all of them (side by side or in turn)."""
        start = time.perf_counter()
        first, *rest = channels
        in_turn = all(self._channels[ch].holds_gil(queries[ch]) for ch in channels)
        futures: dict[Channel, Future[tuple[Ranked, float]]] = {}
        if not in_turn:
            futures = {
                ch: self._executor.submit(_timed, self._channels[ch], queries[ch], limit, scope, summaries)
                for ch in rest
            }
        outcomes: dict[Channel, tuple[Ranked, float] | Exception] = {}
        for ch in channels if in_turn else [first]:
            try:
                outcomes[ch] = _timed(self._channels[ch], queries[ch], limit, scope, summaries)
            except Exception as exc:  # judged below, with the other channels
                outcomes[ch] = exc
        for ch, future in futures.items():
            try:
                outcomes[ch] = future.result()
            except Exception as exc:
                outcomes[ch] = exc
        searches = (time.perf_counter() - start) * 1000.0

        failed = {ch: out for ch, out in outcomes.items() if isinstance(out, Exception)}
        if len(failed) == len(channels):
            name, cause = next(iter(failed.items()))
            raise ChannelError(name, cause, also_failed=list(failed)[1:]) from cause
        for ch, error in failed.items():
            logger.warning("%s search failed; fusing without it", ch, exc_info=error)

        found: dict[str, Ranked] = {}
        timings: dict[str, float] = {}
        for ch in channels:
            out = outcomes[ch]
            if isinstance(out, Exception):
                found[ch] = []
            else:
                found[ch], timings[ch] = out
        timings["searches"] = searches
        return found, timings

    def _to_parents(
        self, found: dict[str, Ranked]
    ) -> tuple[dict[str, Ranked], dict[str, Ranked], Mapping[str, str]]:
        """Each channel's candidates with child chunks replaced by their parent, the child chunks
        found per channel, and their parents (see :func:`to_parents`)."""
        if self._catalog is None or not self._catalog.has_children:
            return found, {}, {}
        ids = list(dict.fromkeys(sid for hits in found.values() for sid, _ in hits))
        parent_of = self._catalog.parents_of(ids) if ids else {}
        if not parent_of:
            return found, {}, {}
        parents, children = to_parents(found, parent_of)
        return parents, children, parent_of

    def _live(
        self, found: Mapping[str, Ranked], *, texts_needed: bool
    ) -> tuple[Collection[str] | None, Mapping[str, str]]:
        """The live candidates (None without a catalog) and, when ``texts_needed``, their texts
        (else no texts)."""
        if self._catalog is None:
            return None, {}
        ids = list(dict.fromkeys(sid for hits in found.values() for sid, _ in hits))
        if not ids:
            return set(), {}
        if texts_needed:
            texts = self._catalog.live_texts(ids)
            return texts.keys(), texts
        return self._catalog.live_ids(ids), {}

    def _fuse(
        self,
        query: str,
        found: Mapping[str, Ranked],
        texts: Mapping[str, str],
        config: RetrievalConfig,
        model: RerankModel | None,
    ) -> list[FusedHit]:
        reranking, top_n = config.reranking, config.top_k
        if reranking.mode == RERANKING_MODEL:
            assert model is not None  # guaranteed by _check
            return rerank_with_model(query, found, texts, model, top_n=top_n)
        return fuse(found, reranking, top_n)


def _timed(
    channel: SearchChannel, query: str, limit: int, scope: DocumentScope | None, summaries: bool
) -> tuple[Ranked, float]:
    start = time.perf_counter()
    hits = channel.search(query, limit, scope, summaries=summaries)
    return hits, (time.perf_counter() - start) * 1000.0
