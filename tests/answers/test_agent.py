"""Agent mode against a real HTTP chat server: the model searches as it sees fit, bounded by a step
budget, a loop guard and a time budget; bad tool calls are answered, not fatal."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.answers.conftest import HANDBOOK
from tests.fixtures.openai_server import ChatHandler, Reply, ScriptedChatServer
from zhiku import KnowledgeBase
from zhiku.answers.types import Answer, AnswerEvent
from zhiku.core.errors import ConfigError

AGENT = {"mode": "agent", "answerer": "llm", "repair_citations": False}


@contextmanager
def agent_kb(tmp_path: Path, handler: ChatHandler) -> Iterator[tuple[KnowledgeBase, ScriptedChatServer]]:
    with ScriptedChatServer(handler) as server:
        kb = KnowledgeBase.open(
            tmp_path / "home", embedding_model="use", llm_base_url=server.base_url, llm_model="scripted"
        )
        try:
            dataset = kb.create_dataset("handbook")
            for name, text in HANDBOOK:
                dataset.add_text(name, text)
            yield kb, server
        finally:
            kb.close()


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def searches(server: ScriptedChatServer) -> int:
    """Requests that offered the search tool (the model could still search)."""
    return sum(1 for body in server.requests if body.get("tools"))


def ask(kb: KnowledgeBase, question: str, **config: Any) -> Answer:
    answer = kb.ask(question, config={**AGENT, **config}, remember=False)
    assert isinstance(answer, Answer)
    return answer


def test_the_model_searches_reads_and_answers_citing_what_it_read(tmp_path: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        if not tool_results(body):
            return Reply.tool_call("kb_search", {"query": "年假 天数"}, content="先查年假规定。")
        return Reply.text("员工每年有十五天带薪年假[1]。")

    with agent_kb(tmp_path, handler) as (kb, server):
        events = list(kb.ask("年假有几天？", config=AGENT, stream=True, remember=False))  # type: ignore[arg-type]
        tool_message = tool_results(server.requests[-1])[0]
    kinds = [event.kind for event in events]
    assert kinds[:3] == ["plan", "step", "sources"] and kinds[-1] == "answer"
    step = next(event.step for event in events if isinstance(event, AnswerEvent) and event.step)
    assert (step.query, step.thought, step.found, step.error) == ("年假 天数", "先查年假规定。", (1,), None)
    assert "[1]" in tool_message and "十五天带薪年假" in tool_message  # numbered passages, as sources
    answer = events[-1].answer
    assert answer is not None and answer.answerer == "agent" and answer.grounded
    assert answer.text == "员工每年有十五天带薪年假[1]。"
    assert [c.document_name for c in answer.citations] == ["leave.md"]
    assert "agent: 1 searches, stopped: answered" in answer.plan.notes


def test_a_model_that_never_stops_searching_is_stopped_after_max_steps(tmp_path: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return Reply.tool_call("kb_search", {"query": f"query {len(body['messages'])}"})
        return Reply.text("十五天[1]。")  # tools withdrawn: it must answer

    with agent_kb(tmp_path, handler) as (kb, server):
        answer = ask(kb, "年假有几天？", max_steps=3)
        assert searches(server) == 3 and "tools" not in server.requests[-1]
    assert len(answer.steps) == 3 and "stopped: max_steps" in answer.plan.notes[-1]


def test_the_same_query_twice_ends_the_loop(tmp_path: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            call_id = f"c{len(body['messages'])}"
            return Reply.tool_call("kb_search", {"query": "Annual  LEAVE"}, call_id=call_id)
        return Reply.text("Fifteen days[1].")

    with agent_kb(tmp_path, handler) as (kb, server):
        answer = ask(kb, "How many days of leave?", max_steps=5)
        assert searches(server) == 2
    assert [step.error for step in answer.steps] == [None, "this query was already searched"]
    assert "stopped: repeated_query" in answer.plan.notes[-1]


def test_a_malformed_tool_call_is_answered_with_an_error_not_a_failure(tmp_path: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        results = tool_results(body)
        if not results:
            return Reply.tool_calls(("kb_search", "{not json"), ("delete_everything", {}))
        if len(results) == 2:
            return Reply.tool_call("kb_search", {"query": "年假"}, call_id="c2")
        return Reply.text("十五天[1]。")

    with agent_kb(tmp_path, handler) as (kb, server):
        answer = ask(kb, "年假有几天？")
        errors = tool_results(server.requests[1])
    assert errors[0].startswith("error: arguments must be a JSON object")
    assert errors[1].startswith("error: unknown tool 'delete_everything'")
    assert [step.error is None for step in answer.steps] == [False, False, True]
    assert answer.text == "十五天[1]。" and answer.grounded


def test_a_model_without_tools_can_act_in_react_lines(tmp_path: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        observed = any(str(m.get("content", "")).startswith("Observation:") for m in body["messages"])
        if not observed:
            return Reply.text("Thought: I need the leave rules.\nAction: kb_search\nAction Input: 年假天数")
        return Reply.text("Final Answer: 十五天带薪年假[1]。")

    with agent_kb(tmp_path, handler) as (kb, _server):
        answer = ask(kb, "年假有几天？")
    assert answer.steps[0].query == "年假天数" and answer.steps[0].found
    assert answer.text == "十五天带薪年假[1]。"


def test_an_answer_citing_nothing_read_is_labelled_not_from_the_knowledge_base(tmp_path: Path) -> None:
    with agent_kb(tmp_path, lambda body: Reply.text("Hello! Ask me about the handbook.")) as (kb, server):
        answer = ask(kb, "hello")
        assert searches(server) == 1
    assert not answer.grounded and not answer.steps
    assert answer.text.endswith("(This answer is from the model itself, not from the knowledge base.)")


def test_an_invalid_marker_is_dropped_from_the_agent_answer(tmp_path: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        if not tool_results(body):
            return Reply.tool_call("kb_search", {"query": "年假"})
        return Reply.text("十五天[1][7]。")

    with agent_kb(tmp_path, handler) as (kb, _server):
        answer = ask(kb, "年假有几天？")
    assert "[7]" not in answer.text and [c.number for c in answer.citations] == [1]


def test_agent_mode_without_a_chat_model_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb, pytest.raises(ConfigError):
        kb.ask("年假有几天？", config={"mode": "agent"})
