"""How a question is answered: which steps run, with which budgets (per call or per dataset)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from zhiku.answers.answerers import answerer_names
from zhiku.core.sections import SectionPath

#: ``pipeline``: understand, search once, answer. ``agent``: the chat model searches as it sees fit.
AnswerMode = Literal["pipeline", "agent"]


class Intent(BaseModel):
    """One kind of question. The classifier always picks the closest intent, so a set of intents
    should cover everything expected (add an ``other`` intent for the rest)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=1000)
    #: ``answer`` from the knowledge base, cited; ``chat``: the chat model alone, labelled as not
    #: from the knowledge base (a refusal without one); ``refuse`` politely.
    action: Literal["answer", "chat", "refuse"] = "answer"
    #: Restrict retrieval to these datasets (names or ids) when this intent is chosen.
    datasets: tuple[str, ...] | None = Field(None, max_length=50)
    #: Restrict retrieval to this section (a heading path such as ``"Handbook > Leave"``) and the
    #: sections under it, in every dataset searched (a dataset's ``sections()`` lists them).
    section: SectionPath | None = Field(None, max_length=255)
    #: What a refusal says; a polite default in the question's language otherwise.
    reply: str | None = Field(None, max_length=2000)
    #: How the chat model answers questions of this kind (``answer`` and ``chat``), added to its
    #: rules: "Answer in numbered steps.", "回答要简短，给出联系方式。" The extractive answerer quotes.
    style: str | None = Field(None, max_length=2000)
    #: Example questions of this kind (each as long as a description at most).
    examples: tuple[Annotated[str, Field(max_length=1000)], ...] = Field((), max_length=20)



class AnswerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: an answerer of the ``answerers`` registry (``llm``, ``extractive`` or an installed one), or
    #: ``auto``: the chat model when one is configured and the extractive answerer otherwise
    answerer: str = Field("auto", min_length=1, max_length=64)
    mode: AnswerMode = "pipeline"
    #: Agent mode: at most this many searches (a bad or repeated call counts), then an answer.
    max_steps: int = Field(4, ge=1, le=10)
    #: Agent mode: the loop's wall-time budget in seconds, then an answer from what was read.
    agent_seconds: float = Field(60.0, gt=0, le=600)
    #: Understand every question with the chat model in one call: a standalone query (typos
    #: fixed, the conversation folded in only when needed), the intent, the sections to search,
    #: whether to search at all. With no chat model, a follow-up is searched with the questions
    #: before it only when it depends on them.
    condense: bool = True
    #: When the chat model judges that a message needs no search (a greeting, small talk), let it
    #: answer alone, labelled as not from the knowledge base; off, every question is searched.
    general_answers: bool = False
    #: Drive semantic search with a hypothetical answer written by the chat model (HyDE).
    hyde: bool = False
    #: HyDE: how many hypothetical passages to write, each as another kind of document (a FAQ
    #: entry, a manual's paragraph, ...); each drives a semantic search and their hits are merged
    #: by relevance. More finds passages written unlike the first guess, at one chat call each.
    hyde_hypotheses: int = Field(1, ge=1, le=5)
    intents: tuple[Intent, ...] = Field((), max_length=50)
    #: ``embedding`` (offline) or ``llm`` (the chat model, the embedding classifier on failure).
    intent_classifier: Literal["embedding", "llm"] = "embedding"
    history_tokens: int = Field(1000, ge=0, le=32_000)
    context_tokens: int = Field(3000, ge=64, le=100_000)
    max_sources: int = Field(8, ge=1, le=50)
    max_answer_tokens: int = Field(1024, ge=16, le=16_000)
    #: Credit an uncited answer sentence to the source it was clearly taken from.
    repair_citations: bool = True

    @field_validator("answerer")
    @classmethod
    def _installed(cls, value: str) -> str:
        known = answerer_names()
        if value not in known:
            raise ValueError(f"unknown answerer {value[:80]!r}; installed: {', '.join(known)}")
        return value
