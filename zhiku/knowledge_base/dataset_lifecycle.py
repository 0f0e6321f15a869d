"""Datasets made, found, listed and deleted: the rows in ``datasets`` and the stores behind them."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from zhiku.core.db import DatasetRow
from zhiku.core.errors import AlreadyExists, InvalidInput, NotFound, StoreBusy, StoreError
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.datasource.stores import embedded_store_dir
from zhiku.knowledge_base import llm_options
from zhiku.knowledge_base.catalog import DatasetSummary, dataset_row_named
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.dataset_purge import DatasetPurger, mark_deleting, purge_rows, unfinished_deletions
from zhiku.knowledge_base.dataset_settings import as_process_rule, as_retrieval_config
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex, open_embedding
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.opened_indexes import OpenedIndexes
from zhiku.text.stemming import DEFAULT_STEMMER, STEMMERS
from zhiku.text.tokenizer import DEFAULT_HAN_BIGRAMS


class DatasetLifecycle:
    """The knowledge base's datasets: each a :class:`Dataset` over the shared ``context``."""

    def __init__(self, context: DatasetContext, indexes: OpenedIndexes) -> None:
        self._context = context
        self._indexes = indexes
        self._settings = context.settings
        self._sessions = context.sessions
        self._secrets = context.secrets
        self._purger = DatasetPurger(context.sessions, self._drop_stores)

    def create_dataset(
        self,
        name: str,
        *,
        description: str = "",
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        process_rule: PipelineSpec | dict[str, Any] | None = None,
        embedding_model: str | None = None,
        embedding_options: dict[str, Any] | None = None,
        user_dict: str | Path | None = None,
        stop_words: Iterable[str] | None = None,
        keyword_count: int | None = None,
        stemmer: str | None = DEFAULT_STEMMER,
        han_bigrams: bool = DEFAULT_HAN_BIGRAMS,
        llm: dict[str, Any] | None = None,
    ) -> Dataset:
        """Create a dataset. The embedding model is fixed at creation (its vectors fill the store).

        ``stemmer`` folds the words outside Chinese text for BM25 and keyword search (``plural``,
        the default; ``english``, Snowball; None: as written); it is fixed with the indexes, as is
        ``han_bigrams`` (BM25 also matches pairs of neighbouring Chinese characters; see
        :meth:`~zhiku.text.tokenizer.Tokenizer.terms`).
        ``llm`` overrides the knowledge base's chat model for this dataset's Q&A indexing
        (keys ``base_url``, ``model``, ``api_key``, ``timeout``, ``max_retries``, ``max_concurrency``).
        """
        if not name or not name.strip():
            raise InvalidInput("a dataset needs a non-empty name")
        config = as_retrieval_config(retrieval)
        rule = as_process_rule(process_rule)
        model_name = embedding_model or self._settings.embedding_model
        options = llm_options.seal(self._secrets, embedding_options)
        dim = open_embedding(model_name, llm_options.unseal(self._secrets, options) or {}, self._sessions).dim
        tokenizer_settings: dict[str, Any] = {"keyword_count": keyword_count or self._settings.keyword_count}
        if user_dict:
            tokenizer_settings["user_dict"] = str(Path(user_dict).resolve())
        if stop_words is not None:
            tokenizer_settings["stop_words"] = sorted(set(stop_words))
        if stemmer is not None:
            if stemmer not in STEMMERS:
                raise InvalidInput(f"unknown stemmer {stemmer!r}; use one of {', '.join(STEMMERS)} or None")
            tokenizer_settings["stemmer"] = stemmer
        tokenizer_settings["han_bigrams"] = han_bigrams
        row = DatasetRow(
            name=name.strip(),
            description=description,
            embedding_model=model_name,
            embedding_options=options,
            embedding_dim=dim,
            retrieval_config=config.model_dump(),
            process_rule=rule.model_dump(),
            tokenizer_settings=tokenizer_settings,
            doc_form=rule.doc_form,
            llm_options=llm_options.seal(self._secrets, llm),
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError as exc:
            raise AlreadyExists(f"a dataset named {name!r} already exists") from exc
        return Dataset(self._context, row.id)

    def dataset(self, name_or_id: str) -> Dataset:
        """A dataset by id or by name; :class:`NotFound` otherwise."""
        with self._sessions() as session:
            return Dataset(self._context, dataset_row_named(session, name_or_id).id)

    def dataset_with_settings(self, name_or_id: str) -> tuple[Dataset, DatasetSummary]:
        """:meth:`dataset` and its settings as stored, in one read (what a search request reads)."""
        with self._sessions() as session:
            row = dataset_row_named(session, name_or_id)
            return Dataset(self._context, row.id), DatasetSummary.of(row)

    def datasets(self) -> list[Dataset]:
        with self._sessions() as session:
            ids = session.scalars(
                select(DatasetRow.id).where(DatasetRow.deleting.is_(False)).order_by(DatasetRow.created_at)
            )
            return [Dataset(self._context, dataset_id) for dataset_id in ids]

    def delete_dataset(self, name_or_id: str, *, wait: bool = True) -> None:
        """Delete a dataset with its documents, segments and every store's data.

        From the first step no lookup finds the dataset and its name is free; its stores are
        dropped at once and its rows go in short transactions (see :mod:`.dataset_purge`): here,
        or with ``wait=False`` in the background (a stop meanwhile leaves the rest to the next
        open). In a process that may not open the dataset's stores: :class:`StoreBusy`, and the
        dataset stays."""
        dataset = self.dataset(name_or_id)
        index = self._indexes.dataset_index(dataset.id)
        if not mark_deleting(self._sessions, dataset.id):
            raise NotFound(f"no dataset {name_or_id!r}")  # another deletion took it meanwhile
        self._drop(dataset.id, index)
        if wait:
            purge_rows(self._sessions, dataset.id)
        else:
            self._purger.finish([dataset.id], stores_dropped=True)

    def finish_deletions(self) -> None:
        """Finish in the background the deletions a stopped process left (the owner of the
        stores calls this as it opens the knowledge base)."""
        self._purger.finish(unfinished_deletions(self._sessions))

    def wait_for_deletions(self, timeout: float | None = None) -> bool:
        """Wait until the background deletions are done (True) or ``timeout`` has passed."""
        return self._purger.wait(timeout)

    def stop_deletions(self) -> None:
        """Stop the background deletions after their current step (see :class:`DatasetPurger`)."""
        self._purger.stop()

    def _drop_stores(self, dataset_id: str) -> None:
        """Drop the stores of a deletion a stopped process left. An embedded shard whose drop was
        cut short does not open: then the dataset's embedded shards are removed as they are (the
        owner lock keeps other processes out), and its stores opened again to drop the rest."""
        try:
            index = self._indexes.dataset_index(dataset_id, deleting=True)
        except StoreBusy:
            raise
        except StoreError:
            shutil.rmtree(embedded_store_dir(self._settings, dataset_id), ignore_errors=True)
            index = self._indexes.dataset_index(dataset_id, deleting=True)
        self._drop(dataset_id, index)

    def _drop(self, dataset_id: str, index: DatasetIndex) -> None:
        self._indexes.forget(dataset_id)
        index.drop()
        shutil.rmtree(embedded_store_dir(self._settings, dataset_id), ignore_errors=True)  # empty now
