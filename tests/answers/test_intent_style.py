"""An intent's answer style reaches the chat model's rules, for answers from the knowledge base and
for the chat action's answers alike; without a style the rules are the default ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.answers.conftest import HANDBOOK
from tests.fixtures.openai_server import Reply, ScriptedChatServer
from zhiku import KnowledgeBase
from zhiku.answers.prompts import ANSWER_SYSTEM
from zhiku.answers.types import Answer

STEPS = "Answer in numbered steps."


def _systems(tmp_path: Path, intent: dict[str, Any], question: str) -> tuple[Answer, list[str]]:
    """Ask ``question`` with ``intent`` the only one; the system prompts of the answering calls."""

    def model(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return Reply.tool_call("understand", {"query": question, "retrieve": True})
        return Reply.text("1. Apply two weeks ahead [1].")

    with ScriptedChatServer(model) as server:
        kb = KnowledgeBase.open(
            tmp_path / "home", embedding_model="use", llm_base_url=server.base_url, llm_model="scripted"
        )
        try:
            dataset = kb.create_dataset("handbook", retrieval={"score_threshold": 0.0})
            for name, text in HANDBOOK:
                dataset.add_text(name, text)
            config = {"answerer": "llm", "intents": [intent], "repair_citations": False}
            answer = kb.ask(question, config=config, remember=False)
        finally:
            kb.close()
    assert isinstance(answer, Answer)
    answering = [body for body in server.requests if not body.get("tools")]
    return answer, [body["messages"][0]["content"] for body in answering]


def test_an_answer_intent_s_style_follows_the_answer_rules(tmp_path: Path) -> None:
    intent = {"name": "how-to", "description": "how to do something", "style": STEPS}
    answer, systems = _systems(tmp_path, intent, "How do I apply for annual leave?")
    assert answer.plan.intent == "how-to" and answer.sources
    assert systems == [f"{ANSWER_SYSTEM['en']}\n\n{STEPS}"]


def test_a_chat_intent_s_style_reaches_the_model_answering_alone(tmp_path: Path) -> None:
    intent = {"name": "smalltalk", "description": "greetings", "action": "chat", "style": "Be brief."}
    answer, systems = _systems(tmp_path, intent, "Hello there!")
    assert answer.plan.action == "chat" and not answer.grounded
    assert len(systems) == 1 and systems[0].endswith("\n\nBe brief.")


def test_without_a_style_the_rules_are_the_default_ones(tmp_path: Path) -> None:
    intent = {"name": "how-to", "description": "how to do something"}
    _, systems = _systems(tmp_path, intent, "How do I apply for annual leave?")
    assert systems == [ANSWER_SYSTEM["en"]]
