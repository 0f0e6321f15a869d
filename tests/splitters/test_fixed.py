from __future__ import annotations

import pytest

from zhiku.core.documents import Document
from zhiku.core.errors import ConfigError
from zhiku.splitters import FixedSeparatorSplitter, TiktokenLength, splitters
from zhiku.splitters.fixed import unescape_separator


def test_escaped_newline_separator_gives_one_chunk_per_line(length: TiktokenLength) -> None:
    text = "问：退货政策是什么？\n答：七天无理由退货。\n\n问：运费谁付？\nShipping is free over 99 yuan."
    splitter = FixedSeparatorSplitter(separator="\\n", max_tokens=100, chunk_overlap=10, length=length)
    assert splitter.separator == "\n"
    chunks = splitter.split([Document(text, {"source": "faq.txt"})])
    assert [c.content for c in chunks] == [
        "问：退货政策是什么？",
        "答：七天无理由退货。",
        "问：运费谁付？",
        "Shipping is free over 99 yuan.",
    ]  # small pieces are not merged, blank ones dropped, the separator removed
    assert [c.position for c in chunks] == [0, 1, 2, 3]
    assert all(c.metadata == {"source": "faq.txt"} for c in chunks)
    assert all(c.tokens == length(c.content) for c in chunks)


def test_long_piece_is_split_recursively_within_its_bounds(length: TiktokenLength) -> None:
    long_piece = "".join(f"第{i}条规定适用于所有的会员用户。" for i in range(40))
    text = f"开头一段。***{long_piece}***结尾一段。"
    splitter = FixedSeparatorSplitter(separator="***", max_tokens=60, chunk_overlap=20, length=length)
    chunks = splitter.split_text(text)
    assert chunks[0].content == "开头一段。" and chunks[-1].content == "结尾一段。"
    middle = chunks[1:-1]
    assert len(middle) > 3
    assert all(c.content in long_piece and c.tokens <= 60 for c in middle)
    last_sentence = middle[0].content.split("。")[-2] + "。"
    assert middle[1].content.startswith(last_sentence)  # overlap inside the piece


def test_unescape_separator() -> None:
    assert unescape_separator("\\n\\n") == "\n\n"
    assert unescape_separator("\\t") == "\t"
    assert unescape_separator("\\\\n") == "\\n"  # an escaped backslash stays a backslash
    assert unescape_separator("。") == "。"
    assert unescape_separator("\n") == "\n"


def test_empty_separator_is_refused(length: TiktokenLength) -> None:
    with pytest.raises(ConfigError):
        FixedSeparatorSplitter(separator="", length=length)


def test_registry(length: TiktokenLength) -> None:
    splitter = splitters.factory("fixed_separator")(
        separator="\\n", max_tokens=50, chunk_overlap=0, length=length
    )
    assert isinstance(splitter, FixedSeparatorSplitter)
    assert [c.content for c in splitter.split([Document("a\nb")])] == ["a", "b"]
