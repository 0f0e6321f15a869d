"""Q&A mode end to end: a scripted chat server writes the pairs, real stores index the questions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.openai_server import Reply, ScriptedChatServer, last_user_text
from zhiku import KnowledgeBase
from zhiku.core.db import DatasetRow

HANDBOOK = (
    "青山茶园员工手册。年假：员工入职满一年后每年享有十天带薪年假。\n\n"
    "茶园每天早上八点开门，下午五点关门，周一闭园。\n\n"
    "Shipping: orders of Qingshan tea leave the warehouse within two working days."
)

PAIRS = {
    "年假": "Q1: 员工入职满一年后每年有几天带薪年假？\nA1: 十天。",
    "开门": "Q1: 茶园几点开门？\nA1: 早上八点。\n\nQ2：茶园哪天闭园？\nA2：周一。",
    "Shipping": "Q1: How soon do tea orders leave the warehouse?\nA1: Within two working days.",
}


def model_reply(body: dict) -> Reply:
    """Answers like a model would: pairs about the chunk in the prompt."""
    prompt = last_user_text(body)
    text = re.split(r"Text:\n|文本：\n", prompt)[-1]
    replies = [pairs for key, pairs in PAIRS.items() if key in text]
    return Reply.text("\n\n".join(replies) if replies else "I have no questions.")


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer(model_reply) as chat_server:
        yield chat_server


def open_kb(home: Path, server: ScriptedChatServer) -> KnowledgeBase:
    return KnowledgeBase.open(
        home, embedding_model="use", llm_base_url=server.base_url, llm_model="scripted", llm_max_retries=0
    )


def qa_rule(max_tokens: int = 200) -> dict:
    return {
        "doc_form": "qa_model",
        "max_tokens": max_tokens,
        "chunk_overlap": 0,
        "splitter": "fixed_separator",
    }


def test_question_paraphrase_returns_the_generated_answer_first(tmp_path: Path, server) -> None:
    with open_kb(tmp_path / "home", server) as kb:
        ds = kb.create_dataset("handbook", process_rule=qa_rule())
        info = ds.add_text("handbook.txt", HANDBOOK)
        assert info.status == "completed", info.error
        segments = ds.segments(info.id)
        assert {s.content for s in segments} >= {
            "茶园几点开门？",
            "How soon do tea orders leave the warehouse?",
        }
        assert all(s.answer for s in segments)

        hits = ds.search("工作满一年以后能休几天年假")
        assert hits[0].answer == "十天。"
        assert hits[0].content.startswith("员工入职满一年后")
        assert hits[0].document_id == info.id
        assert "chunk_position" in hits[0].metadata

        english = ds.search("when will my tea order be shipped from the warehouse")
        assert english[0].answer == "Within two working days."
    prompts = [last_user_text(body) for body in server.requests]
    assert any("阅读下面的文本" in p for p in prompts), "a Chinese document gets the Chinese prompt"


def test_failed_chunks_are_recorded_and_retried_alone(tmp_path: Path) -> None:
    failing = {"on": True}

    def flaky(body: dict) -> Reply:
        if failing["on"] and "Shipping" in last_user_text(body):
            return Reply.status(500, "upstream exploded")
        return model_reply(body)

    with ScriptedChatServer(flaky) as server, open_kb(tmp_path / "home", server) as kb:
        ds = kb.create_dataset("handbook", process_rule=qa_rule())
        info = ds.add_text("handbook.txt", HANDBOOK)
        assert info.status == "completed_with_errors"
        assert "1 chunk(s) not indexed" in (info.error or "")
        assert "500" in info.error
        failed = info.metadata["failed_chunks"]
        assert len(failed) == 1 and "Shipping" in failed[0]["content"]
        before = {s.content for s in ds.segments(info.id)}
        assert "茶园几点开门？" in before  # the rest is served
        assert ds.search("茶园几点开门")[0].answer == "早上八点。"

        calls = len(server.requests)
        failing["on"] = False
        retried = ds.retry_document(info.id)
        assert retried.status == "completed" and retried.error is None
        assert retried.metadata["failed_chunks"] == []
        assert len(server.requests) == calls + 1, "only the failed chunk is asked again"
        after = ds.segments(info.id)
        assert {s.content for s in after} == before | {"How soon do tea orders leave the warehouse?"}
        assert [s.position for s in after] == list(range(len(after)))
        assert ds.search("when will my tea order be shipped")[0].answer == "Within two working days."


def test_unparsable_replies_and_a_missing_model_mark_the_document_error(tmp_path: Path) -> None:
    with (
        ScriptedChatServer(lambda body: Reply.text("Sorry, I can't.")) as server,
        open_kb(tmp_path / "home", server) as kb,
    ):
        ds = kb.create_dataset("handbook", process_rule=qa_rule())
        info = ds.add_text("handbook.txt", HANDBOOK)
        assert info.status == "error"
        assert "no question/answer pair" in info.error
        assert len(info.metadata["failed_chunks"]) == 3
        assert ds.segments(info.id) == []
    with KnowledgeBase.open(tmp_path / "other", embedding_model="use") as kb:
        ds = kb.create_dataset("handbook", process_rule=qa_rule())
        info = ds.add_text("handbook.txt", HANDBOOK)
        assert info.status == "error"
        assert "ZHIKU_LLM_BASE_URL" in info.error


def test_dataset_llm_options_override_the_knowledge_base(tmp_path: Path, server) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        ds = kb.create_dataset(
            "handbook", process_rule=qa_rule(), llm={"base_url": server.base_url, "model": "per-dataset"}
        )
        assert ds.add_text("handbook.txt", HANDBOOK).status == "completed"
    assert {body["model"] for body in server.requests} == {"per-dataset"}


def test_qa_pairs_import_from_csv_without_an_llm(tmp_path: Path) -> None:
    csv_file = tmp_path / "faq.csv"
    csv_file.write_text(
        "question,answer\n年假有几天？,十天。\nWhen do you open?,At eight.\n,skipped\n", "utf-8"
    )
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        ds = kb.create_dataset("faq")
        info = ds.add_qa_csv(csv_file)
        assert info.status == "completed" and info.segment_count == 2
        assert ds.search("年假有多少天")[0].answer == "十天。"
        headerless = tmp_path / "plain.csv"
        headerless.write_bytes("几点关门？,下午五点。\n".encode("gb18030"))
        assert ds.add_qa_csv(headerless).segment_count == 1
        empty = tmp_path / "empty.csv"
        empty.write_text("question,answer\n", "utf-8")
        failed = ds.add_qa_csv(empty)
        assert failed.status == "error" and "no question/answer pair" in (failed.error or "")
        binary = tmp_path / "binary.csv"
        binary.write_bytes(bytes(range(128, 256)) * 4)
        assert ds.add_qa_csv(binary).status == "error"
        assert ds.search("年假有多少天")[0].answer == "十天。"  # the rest stays served


def test_a_model_that_times_out_is_recorded_per_chunk(tmp_path: Path) -> None:
    def slow_on_shipping(body: dict) -> Reply:
        if "Shipping" in last_user_text(body):
            return Reply.delay(2.0, then=model_reply(body))
        return model_reply(body)

    with ScriptedChatServer(slow_on_shipping) as server, KnowledgeBase.open(
        tmp_path / "home",
        embedding_model="use",
        llm_base_url=server.base_url,
        llm_model="scripted",
        llm_max_retries=1,
        llm_timeout=0.3,
    ) as kb:
        ds = kb.create_dataset("handbook", process_rule=qa_rule())
        info = ds.add_text("handbook.txt", HANDBOOK)
    assert info.status == "completed_with_errors"
    [failure] = info.metadata["failed_chunks"]
    assert "Shipping" in failure["content"] and "did not answer within 0.3 s" in failure["reason"]


def test_a_dataset_key_is_stored_sealed_and_used(tmp_path: Path) -> None:
    with ScriptedChatServer(model_reply, require_key="sk-dataset-key") as server:
        with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
            llm = {"base_url": server.base_url, "model": "per-dataset", "api_key": "sk-dataset-key"}
            ds = kb.create_dataset("handbook", process_rule=qa_rule(), llm=llm)
            assert ds.add_text("handbook.txt", HANDBOOK).status == "completed"
            with kb.sessions() as session:
                stored = session.get(DatasetRow, ds.id).llm_options  # type: ignore[union-attr]
            assert set(stored["api_key"]) == {"encrypted"}
            assert "sk-dataset-key" not in json.dumps(stored)
            # a row written before keys were sealed holds the key in plain text ...
            with kb.sessions.begin() as session:
                session.get(DatasetRow, ds.id).llm_options = llm  # type: ignore[union-attr]
        with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
            ds = kb.dataset("handbook")
            with kb.sessions() as session:
                stored = session.get(DatasetRow, ds.id).llm_options  # type: ignore[union-attr]
            assert "sk-dataset-key" not in json.dumps(stored)  # ... sealed at the next open
            assert ds.add_text("copy.txt", HANDBOOK, on_duplicate="keep").status == "completed"
