"""A dataset's stored settings: what a user may change (name, description, retrieval config,
process rule, chat model options) and what is fixed at creation (embedding model, tokenizer),
with the pipeline and chat model they make.

Each read goes to the database, so a change made by another process is seen at once.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from zhiku.core.db import DatasetRow
from zhiku.core.errors import AlreadyExists, ConfigError, InvalidInput, NotFound
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.fusion.registry import check_fusion_mode
from zhiku.knowledge_base import llm_options
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.indexing.pipeline import Pipeline, PipelineSpec
from zhiku.providers.llm import ChatModel


def as_retrieval_config(value: RetrievalConfig | dict[str, Any] | None) -> RetrievalConfig:
    """A retrieval config whose fusion is installed (ConfigError listing the installed ones)."""
    if value is None:
        return RetrievalConfig()
    config = value if isinstance(value, RetrievalConfig) else RetrievalConfig.from_dict(value)
    check_fusion_mode(config.reranking.mode)
    return config


def as_process_rule(value: PipelineSpec | dict[str, Any] | None) -> PipelineSpec:
    """A validated process rule: its cleaners, splitter and ``doc_form`` must be registered
    names, checked now rather than when the first document is indexed."""
    spec = value if isinstance(value, PipelineSpec) else PipelineSpec.model_validate(value or {})
    spec.check_names()
    # the overlaps the caller's dict sets (a PipelineSpec is built by code: the API checks the
    # overlaps its request sets before it builds one)
    problem = spec.overlap_problem(value.keys() if isinstance(value, dict) else ())
    if problem is not None:
        raise ConfigError(f"process_rule.{problem[0]}: {problem[1]}")
    return spec


def dataset_row(session: Session, dataset_id: str, *, deleting: bool = False) -> DatasetRow:
    """The dataset's row in ``session``; NotFound when the dataset is gone or, unless
    ``deleting``, being deleted."""
    row = session.get(DatasetRow, dataset_id)
    if row is None or (row.deleting and not deleting):
        raise NotFound(f"no dataset {dataset_id!r}")
    return row


class DatasetSettings:
    """The settings of one dataset, read from and written to its row."""

    def __init__(self, context: DatasetContext, dataset_id: str) -> None:
        self._context = context
        self._sessions = context.sessions
        self._secrets = context.secrets
        self.dataset_id = dataset_id

    def _row(self) -> DatasetRow:
        with self._sessions() as session:
            return dataset_row(session, self.dataset_id)

    @property
    def name(self) -> str:
        return self._row().name

    @property
    def description(self) -> str:
        return self._row().description

    @property
    def retrieval(self) -> RetrievalConfig:
        return RetrievalConfig.model_validate(self._row().retrieval_config)

    @property
    def process_rule(self) -> PipelineSpec:
        return PipelineSpec.model_validate(self._row().process_rule)

    @property
    def embedding_model(self) -> str:
        return self._row().embedding_model

    @property
    def embedding_options(self) -> dict[str, Any]:
        return dict(self._row().embedding_options or {})

    @property
    def tokenizer_settings(self) -> dict[str, Any]:
        return dict(self._row().tokenizer_settings or {})

    def pipeline(self) -> Pipeline:
        """The pipeline built from this dataset's stored process rule."""
        return self.process_rule.build(chat=self.chat_model, settings=self._context.settings)

    def chat_model(self) -> ChatModel:
        """The chat model this dataset's Q&A indexing uses (its ``llm`` options over the defaults)."""
        return self._context.chat_model(llm_options.unseal(self._secrets, self._row().llm_options))

    def update(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        process_rule: PipelineSpec | dict[str, Any] | None = None,
        llm: dict[str, Any] | None = None,
    ) -> None:
        """Change the fields given (None leaves one as it is), all or none. InvalidInput for a
        blank name, ConfigError for a bad process rule, AlreadyExists when the name is taken."""
        spec = as_process_rule(process_rule) if process_rule is not None else None
        try:
            with self._sessions.begin() as session:
                row = dataset_row(session, self.dataset_id)
                if name is not None:
                    if not name.strip():
                        raise InvalidInput("a dataset needs a non-empty name")
                    row.name = name.strip()
                if description is not None:
                    row.description = description
                if retrieval is not None:
                    row.retrieval_config = as_retrieval_config(retrieval).model_dump()
                if spec is not None:
                    row.process_rule = spec.model_dump()
                    row.doc_form = spec.doc_form
                if llm is not None:
                    row.llm_options = llm_options.seal(self._secrets, llm)
        except IntegrityError as exc:
            raise AlreadyExists(f"a dataset named {name!r} already exists") from exc
