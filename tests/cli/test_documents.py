"""``zhiku document list|show|delete|retry|enable|disable`` on a real knowledge base."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import TEA_FILES
from tests.fixtures.make_files import make_pdf
from tests.fixtures.openai_server import Reply, ScriptedChatServer, last_user_text
from tests.knowledge_base.test_qa_dataset import HANDBOOK, model_reply


def _ids(run_json: Any, name: str) -> list[str]:
    listed = run_json("document", "list", "--dataset", "tea")["documents"]
    return [doc["id"] for doc in listed if doc["name"] == name]


def test_list_and_show(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    listed = run_json("document", "list", "--dataset", "tea")
    assert listed["dataset"]["name"] == "tea"
    by_name = {doc["name"]: doc for doc in listed["documents"]}
    assert sorted(doc["name"] for doc in listed["documents"]) == ["a.txt", "a.txt", "b.txt", "bad.pdf"]
    assert set(by_name["b.txt"]) == {
        "id",
        "name",
        "status",
        "enabled",
        "error",
        "segment_count",
        "token_count",
        "word_count",
        "created_at",
    }
    failed = run_json("document", "list", "--dataset", "tea", "--status", "error")["documents"]
    assert [doc["name"] for doc in failed] == ["bad.pdf"] and "cannot extract" in failed[0]["error"]

    shown = run_json("document", "show", "b.txt", "--dataset", "tea")
    content = TEA_FILES["b.txt"]
    assert shown["status"] == "completed" and shown["segment_count"] == 1 and shown["token_count"] > 0
    assert shown["word_count"] == len(content)
    assert shown["file_hash"] == hashlib.sha256(content.encode()).hexdigest()
    assert shown["source"] == str(tea / "b.txt") and shown["size"] == len(content.encode())
    assert shown["stage_times"]["completed"] is not None and shown["failed_chunks"] == []
    text = run("document", "show", "bad.pdf", "--dataset", "tea").output
    assert "status    error" in text and "cannot extract bad.pdf" in text
    assert "bad.pdf" in run("document", "list", "--dataset", "tea", "--status", "error").output
    assert "b.txt" not in run("document", "list", "--dataset", "tea", "--status", "error").output


def test_an_ambiguous_name_is_an_error_listing_the_candidates(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    ids = _ids(run_json, "a.txt")
    assert len(ids) == 2
    result = run("document", "show", "a.txt", "--dataset", "tea", code=1)
    error_line = result.stderr.strip()
    assert (
        "\n" not in error_line
        and all(i in error_line for i in ids)
        and str(tea / "sub" / "a.txt") in error_line
    )
    assert result.stdout == ""
    as_json = run("document", "show", "a.txt", "--dataset", "tea", "--json", code=1)
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "ambiguous_name" and sorted(c["id"] for c in error["candidates"]) == sorted(ids)
    assert "a.txt" in as_json.stderr
    # an id names one of them
    assert run_json("document", "show", ids[1], "--dataset", "tea")["id"] == ids[1]
    # nothing was deleted when one name of several was ambiguous
    run("document", "delete", "b.txt", "a.txt", "--dataset", "tea", "--yes", code=1)
    assert _ids(run_json, "b.txt")


def test_unknown_names_are_errors_in_both_modes(run) -> None:  # type: ignore[no-untyped-def]
    result = run("document", "list", "--dataset", "missing", "--json", code=1)
    assert json.loads(result.stdout) == {"error": {"code": "not_found", "message": "no dataset 'missing'"}}
    assert result.stderr.strip() == "Error: no dataset 'missing'"
    run("dataset", "create", "tea")
    missing = run("document", "show", "nope.txt", "--dataset", "tea", code=1)
    assert missing.stderr.strip() == "Error: no document 'nope.txt' in dataset 'tea'"


def test_delete_then_list_and_search(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    found = run("search", "bamboo baskets", "--dataset", "tea", "--method", "full_text").output
    assert "b.txt" in found
    kept = run("document", "delete", "b.txt", "--dataset", "tea", stdin="n\n", code=1)
    assert "Aborted" in kept.output and _ids(run_json, "b.txt")

    deleted = run_json("document", "delete", "b.txt", "bad.pdf", "--dataset", "tea", "--yes")
    assert sorted(doc["name"] for doc in deleted["deleted"]) == ["b.txt", "bad.pdf"]
    names = [doc["name"] for doc in run_json("document", "list", "--dataset", "tea")["documents"]]
    assert names == ["a.txt", "a.txt"]
    gone = run("search", "bamboo baskets", "--dataset", "tea", "--method", "full_text").output
    assert "b.txt" not in gone
    run("document", "delete", "b.txt", "--dataset", "tea", "--yes", code=1)


def test_disable_hides_a_document_from_search_and_enable_brings_it_back(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    query = ("search", "bamboo baskets", "--dataset", "tea", "--method", "full_text", "--json")
    assert [hit["document_name"] for hit in json.loads(run(*query).stdout)] == ["b.txt"]
    changed = run_json("document", "disable", "b.txt", "--dataset", "tea")
    assert changed["documents"] == [{"id": _ids(run_json, "b.txt")[0], "name": "b.txt", "enabled": False}]
    assert json.loads(run(*query).stdout) == []
    assert "[disabled]" in run("document", "list", "--dataset", "tea").output
    assert "enabled b.txt" in run("document", "enable", "b.txt", "--dataset", "tea").output
    assert [hit["document_name"] for hit in json.loads(run(*query).stdout)] == ["b.txt"]


def test_retry_a_failed_document_once_its_file_is_fixed(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    again = run("document", "retry", "bad.pdf", "--dataset", "tea", code=1)
    assert again.output.startswith("error     bad.pdf: cannot extract")
    make_pdf(tea / "bad.pdf", ["Silver Needle is a white tea of Fujian."])
    retried = run_json("document", "retry", "bad.pdf", "--dataset", "tea")
    assert retried["status"] == "completed" and retried["segment_count"] == 1
    assert "bad.pdf" in run("search", "Silver Needle", "--dataset", "tea", "--method", "full_text").output
    # the older spelling, on a document with nothing to retry
    nothing = run("retry", "bad.pdf", "--dataset", "tea", code=1)
    assert "nothing to retry" in nothing.stderr


def test_show_lists_failed_chunks_and_retry_redoes_them(run, run_json, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    failing = {"on": True}

    def flaky(body: dict[str, Any]) -> Reply:
        if failing["on"] and "Shipping" in last_user_text(body):
            return Reply.status(500, "upstream exploded")
        return model_reply(body)

    handbook = tmp_path / "handbook.txt"
    handbook.write_text(HANDBOOK, encoding="utf-8")
    with ScriptedChatServer(flaky) as server:
        monkeypatch.setenv("ZHIKU_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("ZHIKU_LLM_MODEL", "scripted")
        monkeypatch.setenv("ZHIKU_LLM_MAX_RETRIES", "0")
        run("dataset", "create", "faq", "--doc-form", "qa_model")
        rule = ("--splitter", "fixed_separator", "--max-tokens", "200", "--chunk-overlap", "0")
        run("dataset", "update", "faq", *rule)
        run("ingest", str(handbook), "--dataset", "faq")

        shown = run_json("document", "show", "handbook.txt", "--dataset", "faq")
        assert shown["status"] == "completed_with_errors" and "1 chunk(s) not indexed" in shown["error"]
        [failure] = shown["failed_chunks"]
        assert "Shipping" in failure["content"] and "500" in failure["reason"]
        text = run("document", "show", "handbook.txt", "--dataset", "faq").output
        assert "1 failed chunk(s)" in text and f"#{failure['position']}: " in text

        failing["on"] = False
        assert run_json("document", "retry", "handbook.txt", "--dataset", "faq")["status"] == "completed"
        assert run_json("document", "show", "handbook.txt", "--dataset", "faq")["failed_chunks"] == []

    [pair] = run_json("segment", "list", "--dataset", "faq", "--keyword", "warehouse")["segments"]
    assert pair["answer"] == "Within two working days."
    edited = run_json("segment", "edit", pair["id"], "--dataset", "faq", "--answer", "The same day.")
    assert edited["answer"] == "The same day." and edited["content"] == pair["content"]
    assert "→ The same day." in run("search", "when do tea orders leave", "--dataset", "faq").output
