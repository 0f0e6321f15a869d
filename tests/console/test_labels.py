"""Readable labels instead of identifiers: every setting, choice and status has a label and a
one-line explanation in English and Chinese, no page shows a raw identifier, a document's error
is said by its kind (the raw text kept under Details), and the hit-testing history runs a query
again with the method it ran with, across a restart."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from flask import Flask

from tests.api.conftest import context_of, make_app
from tests.console.conftest import Console
from tests.fixtures.make_files import make_truncated_pdf
from zhiku.api.plugins import plugin_names
from zhiku.cleaners.registry import cleaners
from zhiku.console.error_kinds import KINDS, UNKNOWN, error_kind
from zhiku.console.forms import CHANNELS, FILTER_MESSAGES, SEARCH_METHODS
from zhiku.console.i18n import ZH
from zhiku.console.labels import LABELS, label_of
from zhiku.core.document_status import DocumentStatus
from zhiku.core.metadata import BUILTIN_FIELDS, OPERATORS
from zhiku.fusion.registry import fusion_modes
from zhiku.index_processors import index_processors
from zhiku.splitters import splitters

#: Identifiers a page must never show as text (those that are not also English words).
IDENTIFIERS = tuple(
    identifier
    for identifier in (
        *SEARCH_METHODS,
        *fusion_modes(),
        *plugin_names(index_processors),
        *plugin_names(splitters),
        *[name for name in plugin_names(cleaners) if name != "default"],
        "un_archive",
        "completed_with_errors",
        "top_k",
        "recall_k",
        "max_tokens",
        "doc_form",
        "full_text",
        "document_name",
        "last_update_date",
    )
    if "_" in identifier
)
SETTINGS = (
    "search_method",
    "hybrid_methods",
    "fusion",
    "rerank_model",
    "weights",
    "top_k",
    "recall_k",
    "score_threshold",
    "reorder",
    "cleaners",
    "splitter",
    "separator",
    "max_tokens",
    "chunk_overlap",
    "doc_form",
    "index_method",
    "summary",
    "parent_mode",
    "child_max_tokens",
    "child_separator",
)


def _visible(page: str) -> str:
    """The page's text as read: no tags (so no attribute values), entities decoded."""
    body = page.split("<body>", 1)[1]
    return unescape(re.sub(r"<[^>]+>", " ", body))


def test_every_identifier_a_page_may_show_has_a_label_and_every_setting_an_explanation() -> None:
    shown = (
        *SEARCH_METHODS,
        *CHANNELS,
        *fusion_modes(),
        *plugin_names(index_processors),
        *plugin_names(splitters),
        *plugin_names(cleaners),
        *OPERATORS,
        *BUILTIN_FIELDS,
        *(status.value for status in DocumentStatus),
        "un_archive",
        "archive",
        "retry",
    )
    assert not [identifier for identifier in shown if identifier not in LABELS]
    assert not [name for name in SETTINGS if not LABELS[name].hint]
    assert "from 0 to 1" in LABELS["score_threshold"].hint and "relevance" in LABELS["score_threshold"].hint
    assert label_of("my_own_cleaner").text == "My own cleaner"  # a plugin's: readable all the same


def test_every_label_explanation_and_error_kind_has_chinese() -> None:
    texts = {text for label in LABELS.values() for text in label if re.search("[A-Za-z]", text)}
    texts |= {message for _, message in KINDS} | {UNKNOWN}
    assert not sorted(texts - set(ZH))


def test_form_error_messages_have_chinese_with_the_same_values() -> None:
    source = (Path(__file__).parents[2] / "zhiku" / "console" / "forms.py").read_text()
    templates = set(re.findall(r'FormError\([^,]+, "([^"]+)"', source)) - {"filter"}
    templates |= {message for _, message in FILTER_MESSAGES}
    assert templates
    for template in templates:
        assert template in ZH, template
        assert sorted(re.findall(r"%\((\w+)\)s", ZH[template])) == sorted(
            re.findall(r"%\((\w+)\)s", template)
        )


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (
            "cannot extract broken.pdf: corrupt or truncated PDF (PDFium: data format error)",
            "The file is damaged or truncated.",
        ),
        (
            "cannot extract scan.pdf: no text layer (scanned? needs OCR)",
            "The PDF has no text layer (scanned?); it needs OCR first.",
        ),
        ("cannot extract a.pdf: PDF is encrypted (a password is required)", "The file is encrypted."),
        ("unsupported file type: blob.bin", "This file type is not supported."),
        ("cannot extract e.txt: empty file", "The file is empty."),
        (
            "time limit at parsing (document_time_limit 600 s)",
            "Indexing took longer than the time limit per document.",
        ),
        (
            "re-indexing failed, the previous version is still served: boom",
            "Re-indexing failed; the previous version is still served.",
        ),
        ("3 chunk(s) not indexed: chunk 1: timeout", "Some chunks could not be indexed."),
        (
            "big.txt: 90,000 segments, over the limit of 50,000 a document may have"
            " (setting max_segments_per_document)",
            "The document makes more segments than a document may have.",
        ),
        ("something nobody foresaw", UNKNOWN),
    ],
)
def test_document_errors_are_said_by_their_kind(error: str, kind: str) -> None:
    assert error_kind(error) == kind


def test_no_page_shows_an_identifier_and_errors_show_their_kind(console: Console, tmp_path: Path) -> None:
    dataset = console.create_dataset("labels")
    console.post(f"/datasets/{dataset}/fields", {"action": "builtin", "enabled": "on"})
    broken = make_truncated_pdf(tmp_path / "broken.pdf", ["this file was cut in half"])
    response = console.post(
        f"/datasets/{dataset}/upload",
        {"file": (broken.open("rb"), "broken.pdf")},
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 200
    console.add_text(dataset, "tea.txt", "Longjing is a green tea.")
    rows = console.wait_indexed(dataset)
    assert "The file is damaged or truncated." in rows and "corrupt or truncated PDF" in rows  # raw kept
    pages = {
        path: console.get(path).get_data(as_text=True)
        for path in (
            "/datasets",
            f"/datasets/{dataset}",
            f"/datasets/{dataset}/settings",
            f"/datasets/{dataset}/hit-testing",
        )
    }
    pages["run"] = console.post(f"/datasets/{dataset}/hit-testing", {"query": "green tea"}).get_data(
        as_text=True
    )
    for lang in ("en", "zh"):
        headers = {"Accept-Language": "zh-CN" if lang == "zh" else "en"}
        for path, sent in pages.items():
            page = console.get(path, headers=headers).get_data(as_text=True) if path != "run" else sent
            text = _visible(page)
            found = [
                identifier
                for identifier in IDENTIFIERS
                if re.search(rf"(?<![\w-]){identifier}(?![\w-])", text)
            ]
            assert not found, (lang, path, found)
    zh_hit = _visible(
        console.get(f"/datasets/{dataset}/hit-testing", headers={"Accept-Language": "zh-CN"}).get_data(
            as_text=True
        )
    )
    for chinese in ("不包含", "开头是", "为空", "早于", "文档名称", "混合检索", "最低相关度，取值 0 到 1"):
        assert chinese in zh_hit, chinese
    zh_rows = console.get(f"/datasets/{dataset}", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    assert "文件已损坏或不完整。" in zh_rows and "可用" in zh_rows and "失败" in zh_rows


def test_a_recent_query_runs_again_with_its_method_after_a_restart(
    app: Flask, console: Console, tmp_path: Path, secret: str
) -> None:
    dataset = console.create_dataset("history")
    console.add_text(dataset, "oolong.txt", "Tieguanyin is an oolong tea from Anxi.")
    console.wait_indexed(dataset)
    ran = console.post(
        f"/datasets/{dataset}/hit-testing", {"query": "oolong from Anxi", "search_method": "full_text_search"}
    )
    assert ran.status_code == 200
    context_of(app).close()
    restarted = make_app(tmp_path / "home")
    try:
        again = Console(restarted.test_client())
        again.sign_in(secret)
        page = again.get(f"/datasets/{dataset}/hit-testing").get_data(as_text=True)
        history = page.split('id="history"')[1]
        assert 'name="query" value="oolong from Anxi"' in history
        assert 'name="search_method" value="full_text_search"' in history and "Full-text search" in history
        result = again.post(
            f"/datasets/{dataset}/hit-testing",
            {"action": "again", "query": "oolong from Anxi", "search_method": "full_text_search"},
        ).get_data(as_text=True)
        assert 'class="hit"' in result and "oolong.txt" in result
        assert '<option value="full_text_search" selected>' in result
        assert 'data-channel="semantic"' not in result  # run as it was: full text alone
        assert "oolong from Anxi</textarea>" in result
    finally:
        context_of(restarted).close()


def test_a_deleted_dataset_takes_its_history_with_it(app: Flask, console: Console) -> None:
    from sqlalchemy import func, select

    from zhiku.core.db.models import HitTestQueryRow

    dataset = console.create_dataset("short-lived")
    console.post(f"/datasets/{dataset}/hit-testing", {"query": "anything"})
    sessions = context_of(app).kb.sessions
    count = select(func.count()).select_from(HitTestQueryRow).where(HitTestQueryRow.dataset_id == dataset)
    with sessions() as session:
        assert session.scalar(count) == 1
    assert console.post(f"/datasets/{dataset}/delete").status_code == 302
    assert context_of(app).kb.wait_for_deletions(timeout=60)  # its rows go in the background
    with sessions() as session:
        assert session.scalar(count) == 0
