"""Query understanding against a real HTTP chat server: condense, HyDE, intent, and fallbacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fixtures.openai_server import Reply, ScriptedChatServer, in_order, last_user_text
from zhiku import KnowledgeBase
from zhiku.answers.config import AnswerConfig, Intent
from zhiku.answers.memory import Turn
from zhiku.answers.types import Answer
from zhiku.answers.understanding import QueryUnderstanding, SectionChoice
from zhiku.providers.llm import ChatModel

HISTORY = [Turn("小米14手机有哪些颜色？", "有黑色、白色和绿色[1]。")]


def understanding(kb: KnowledgeBase, chat: ChatModel | None) -> QueryUnderstanding:
    return QueryUnderstanding(kb.embedding("use", {}), lambda: chat)


def understood(query: str, **more: object) -> Reply:
    return Reply.tool_call("understand", {"query": query, "retrieve": True, **more})


def test_condense_rewrites_a_follow_up_with_the_history(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(understood("小米14手机多少钱？"))) as server:
        chat = ChatModel(server.base_url, "fake", retry_backoff=0.01)
        plan = understanding(kb, chat).plan("那它多少钱？", HISTORY, AnswerConfig())
        sent = last_user_text(server.requests[0])
    assert (plan.search_query, plan.semantic_query, plan.condensed) == ("小米14手机多少钱？",) * 2 + (True,)
    assert "小米14手机有哪些颜色？" in sent and "那它多少钱？" in sent


def test_offline_a_follow_up_that_refers_back_is_searched_with_the_question_before(kb: KnowledgeBase) -> None:
    plan = understanding(kb, None).plan("那它多少钱？", HISTORY, AnswerConfig())
    assert plan.search_query == "小米14手机有哪些颜色？ 那它多少钱？" and plan.condensed
    assert any("refers back" in note for note in plan.notes)
    assert understanding(kb, None).plan("那它多少钱？", [], AnswerConfig()).condensed is False


def test_offline_a_follow_up_naming_its_own_subject_is_searched_alone(kb: KnowledgeBase) -> None:
    history = [Turn("How do membership points work?", "One point per yuan spent [1].")]
    question = "And how long is the warranty on the smart kettle?"
    plan = understanding(kb, None).plan(question, history, AnswerConfig())
    assert (plan.search_query, plan.condensed) == (question, False)
    assert "follow-up: it names its own subject; searched alone" in plan.notes


def test_offline_a_chinese_follow_up_that_drops_its_subject_is_folded(kb: KnowledgeBase) -> None:
    history = [Turn("开封后的茶叶发霉了可以退吗？", "可以退换[1]。")]
    for question in ("运费谁出？", "多久能处理好？", "那下午三点付的呢？", "需要把碎的寄回去吗？"):
        plan = understanding(kb, None).plan(question, history, AnswerConfig())
        assert plan.search_query == f"开封后的茶叶发霉了可以退吗？ {question}", question
    for question in ("另外，香港能寄吗？运费多少？", "会员积分怎么用？", "温控壶显示E03是什么原因？"):
        assert understanding(kb, None).plan(question, history, AnswerConfig()).condensed is False, question


def test_offline_a_chain_of_follow_ups_reaches_back_to_the_question_that_stood_alone(
    kb: KnowledgeBase,
) -> None:
    history = [
        Turn("杭州旗舰店周六几点开门？", "10:00-22:00 [1]"),
        Turn("那周日呢？", "周日也是 10:00-22:00 [1]"),
    ]
    plan = understanding(kb, None).plan("周一呢？", history, AnswerConfig())
    assert plan.search_query == "杭州旗舰店周六几点开门？ 那周日呢？ 周一呢？"


def test_a_failing_model_falls_back_and_says_so(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(then=Reply.status(503))) as server:
        chat = ChatModel(server.base_url, "fake", max_retries=0)
        plan = understanding(kb, chat).plan("那它多少钱？", HISTORY, AnswerConfig(hyde=True))
    assert plan.search_query == "小米14手机有哪些颜色？ 那它多少钱？"
    assert plan.hyde is False and plan.semantic_query == plan.search_query
    assert any(note.startswith("understand: the chat model failed") for note in plan.notes)
    assert any(note.startswith("hyde: the chat model failed") for note in plan.notes)


def test_hyde_drives_only_the_semantic_query(kb: KnowledgeBase) -> None:
    passage = "员工每年有十五天带薪年假，需提前申请。"
    with ScriptedChatServer(in_order(understood("年假有几天？"), Reply.text(passage))) as server:
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


def test_the_llm_classifier_picks_the_intent_in_the_understanding_call(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(understood("how many leave days?", intent="chitchat"))) as server:
        chat = ChatModel(server.base_url, "fake")
        config = AnswerConfig(intents=INTENTS, intent_classifier="llm")
        plan = understanding(kb, chat).plan("how many leave days?", [], config)
        (tool,) = server.requests[0]["tools"]
    assert tool["function"]["parameters"]["properties"]["intent"]["enum"] == ["policy", "chitchat"]
    assert (plan.intent, plan.action) == ("chitchat", "refuse")


def test_without_understanding_the_llm_classifier_has_one_tool_per_intent(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(Reply.tool_call("intent_1", {}))) as server:
        chat = ChatModel(server.base_url, "fake")
        config = AnswerConfig(intents=INTENTS, intent_classifier="llm", condense=False)
        plan = understanding(kb, chat).plan("how many leave days?", [], config)
        tools = [tool["function"]["name"] for tool in server.requests[0]["tools"]]
    assert tools == ["intent_0", "intent_1"]
    assert (plan.intent, plan.action) == ("chitchat", "refuse")


def test_every_question_is_understood_even_the_first_typos_fixed(kb: KnowledgeBase) -> None:
    with ScriptedChatServer(in_order(understood("How many days of annual leave?"))) as server:
        chat = ChatModel(server.base_url, "fake")
        plan = understanding(kb, chat).plan("How many dyas of anual leave?", [], AnswerConfig())
        sent = last_user_text(server.requests[0])
    assert (plan.search_query, plan.condensed) == ("How many days of annual leave?", True)
    assert "Conversation" not in sent  # no history to fold in


SECTIONS = [
    SectionChoice("Handbook > Leave", "annual leave, sick leave, parental leave"),
    SectionChoice("Handbook > Expenses", "travel and meal expenses, reimbursement"),
]


def test_the_chat_model_chooses_among_the_described_sections(kb: KnowledgeBase) -> None:
    picked = ["Handbook > Leave", "Handbook > Nowhere", "Handbook > Leave"]
    with ScriptedChatServer(in_order(understood("sick leave days", sections=picked))) as server:
        chat = ChatModel(server.base_url, "fake")
        plan = understanding(kb, chat).plan("sick leave?", [], AnswerConfig(), SECTIONS)
        (tool,) = server.requests[0]["tools"]
    offered = tool["function"]["parameters"]["properties"]["sections"]["items"]["enum"]
    assert offered == ["Handbook > Leave", "Handbook > Expenses"]
    assert plan.sections == ("Handbook > Leave",)  # unknown names dropped, each once


def test_no_search_needed_is_a_general_answer_only_when_allowed(kb: KnowledgeBase) -> None:
    hello = understood("hello!", retrieve=False)
    with ScriptedChatServer(in_order(hello, hello)) as server:
        chat = ChatModel(server.base_url, "fake")
        allowed = understanding(kb, chat).plan("hello!", [], AnswerConfig(general_answers=True))
        default = understanding(kb, chat).plan("hello!", [], AnswerConfig())
    assert allowed.action == "chat"
    assert default.action == "answer" and any("searched anyway" in note for note in default.notes)


def test_a_malformed_understanding_falls_back_offline(kb: KnowledgeBase) -> None:
    replies = in_order(
        Reply.tool_call("understand", "{not json"),
        Reply.tool_call("understand", {"query": "x" * 10_000, "retrieve": True}),
        Reply.text("the answer is 15 days"),
    )
    with ScriptedChatServer(replies) as server:
        chat = ChatModel(server.base_url, "fake")
        plans = [understanding(kb, chat).plan("那它多少钱？", HISTORY, AnswerConfig()) for _ in range(3)]
    for plan in plans:
        assert plan.search_query == "小米14手机有哪些颜色？ 那它多少钱？"
        assert any(note.startswith("understand: ") for note in plan.notes)


def test_ask_offers_the_described_sections_and_searches_the_one_chosen(tmp_path: Path) -> None:
    """Through ``kb.ask``: the understanding call lists the datasets' described sections, and the
    search stays in the one the model picks (both sections say 'days', only one is chosen)."""

    def handler(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            enum = body["tools"][0]["function"]["parameters"]["properties"]["sections"]["items"]["enum"]
            offered.append(enum)
            return understood("how many days of leave", sections=["Handbook > Leave"])
        return Reply.text("Fifteen days [1].")

    offered: list[list[str]] = []
    text = (
        "# Handbook\n\n## Leave\n\nEvery employee has fifteen days of paid annual leave.\n\n"
        "## Expenses\n\nExpense claims are filed within thirty days of the trip.\n"
    )
    with ScriptedChatServer(handler) as server:
        kb = KnowledgeBase.open(
            tmp_path / "home", embedding_model="use", llm_base_url=server.base_url, llm_model="scripted"
        )
        try:
            dataset = kb.create_dataset("handbook", retrieval={"score_threshold": 0.0})
            dataset.add_text("handbook.md", text)
            dataset.describe_sections(
                {"Handbook > Leave": "annual and sick leave", "Handbook > Expenses": "claims and receipts"}
            )
            answer = kb.ask("How many days?", config={"answerer": "llm"}, remember=False)
        finally:
            kb.close()
    assert offered == [["Handbook > Expenses", "Handbook > Leave"]]
    assert isinstance(answer, Answer) and answer.plan.sections == ("Handbook > Leave",)
    assert answer.sources and all("fifteen days" in source.text for source in answer.sources)


def test_hyde_writes_each_further_passage_as_another_kind_of_document(kb: KnowledgeBase) -> None:
    passages = [Reply.text(f"员工每年有十五天带薪年假（第{n}种写法）。") for n in (1, 2, 3)]
    with ScriptedChatServer(in_order(understood("年假有几天？"), *passages)) as server:
        chat = ChatModel(server.base_url, "fake")
        plan = understanding(kb, chat).plan("年假有几天？", [], AnswerConfig(hyde=True, hyde_hypotheses=3))
        prompts = [last_user_text(request) for request in server.requests[1:]]
    assert len(plan.hypotheses) == 3 and plan.semantic_query == plan.hypotheses[0] and plan.hyde
    assert prompts[0] == "年假有几天？"
    assert prompts[1].startswith("写成：常见问题解答中的一条") and prompts[2].startswith("写成：产品手册")
    assert plan.to_dict()["hypotheses"] == list(plan.hypotheses)


def test_hyde_keeps_the_passages_written_before_the_model_failed(kb: KnowledgeBase) -> None:
    first = "Employees have fifteen days of paid leave."
    script = in_order(understood("days of leave"), Reply.text(first), then=Reply.status(503))
    with ScriptedChatServer(script) as server:
        chat = ChatModel(server.base_url, "fake", max_retries=0)
        plan = understanding(kb, chat).plan("days of leave", [], AnswerConfig(hyde=True, hyde_hypotheses=3))
    assert plan.hypotheses == (first,) and plan.semantic_query == first
    assert any("the chat model failed" in note and "1 passage(s)" in note for note in plan.notes)


def test_ask_searches_with_every_hyde_passage_and_merges_the_hits(tmp_path: Path) -> None:
    """Each hypothetical passage drives a semantic search of its own: the sources hold the passage
    each one found, though the question names neither (the first alone would bring sick leave,
    nearer to it than expenses)."""
    leave = "Every employee has fifteen days of paid annual leave."
    expenses = "Expense claims are filed within thirty days of the trip."
    sick = "Every employee also has ten days of paid sick leave."
    script = in_order(
        understood("what are the rules"), Reply.text(leave), Reply.text(expenses), Reply.text("Rules [1][2].")
    )
    with ScriptedChatServer(script) as server:
        kb = KnowledgeBase.open(
            tmp_path / "home", embedding_model="use", llm_base_url=server.base_url, llm_model="scripted"
        )
        try:
            dataset = kb.create_dataset("handbook", retrieval={"top_k": 2, "score_threshold": 0.0})
            for name, text in (("leave.md", leave), ("expenses.md", expenses), ("sick.md", sick)):
                dataset.add_text(name, text)
            config = {"answerer": "llm", "hyde": True, "hyde_hypotheses": 2}
            answer = kb.ask("what are the rules", config=config, remember=False)
        finally:
            kb.close()
    assert isinstance(answer, Answer) and answer.plan.hypotheses == (leave, expenses)
    assert sorted(source.document_name for source in answer.sources) == ["expenses.md", "leave.md"]
