"""Sentences: a line wrapped in a PDF or a hard-wrapped paragraph does not end one."""

from __future__ import annotations

from zhiku.answers.sentences import split_sentences, unwrap

WRAPPED_EN = (
    "Oolong wants hot water, 95°C (203°F). For gongfu brewing, fill a 110 ml gaiwan one third full of\n"
    "leaves (about 7 grams), rinse them for 5 seconds and pour the rinse away, then steep for 20\n"
    "seconds. Tightly rolled oolongs open slowly."
)
WRAPPED_ZH = (
    "瓷器和玻璃茶具在运输中破损的，请在签收后48小时内把外包装和破损商品的照片发送给\n"
    "客服，我们将免费补发同款商品，无需寄回破损件。"
)


def texts(text: str) -> list[str]:
    return [sentence.text for sentence in split_sentences(text)]


def test_a_wrapped_english_sentence_is_one_sentence() -> None:
    found = split_sentences(WRAPPED_EN)
    assert len(found) == 3
    middle = found[1]
    assert middle.text == WRAPPED_EN[middle.start : middle.end]
    assert unwrap(WRAPPED_EN, middle.start, middle.end) == (
        "For gongfu brewing, fill a 110 ml gaiwan one third full of leaves (about 7 grams), rinse them "
        "for 5 seconds and pour the rinse away, then steep for 20 seconds."
    )


def test_a_wrapped_chinese_line_joins_without_a_space() -> None:
    assert unwrap(WRAPPED_ZH) == WRAPPED_ZH.replace("\n", "")
    assert len(split_sentences(WRAPPED_ZH)) == 1


def test_titles_lists_fields_and_table_rows_keep_their_line_breaks() -> None:
    title = "范廷颂\n范廷颂枢机（1919年6月15日—2009年2月22日），是越南罗马天主教枢机。"
    assert texts(title)[0] == "范廷颂"
    assert texts("First Complete Genome Sequence of a Bovine coronavirus Strain\nText: The strain was") == [
        "First Complete Genome Sequence of a Bovine coronavirus Strain",
        "Text: The strain was",
    ]
    listed = "- **The tea is bitter.** Lower the water temperature or shorten the steeping time, and\n- retry"
    assert len(texts(listed)) == 2
    record = "名称: 武夷大红袍\nEnglish name: Wuyi Da Hong Pao\n茶类: 乌龙茶"
    assert texts(record) == record.split("\n")
    table = "配送地区 | 预计时效 | 运费（未满包邮时）\n江浙沪 | 1-2天 | 8元"
    assert len(texts(table)) == 2
