"""N-choose-1 routing: the offline embedding router and the two LLM routers over real HTTP."""

from __future__ import annotations

import pytest

from tests.fixtures.openai_server import Reply, ScriptedChatServer, in_order
from zhiku import KnowledgeBase
from zhiku.knowledge_base.profiles import DatabaseProfiles
from zhiku.providers.llm import ChatModel
from zhiku.retrieval.profiles import load_profiles
from zhiku.retrieval.routers import EmbeddingRouter, FunctionCallRouter, ReactRouter
from zhiku.retrieval.routers.react import parse_action


def ids(kb: KnowledgeBase) -> dict[str, str]:
    return {dataset.name: dataset.id for dataset in kb.datasets()}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How is green tea roasted?", "tea"),
        ("龙井茶什么时候采摘？", "tea"),
        ("Which planet has rings of ice?", "astronomy"),
        ("When do we get our monthly salary?", "payroll"),
    ],
)
def test_embedding_router_picks_the_dataset_that_fits(
    routed_kb: KnowledgeBase, query: str, expected: str
) -> None:
    result = routed_kb.retrieve(query, routing="single", router="embedding")
    assert result.datasets == [ids(routed_kb)[expected]]
    assert result.hits and all(hit.dataset_id == ids(routed_kb)[expected] for hit in result.hits)
    assert result.router == "embedding" and result.note is None


def test_zero_and_one_dataset_need_no_model(routed_kb: KnowledgeBase) -> None:
    assert routed_kb.retrieve("tea", datasets=[], routing="single").hits == []
    with ScriptedChatServer(lambda body: Reply.status(500)) as server:
        router = FunctionCallRouter(ChatModel(server.base_url, "m", max_retries=0), _embedding(routed_kb))
        one = load_profiles(DatabaseProfiles(routed_kb.sessions), [ids(routed_kb)["astronomy"]])
        assert router.choose("anything", one).dataset_id == ids(routed_kb)["astronomy"]
        assert router.choose("anything", []).dataset_id is None
    assert server.requests == [], "one dataset is chosen without asking the model"


def _embedding(kb: KnowledgeBase) -> EmbeddingRouter:
    return kb.routed_retrieval().router("embedding")  # type: ignore[return-value]


def test_function_call_router_follows_the_tool_the_model_calls(routed_kb: KnowledgeBase) -> None:
    payroll = ids(routed_kb)["payroll"]
    with ScriptedChatServer(lambda body: Reply.tool_call(payroll, {"query": "q"})) as server:
        router = FunctionCallRouter(ChatModel(server.base_url, "m"), _embedding(routed_kb))
        profiles = load_profiles(DatabaseProfiles(routed_kb.sessions), list(ids(routed_kb).values()))
        decision = router.choose("How is green tea roasted?", profiles)
    assert decision.dataset_id == payroll and decision.note is None
    request = server.requests[0]
    tools = {tool["function"]["name"]: tool["function"]["description"] for tool in request["tools"]}
    assert tools[payroll] == "Salaries, overtime pay and payroll dates for employees"
    assert set(tools) == set(ids(routed_kb).values())


@pytest.mark.parametrize(
    "reply",
    [
        Reply.tool_call("no-such-dataset", {"query": "q"}),
        Reply.text("I would search the tea dataset."),
        Reply.tool_call("x", "{not json"),
        Reply.status(500, "down"),
        Reply.raw("<html>bad gateway</html>"),
    ],
)
def test_function_call_router_falls_back_to_embedding_never_crashes(
    routed_kb: KnowledgeBase, reply: Reply
) -> None:
    with ScriptedChatServer(lambda body: reply) as server:
        router = FunctionCallRouter(ChatModel(server.base_url, "m", max_retries=0), _embedding(routed_kb))
        profiles = load_profiles(DatabaseProfiles(routed_kb.sessions), list(ids(routed_kb).values()))
        decision = router.choose("Which planet has rings of ice?", profiles)
    assert decision.dataset_id == ids(routed_kb)["astronomy"]
    assert decision.router == "function_call"
    assert decision.note and "embedding router chose instead" in decision.note


def test_react_router_reads_json_blob_action_line_or_name(routed_kb: KnowledgeBase) -> None:
    tea = ids(routed_kb)["tea"]
    replies = in_order(
        Reply.text(f'Thought: tea.\nAction:\n```json\n{{"action": "{tea}", "action_input": "q"}}\n```'),
        Reply.text("Thought: it is about tea\nAction: tea"),
        Reply.text("Thought: nothing fits\nFinal Answer: none"),
    )
    with ScriptedChatServer(replies) as server:
        router = ReactRouter(ChatModel(server.base_url, "m"), _embedding(routed_kb))
        profiles = load_profiles(DatabaseProfiles(routed_kb.sessions), list(ids(routed_kb).values()))
        first = router.choose("Saturn's rings?", profiles)
        second = router.choose("Saturn's rings?", profiles)
        third = router.choose("Saturn's rings?", profiles)
    assert first.dataset_id == tea and second.dataset_id == tea
    assert third.dataset_id == ids(routed_kb)["astronomy"] and "no valid dataset" in (third.note or "")
    prompt = server.requests[0]["messages"][-1]["content"]
    assert f"- {tea}: Tea growing" in prompt and "Saturn's rings?" in prompt


def test_parse_action_variants() -> None:
    assert parse_action('{"action": "abc", "action_input": "x"}') == "abc"
    assert parse_action("Action： abc") == "abc"
    assert parse_action("no action here") is None


def test_llm_router_through_the_knowledge_base_settings(tmp_path) -> None:
    with (
        ScriptedChatServer(lambda body: Reply.tool_call(body["tools"][1]["function"]["name"], {})) as server,
        KnowledgeBase.open(
            tmp_path, embedding_model="use", llm_base_url=server.base_url, llm_model="m"
        ) as kb,
    ):
        kb.create_dataset("first", description="first").add_text("a.txt", "apples")
        second = kb.create_dataset("second", description="second")
        second.add_text("b.txt", "bananas")
        result = kb.retrieve("apples", routing="single", router="function_call", score_threshold=0.0)
    assert result.datasets == [second.id] and result.router == "function_call"
    assert [hit.content for hit in result.hits] == ["bananas"]


def test_unknown_router_is_a_config_error(routed_kb: KnowledgeBase) -> None:
    with pytest.raises(Exception, match="unknown router"):
        routed_kb.retrieve("tea", routing="single", router="coin_flip")


def test_a_router_model_that_times_out_falls_back(routed_kb: KnowledgeBase) -> None:
    tea = ids(routed_kb)["tea"]
    with ScriptedChatServer(lambda body: Reply.delay(2.0, then=Reply.tool_call(tea, {}))) as server:
        chat = ChatModel(server.base_url, "m", timeout=0.2, max_retries=0)
        router = FunctionCallRouter(chat, _embedding(routed_kb))
        profiles = load_profiles(DatabaseProfiles(routed_kb.sessions), list(ids(routed_kb).values()))
        decision = router.choose("Which planet has rings of ice?", profiles)
    assert decision.dataset_id == ids(routed_kb)["astronomy"]
    assert decision.note and "failed" in decision.note
