"""Questions answered from the knowledge base's datasets: the request checked, the answer loop asked.

The :class:`Assistant` is built at first use (see :mod:`.answering`) and shared after; a question's
datasets, and those its intents name, are resolved to ids here, within what the caller may ask.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from zhiku.answers.assistant import AskRequest, Assistant
from zhiku.answers.config import AnswerConfig
from zhiku.answers.memory import ConversationStore, Turn
from zhiku.answers.types import Answer, AnswerEvent
from zhiku.answers.understanding import SectionChoice
from zhiku.core.config import Settings
from zhiku.core.errors import NotFound
from zhiku.knowledge_base.answering import build_assistant
from zhiku.knowledge_base.dataset_lifecycle import DatasetLifecycle
from zhiku.knowledge_base.shared_models import SharedModels
from zhiku.retrieval.types import RetrievalResult


class AnswerLoop:
    """``ask`` of the knowledge base, over its datasets, models and ``conversations``.

    ``current_retrieve()`` gives the knowledge base's ``retrieve`` when the answer loop is
    built: one replaced on the knowledge base (a test's spy, say) is the one answers search with.
    """

    def __init__(
        self,
        settings: Settings,
        models: SharedModels,
        datasets: DatasetLifecycle,
        current_retrieve: Callable[[], Callable[..., RetrievalResult]],
        conversations: ConversationStore,
        lock: threading.Lock,
    ) -> None:
        self._settings = settings
        self._models = models
        self._datasets = datasets
        self._current_retrieve = current_retrieve
        self.conversations = conversations
        self._lock = lock
        self._assistant: Assistant | None = None

    def ask(
        self,
        question: str,
        *,
        datasets: Sequence[str] | None = None,
        conversation_id: str | None = None,
        stream: bool = False,
        config: AnswerConfig | dict[str, Any] | None = None,
        remember: bool = True,
        user: str = "",
        owner: str | None = None,
        history: Sequence[Turn] | None = None,
        message_id: str | None = None,
    ) -> Answer | Iterator[AnswerEvent]:
        """Answer ``question`` from ``datasets`` (names or ids; default: all) with cited sources.

        ``conversation_id`` continues a conversation (its history condenses a follow-up); with
        ``remember`` (default) the turn is stored, in a new conversation when none is given.
        ``stream=True`` returns the :class:`AnswerEvent` iterator instead of the :class:`Answer`.
        The chat model answers when one is configured, else the offline extractive answerer
        (``config={"answerer": "extractive"}`` forces it). ``history`` gives earlier turns
        directly (stateless callers); ``message_id`` fixes the stored answer's id in advance.
        """
        if not isinstance(config, AnswerConfig):
            config = AnswerConfig.model_validate(config or {})
        if datasets is not None:
            datasets = [self._datasets.dataset(name).id for name in datasets]
        config = self._intents_within(config, datasets)
        request = AskRequest(question, datasets, conversation_id, remember, user, owner, history, message_id)
        assistant = self._answer_loop()
        return assistant.events(request, config) if stream else assistant.ask(request, config)

    def _intents_within(self, config: AnswerConfig, scope: Sequence[str] | None) -> AnswerConfig:
        """``config`` with each intent's datasets given by id, each within ``scope`` (dataset ids;
        None: every dataset). An intent narrows the datasets asked, never widens them: a dataset
        outside the scope is :class:`NotFound` with the same message as one that does not exist,
        so a scoped caller learns nothing of datasets it may not use."""
        if not any(intent.datasets for intent in config.intents):
            return config
        allowed = set(scope) if scope is not None else None
        intents = []
        for intent in config.intents:
            if intent.datasets is None:
                intents.append(intent)
                continue
            ids = []
            for name in intent.datasets:
                try:
                    dataset_id = self._datasets.dataset(name).id
                except NotFound:
                    dataset_id = None
                if dataset_id is None or (allowed is not None and dataset_id not in allowed):
                    raise NotFound(f"no dataset {name!r}")
                ids.append(dataset_id)
            intents.append(intent.model_copy(update={"datasets": tuple(dict.fromkeys(ids))}))
        return config.model_copy(update={"intents": tuple(intents)})

    def _answer_loop(self) -> Assistant:
        embedding = self._models.embedding(self._settings.embedding_model, {})
        with self._lock:
            if self._assistant is None:
                self._assistant = build_assistant(
                    retrieve=self._current_retrieve(),
                    embedding=embedding,
                    chat_model=self._models.chat_model,
                    conversations=self.conversations,
                    describe_sections=self._described_sections,
                    settings=self._settings,
                )
            return self._assistant

    def _described_sections(self, datasets: Sequence[str] | None) -> list[SectionChoice]:
        """The sections with a description in the datasets asked (None: all), for the chat model to
        choose among when it reads a question."""
        targets = (
            self._datasets.datasets()
            if datasets is None
            else [self._datasets.dataset(name) for name in datasets]
        )
        described = {
            name: description
            for dataset in targets
            for name, description in dataset.section_descriptions().items()
        }
        return [SectionChoice(name, description) for name, description in sorted(described.items())]
