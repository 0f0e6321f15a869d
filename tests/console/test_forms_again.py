"""Every console form refused field by field: the form shown again (400) with the message beside
the refused input, in the page's language, what was typed kept and escaped; the JSON answer for
the script stays the API's ``invalid_param`` naming the field."""

from __future__ import annotations

import re
from html import unescape

from tests.console.conftest import Console

SCRIPT = "<script>alert('x')</script>"


def _beside(page: str, form: str, name: str) -> str:
    """The message beside input ``name`` of form ``form`` (the input marked invalid too)."""
    found = re.search(rf'id="error-{form}-{re.escape(name)}"[^>]*>([^<]+)<', page)
    assert found, f"no error beside {form}/{name}"
    assert f'aria-describedby="error-{form}-{name}"' in page
    return unescape(found[1])


def _value(page: str, name: str) -> str:
    found = re.search(rf'<input[^>]*? name="{re.escape(name)}"[^>]*? value="([^"]*)"', page)
    assert found, name
    return unescape(found[1])


def test_creating_a_dataset_refuses_beside_the_field(console: Console) -> None:
    console.create_dataset("taken")
    for form, field, message in (
        ({"name": "", "description": SCRIPT}, "name", "required"),
        ({"name": "n" * 10_000}, "name", "at most 255 characters"),
        ({"name": "taken"}, "name", "this name is taken"),
        ({"name": "ok", "description": "d" * 10_001}, "description", "at most 10000 characters"),
        ({"name": "ok", "embedding_model": "no-such-model"}, "embedding_model", ""),
    ):
        response = console.post("/datasets", form)
        page = response.get_data(as_text=True)
        assert response.status_code == 400, form
        assert _beside(page, "create", field).startswith(message), page
        assert "<script>alert" not in page
        if "description" in form and field != "description":
            assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</textarea>" in page
    kept = console.post("/datasets", {"name": "n" * 10_000}).get_data(as_text=True)
    assert _value(kept, "name") == "n" * 10_000
    zh = console.post("/datasets", {"name": ""}, headers={"Accept-Language": "zh-CN"})
    assert _beside(zh.get_data(as_text=True), "create", "name") == "必填"
    json = console.post("/datasets", {"name": ""}, headers={"Accept": "application/json"})
    assert json.status_code == 400 and json.json["message"] == "name: required"  # type: ignore[index]


def test_settings_refuse_beside_the_field_and_keep_everything_typed(console: Console) -> None:
    dataset = console.create_dataset("settings")
    console.create_dataset("taken")
    typed = {
        "name": SCRIPT,
        "description": "typed description",
        "separator": "\\n\\n",
        "max_tokens": "300",
        "chunk_overlap": "20",
        "splitter": "fixed_separator",
        "doc_form": "paragraph",
        "cleaners": ["remove_urls_emails"],
        "search_method": "full_text_search",
        "top_k": "7",
        "score_threshold": "0.4",
    }
    for wrong, field, message in (
        ({"top_k": "seven"}, "top_k", "a whole number"),
        ({"max_tokens": "5"}, "max_tokens", "between 16 and 8192"),
        ({"score_threshold": "2"}, "score_threshold", "between 0 and 1"),
        ({"weight_semantic": "heavy"}, "weight_semantic", "a number"),
        ({"name": ""}, "name", "required"),
        ({"name": "taken"}, "name", "this name is taken"),
    ):
        response = console.post(f"/datasets/{dataset}/settings", {**typed, **wrong})
        page = response.get_data(as_text=True)
        assert response.status_code == 400, wrong
        assert _beside(page, "settings", field) == message
        for name, value in {**typed, **wrong}.items():
            if name in ("description", "splitter", "doc_form", "cleaners", "search_method"):
                continue
            assert _value(page, name) == value, name
        assert ">typed description</textarea>" in page
        assert '<option value="fixed_separator" selected>' in page
        assert '<option value="full_text_search" selected>' in page
        assert 'value="remove_urls_emails" checked' in page
        assert "<script>alert" not in page
    saved = console.post(f"/datasets/{dataset}/settings", typed)
    assert saved.status_code == 302
    zh = console.post(
        f"/datasets/{dataset}/settings", {**typed, "top_k": "x"}, headers={"Accept-Language": "zh-CN"}
    )
    assert _beside(zh.get_data(as_text=True), "settings", "top_k") == "须为整数"


def test_metadata_fields_refuse_beside_the_field(console: Console) -> None:
    dataset = console.create_dataset("fields")
    assert (
        console.post(
            f"/datasets/{dataset}/fields", {"action": "add", "name": "year", "type": "number"}
        ).status_code
        == 302
    )
    for form, message in (
        ({"action": "add", "name": "", "type": "string"}, "required"),
        ({"action": "add", "name": "x" * 10_000, "type": "time"}, "at most 255 characters"),
        ({"action": "add", "name": "year", "type": "string"}, "this name is taken"),
        ({"action": "add", "name": "document_name", "type": "string"}, "this name is taken"),
    ):
        response = console.post(f"/datasets/{dataset}/fields", form)
        page = response.get_data(as_text=True)
        assert response.status_code == 400, form
        assert _beside(page, "add-field", "name") == message
        assert f'value="{form["type"]}" selected' in page
    console.post(f"/datasets/{dataset}/fields", {"action": "add", "name": "region", "type": "string"})
    page = console.get(f"/datasets/{dataset}/settings").get_data(as_text=True)
    region = re.search(r'name="field_id" value="([^"]+)"><input name="name" value="region"', page)
    assert region
    renamed = console.post(
        f"/datasets/{dataset}/fields", {"action": "rename", "field_id": region[1], "name": SCRIPT + "year"}
    )
    assert renamed.status_code == 302
    clash = console.post(
        f"/datasets/{dataset}/fields", {"action": "rename", "field_id": region[1], "name": "year"}
    )
    page = clash.get_data(as_text=True)
    assert clash.status_code == 400 and _beside(page, f"rename-{region[1]}", "name") == "this name is taken"
    assert f'value="{region[1]}"><input name="name" value="year"' in page  # as typed, in its own row
    assert "<script>alert" not in page


def test_hit_testing_filters_refuse_beside_the_row_in_the_pages_language(console: Console) -> None:
    dataset = console.create_dataset("filters")
    console.post(f"/datasets/{dataset}/fields", {"action": "add", "name": "year", "type": "number"})
    console.post(f"/datasets/{dataset}/fields", {"action": "add", "name": "published", "type": "time"})
    base = {"query": SCRIPT, "filter_0_name": "year", "filter_0_op": "≥"}
    for extra, field, en, zh in (
        ({"filter_0_value": "recent"}, "filter_0_value", "a number", "须为数字"),
        (
            {"filter_0_op": "contains", "filter_0_value": "2"},
            "filter_0_op",
            "this operator does not apply to this field",
            "此运算符不适用于该字段",
        ),
        (
            {"filter_0_name": "published", "filter_0_op": "before", "filter_0_value": "soon"},
            "filter_0_value",
            "a date such as 2025-01-31",
            "须为日期，如 2025-01-31",
        ),
        ({"filter_0_value": ""}, "filter_0_value", "this operator needs a value", "此运算符需要一个值"),
        ({"top_k": "0", "filter_0_value": "1"}, "top_k", "between 1 and 100", "须在 1 到 100 之间"),
    ):
        form = {**base, **extra}
        page = console.post(f"/datasets/{dataset}/hit-testing", form).get_data(as_text=True)
        assert _beside(page, "hit", field) == en, extra
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</textarea>" in page
        if "filter_0_value" in form and form["filter_0_value"]:
            assert _value(page, "filter_0_value") == form["filter_0_value"]
        chinese = console.post(
            f"/datasets/{dataset}/hit-testing", form, headers={"Accept-Language": "zh-CN"}
        ).get_data(as_text=True)
        assert _beside(chinese, "hit", field) == zh


def test_a_settings_refusal_of_no_input_shown_beside_shows_above_the_form(console: Console) -> None:
    dataset = console.create_dataset("whole")
    page = console.post(
        f"/datasets/{dataset}/settings", {"name": "whole", "doc_form": "<b>bold</b>", "chunk_overlap": "3"}
    ).get_data(as_text=True)
    message = re.search(r'id="settings-error">([^<]+)<', page)
    assert message and message[1].startswith("one of "), page
    assert _value(page, "chunk_overlap") == "3" and "<b>bold" not in page
