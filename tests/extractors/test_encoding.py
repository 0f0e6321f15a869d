from __future__ import annotations

import os

import pytest

from zhiku.core.errors import ExtractionError
from zhiku.extractors.encoding import decode_text, looks_like_text

SIMPLIFIED = "知识库是一种用于存储和检索信息的系统。我们在这里测试中文编码检测，包括简体字。"
TRADITIONAL = "知識庫是一種用於儲存和檢索資訊的系統。我們在這裡測試中文編碼偵測，包括繁體字。"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (SIMPLIFIED, "utf-8"),
        (SIMPLIFIED, "utf-8-sig"),
        (SIMPLIFIED, "gbk"),
        (SIMPLIFIED + "𠀀", "gb18030"),  # a character outside GBK
        (TRADITIONAL, "big5"),
        (SIMPLIFIED, "utf-16"),  # with BOM
        (SIMPLIFIED, "utf-16-le"),
        (SIMPLIFIED, "utf-16-be"),
        ("Plain English text, nothing more. " * 3, "utf-16-le"),
        ("Café, naïve, résumé and “quotes”.", "cp1252"),
    ],
)
def test_decodes_common_encodings(text: str, encoding: str) -> None:
    decoded, _ = decode_text(text.encode(encoding), "f.txt")
    assert decoded == text


def test_short_mixed_gbk_prefers_chinese_over_korean() -> None:
    data = "Hello 世界, this is a test. 数据集 dataset.\n".encode("gbk")
    assert decode_text(data, "f.txt")[0] == "Hello 世界, this is a test. 数据集 dataset.\n"


def test_binary_is_not_text() -> None:
    garbage = bytes(range(256)) * 8 + os.urandom(512)
    with pytest.raises(ExtractionError, match=r"f\.bin.*not text"):
        decode_text(garbage, "f.bin")
    assert not looks_like_text(garbage)


def test_looks_like_text_tolerates_a_character_cut_at_the_end() -> None:
    data = ("中文内容\n" * 50).encode("utf-8")
    assert looks_like_text(data[:-2])
    assert looks_like_text(("中文内容\n" * 50).encode("gbk")[:-1])


def test_short_big5_is_not_mistaken_for_utf16() -> None:
    text, encoding = decode_text("茶葉倉庫位於台北市大安區。".encode("big5"), "big5.txt")
    assert text == "茶葉倉庫位於台北市大安區。" and encoding == "big5"
