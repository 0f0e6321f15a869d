from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.make_files import make_text
from zhiku.core.errors import ExtractionError
from zhiku.extractors.txt import TextExtractor

TEXT = "第一行：知识库\r\nsecond line\r\n第三行。"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gbk", "utf-16", "utf-16-le"])
def test_reads_encodings_and_normalises_line_breaks(tmp_path: Path, encoding: str) -> None:
    path = make_text(tmp_path / "a.txt", TEXT, encoding=encoding)
    [doc] = TextExtractor().extract(path, name="a.txt")
    assert doc.text == "第一行：知识库\nsecond line\n第三行。"
    assert doc.metadata == {"source": "a.txt"}


def test_big5(tmp_path: Path) -> None:
    text = "繁體中文的知識庫文件，用於測試編碼偵測是否正確。"
    path = make_text(tmp_path / "b.txt", text, encoding="big5")
    assert TextExtractor().extract(path, name="b.txt")[0].text == text


def test_binary_garbage_named_txt(tmp_path: Path) -> None:
    path = tmp_path / "garbage.txt"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(ExtractionError, match=r"garbage\.txt.*not text"):
        TextExtractor().extract(path, name="garbage.txt")


def test_whitespace_only(tmp_path: Path) -> None:
    with pytest.raises(ExtractionError, match="w.txt"):
        TextExtractor().extract(b" \n\t\n", name="w.txt")


def test_missing_file_names_file_and_reason(tmp_path: Path) -> None:
    with pytest.raises(ExtractionError, match=r"gone\.txt: cannot read file"):
        TextExtractor().extract(tmp_path / "gone.txt", name="gone.txt")
