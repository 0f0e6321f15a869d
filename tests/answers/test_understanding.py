"""Query understanding against a real HTTP chat server: condense, HyDE, intent, and fallbacks."""

from __future__ import annotations

from tests.fixtures.openai_server import Reply, ScriptedChatServer, in_order, last_user_text
from zhiku import KnowledgeBase
from zhiku.answers.config import AnswerConfig, Intent
from zhiku.answers.memory import Turn
from zhiku.answers.understanding import QueryUnderstanding
from zhiku.providers.llm import ChatModel

HISTORY = [Turn("小米14手机有哪些颜色？", "有黑色、白色和绿色[1]。")]


def understanding(kb: KnowledgeBase, chat: ChatModel | None) -> QueryUnderstanding:
    return QueryUnderstanding(kb.embedding("use", {}), lambda: chat)


def test_condense_rewrites_a_follow_up_with_the_history(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(Reply.text("小米14手机多少钱？"))) as server:
        chat = ChatModel(server.base_url, "fake", retry_backoff=0.01)
        plan = understanding(kb, chat).plan("那它多少钱？", HISTORY, AnswerConfig())
        sent = last_user_text(server.requests[0])
    assert (plan.search_query, plan.semantic_query, plan.condensed) == ("小米14手机多少钱？",) * 2 + (True,)
    assert "小米14手机有哪些颜色？" in sent and "那它多少钱？" in sent


def test_condense_without_a_model_prepends_the_previous_question(kb: KnowledgeBase) -> None:
    plan = understanding(kb, None).plan("那它多少钱？", HISTORY, AnswerConfig())
    assert plan.search_query == "小米14手机有哪些颜色？ 那它多少钱？"
    assert understanding(kb, None).plan("那它多少钱？", [], AnswerConfig()).condensed is False


def test_a_failing_model_falls_back_and_says_so(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(then=Reply.status(503))) as server:
        chat = ChatModel(server.base_url, "fake", max_retries=0)
        plan = understanding(kb, chat).plan("那它多少钱？", HISTORY, AnswerConfig(hyde=True))
    assert plan.search_query == "小米14手机有哪些颜色？ 那它多少钱？"
    assert plan.hyde is False and plan.semantic_query == plan.search_query
    assert any(note.startswith("condense: the chat model failed") for note in plan.notes)
    assert any(note.startswith("hyde: the chat model failed") for note in plan.notes)


def test_hyde_drives_only_the_semantic_query(kb: KnowledgeBase) -> None:
    passage = "员工每年有十五天带薪年假，需提前申请。"
    with ScriptedChatServer(in_order(Reply.text(passage))) as server:
        chat = ChatModel(server.base_url, "fake")
        plan = understanding(kb, chat).plan("年假有几天？", [], AnswerConfig(hyde=True))
    assert (plan.search_query, plan.semantic_query, plan.hyde) == ("年假有几天？", passage, True)


INTENTS = (
    Intent(
        name="policy",
        description="company policies: leave, expenses, office hours",
        examples=("How many days of annual leave do I get?",),
    ),
    Intent(
        name="chitchat",
        description="greetings, small talk, jokes, the weather",
        action="refuse",
        reply="I only answer questions about the handbook.",
        examples=("hello, how are you?", "tell me a joke"),
    ),
)


def test_the_embedding_classifier_picks_the_nearest_intent(kb: KnowledgeBase) -> None:
    config = AnswerConfig(intents=INTENTS)
    assert understanding(kb, None).plan("tell me a funny joke please", [], config).action == "refuse"
    plan = understanding(kb, None).plan("how many leave days do employees get", [], config)
    assert (plan.intent, plan.action) == ("policy", "answer")


def test_the_llm_classifier_is_asked_with_one_tool_per_intent(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(Reply.tool_call("intent_1", {}))) as server:
        chat = ChatModel(server.base_url, "fake")
        config = AnswerConfig(intents=INTENTS, intent_classifier="llm")
        plan = understanding(kb, chat).plan("how many leave days?", [], config)
        tools = [tool["function"]["name"] for tool in server.requests[0]["tools"]]
    assert tools == ["intent_0", "intent_1"]
    assert (plan.intent, plan.action) == ("chitchat", "refuse")
