from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.bounded import CountingToken
from tests.fixtures.make_files import make_docx
from zhiku.core.cancellation import cancellable
from zhiku.core.errors import Cancelled, ExtractionError
from zhiku.extractors.docx import DocxExtractor


def test_headings_paragraphs_and_table(tmp_path: Path) -> None:
    path = make_docx(
        tmp_path / "manual.docx",
        title="产品手册",
        intro=["这是简介。Introduction."],
        sections=[("安装 Install", ["运行安装程序。"]), ("价格", ["价格如下表之前已列出。"])],
        table=[["名称", "价格"], ["苹果", "5 元"]],
    )
    docs = DocxExtractor().extract(path, name="manual.docx")
    assert [d.text for d in docs] == [
        "# 产品手册\n\n这是简介。Introduction.",
        "# 安装 Install\n\n运行安装程序。\n\n名称 | 价格\n苹果 | 5 元",
        "# 价格\n\n价格如下表之前已列出。",
    ]
    assert [d.metadata["headings"] for d in docs] == [["产品手册"], ["安装 Install"], ["价格"]]
    assert {d.metadata["title"] for d in docs} == {"产品手册"}


def test_not_a_docx(tmp_path: Path) -> None:
    with pytest.raises(ExtractionError, match=r"bad\.docx: invalid DOCX"):
        DocxExtractor().extract(b"PK\x03\x04 not really a zip", name="bad.docx")


def test_a_long_table_reaches_checkpoints(tmp_path: Path) -> None:
    rows = [["名称", "价格"], *([f"茶{n}", str(n)] for n in range(50))]
    path = make_docx(tmp_path / "t.docx", sections=[("价格", ["表"])], table=rows)
    token = CountingToken(after=20)
    with cancellable(token), pytest.raises(Cancelled):
        DocxExtractor().extract(path, name="t.docx")
    assert token.checks == 20
