from __future__ import annotations

from zhiku.cleaners import DefaultCleaner

clean = DefaultCleaner().clean


def test_line_breaks_are_normalised() -> None:
    assert clean("一\r\n二\r三\f四\u2028五") == "一\n二\n三\n四\n五"


def test_control_characters_removed_but_tab_and_newline_kept() -> None:
    assert clean("a\x00b\x07c\x1bd\x7fe\x9ff\tg\nh") == "abcdef\tg\nh"


def test_surrogates_and_noncharacters() -> None:
    assert clean("笑\ud83d\ude00脸") == "笑😀脸"  # a pair left as two code points is joined
    assert clean("a\ud800b\udc00c\ufffed\uffff") == "abcd"


def test_zero_width_characters() -> None:
    assert clean("\ufeff知\u200b识\u200c库\u200d\u2060") == "知识库"


def test_three_or_more_blank_lines_become_two() -> None:
    assert clean("a\n\n\n\n\n\nb") == "a\n\n\nb"
    assert clean("a\n \n\t\n\n\nb") == "a\n\n\nb"
    assert clean("a\n\n\nb") == "a\n\n\nb"  # two blank lines stay


def test_chinese_and_normal_text_untouched() -> None:
    text = "知识库（Knowledge Base）：第一段。\n\n　　第二段，全角空格缩进。"
    assert clean(text) == text
