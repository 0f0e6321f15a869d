from __future__ import annotations

import pytest

from zhiku.cleaners import build_cleaners


def run(name: str, text: str) -> str:
    [cleaner] = build_cleaners([name])
    return cleaner.clean(text)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("clean_bullets", "● 第一点\n\n• second point\n正文", "第一点\n\nsecond point\n正文"),
        ("clean_ordered_bullets", "1.1 第一条\n2. 第二条\n\n普通行", "第一条\n第二条\n\n普通行"),
        ("clean_dashes", "知识库 - 说明\n第二行", "知识库   说明\n第二行"),
        ("clean_trailing_punctuation", "ITEM 1.\n中文句子。\nnext,", "ITEM 1\n中文句子。\nnext"),
        ("clean_extra_whitespace", "  a   b \n中文\u00a0\u00a0内容", "a b\n中文 内容"),
        ("clean_ligatures", "ﬁnancial 中文", "financial 中文"),
        ("replace_unicode_quotes", "\x93引用\x94", "“引用”"),
    ],
)
def test_rules_keep_lines_and_chinese(name: str, text: str, expected: str) -> None:
    assert run(name, text) == expected


def test_group_broken_paragraphs() -> None:
    text = "The big red fox\nis walking down the lane today.\n\n中文段落第一行\n中文段落第二行"
    assert run("group_broken_paragraphs", text) == (
        "The big red fox is walking down the lane today.\n\n中文段落第一行\n\n中文段落第二行"
    )
