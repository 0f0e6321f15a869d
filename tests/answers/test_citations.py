"""Citations: shapes normalised, unknown numbers dropped, uncited copied sentences credited."""

from __future__ import annotations

import re

from zhiku.answers.citations import (
    StreamedCitations,
    drop_unknown,
    finish,
    normalise,
    repair,
    strip_markers,
)
from zhiku.answers.sources import Source

LEAVE = "员工每年享有十五天带薪年假，需要提前两周向主管提交申请。"
OFFICE = "The Shanghai office opens at 9am and closes at 6pm on weekdays."


def sources() -> list[Source]:
    return [
        Source(1, "seg-leave", "doc-a", "handbook.md", "ds", 3, LEAVE, 0.9),
        Source(2, "seg-office", "doc-b", "offices.md", "ds", 0, OFFICE, 0.7),
    ]


def test_every_shape_becomes_a_bracket_number() -> None:
    text = "甲【1】乙(ID:2)丙（来源：1）丁[^2]戊[1, 2]己[来源2]庚[source 1]"
    assert normalise(text) == "甲[1]乙[2]丙[1]丁[2]戊[1][2]己[2]庚[1]"


def test_a_marker_naming_no_source_is_removed_not_repointed() -> None:
    assert drop_unknown("年假十五天[3]。开门时间[2][2]。[0]", sources()) == "年假十五天。开门时间[2]。"


def test_an_uncited_copied_sentence_is_credited_before_its_full_stop() -> None:
    text, added = repair("年假有多少？员工每年享有十五天带薪年假。", sources())
    assert text == "年假有多少？员工每年享有十五天带薪年假[1]。"
    assert added == {1}


def test_a_sentence_sharing_only_topic_words_is_not_credited() -> None:
    text, added = repair("年假制度因公司而异，各地规定也不同。", sources())
    assert added == set()
    assert text == "年假制度因公司而异，各地规定也不同。"


def test_english_sentences_are_credited_by_words() -> None:
    text, added = repair("The Shanghai office opens at 9am on weekdays. Thanks!", sources())
    assert text == "The Shanghai office opens at 9am on weekdays[2]. Thanks!"
    assert added == {2}


def test_finish_marks_only_citations_that_repair_alone_added() -> None:
    text, citations = finish(
        "年假十五天【1】。The Shanghai office opens at 9am and closes at 6pm.", sources()
    )
    assert text == "年假十五天[1]。The Shanghai office opens at 9am and closes at 6pm[2]."
    assert [(c.number, c.segment_id, c.repaired) for c in citations] == [
        (1, "seg-leave", False),
        (2, "seg-office", True),
    ]


def test_finish_without_repair_keeps_uncited_sentences_uncited() -> None:
    text, citations = finish(OFFICE, sources(), repair_uncited=False)
    assert (text, citations) == (OFFICE, [])


def test_strip_markers() -> None:
    assert strip_markers("年假十五天[1][2]。") == "年假十五天。"


def streamed(pieces: list[str]) -> list[str]:
    """What a stream of ``pieces`` hands on, piece by piece (the end of the stream last)."""
    citations = StreamedCitations(sources())
    return [*(citations.feed(piece) for piece in pieces), citations.close()]


def test_a_marker_of_a_nonexistent_source_split_across_pieces_is_never_handed_on() -> None:
    handed = streamed(["年假十五天[1]", "[", "9]。"])
    assert handed == ["年假十五天[1]", "", "。", ""]


def test_streamed_text_is_finished_text_however_the_pieces_fall() -> None:
    texts = [
        "甲【1】乙(ID:2)丙（来源：1）丁[^2]戊[1, 2]己[来源2]庚[source 1]",
        "年假十五天[3]。开门时间[2][2]。[0]",
        "[[9]9] and [1[9]] (see the notes) [2",
        "价格(2023年)为[12]元[1，9]，（ID：9）见【来源 2】。[",
    ]
    for text in texts:
        final, _ = finish(text, sources(), repair_uncited=False)
        one_by_one = streamed(list(text))
        assert "".join(one_by_one) == final, text
        for cut in range(len(text) + 1):
            handed = streamed([text[:cut], text[cut:]])
            assert "".join(handed) == final, (text, cut)


def test_no_handed_on_text_names_an_unknown_source() -> None:
    for text in ["[[9]9]", "[[[9]9]9]", "[1][[9]1]", "【[9]3】"]:
        joined = "".join(streamed(list(text)))
        assert all(int(n) in (1, 2) for n in re.findall(r"\[(\d{1,3})\]", joined)), (text, joined)


def test_text_that_cannot_be_a_marker_is_not_held_back() -> None:
    citations = StreamedCitations(sources())
    assert citations.feed("开门时间(") == "开门时间"
    assert citations.feed("see the notes) ") == "(see the notes) "
    assert citations.feed("[1") == ""
    assert citations.feed("] done") == "[1] done"


def test_a_marker_after_the_full_stop_cites_the_sentence_before_it() -> None:
    """Models often cite after the punctuation; repair must not add a second marker inside."""
    for text in (f"{LEAVE}[1]", f"{LEAVE} [1] Thanks!", "The Shanghai office opens at 9am on weekdays. [2]"):
        assert repair(text, sources()) == (text, set())


def test_a_sentence_opening_with_the_previous_ones_marker_is_still_repaired() -> None:
    text, added = repair("年假有多少？[1]The Shanghai office opens at 9am on weekdays.", sources())
    assert text == "年假有多少？[1]The Shanghai office opens at 9am on weekdays[2]."
    assert added == {2}
