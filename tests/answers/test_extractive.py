"""The offline answerer quotes the sentence that answers, from the source it cites."""

from __future__ import annotations

from zhiku.answers.extractive import MAX_ANSWER_CHARS, ExtractiveAnswerer
from zhiku.answers.sources import Source

INTRO = "天主教会在越南有悠久的历史。"
BISHOP = "范廷颂于1963年被任为主教。"
BIRTH = "他出生于越南北部的一个村庄，父母都是农民，家中共有七个孩子，他排行第三。"
COVID = "The incubation period of COVID-19 is about five days. Most patients recover within two weeks."


def sources() -> list[Source]:
    return [
        Source(1, "seg-covid", "d1", "covid.md", "ds", 0, COVID, 0.9),
        Source(2, "seg-bishop", "d2", "bishop.md", "ds", 0, INTRO + BISHOP + BIRTH, 0.8),
    ]


def test_the_answering_sentence_is_quoted_and_cites_its_own_source() -> None:
    text, citations = ExtractiveAnswerer().answer("范廷颂是什么时候被任为主教的？", sources())
    assert "1963年被任为主教" in text
    assert [c.segment_id for c in citations] == ["seg-bishop"]
    assert "[2]" in text and "[1]" not in text
    assert len(text) <= MAX_ANSWER_CHARS + len("“”[2]…")


def test_english_question_words_outweigh_stop_words() -> None:
    text, citations = ExtractiveAnswerer().answer("What is the incubation period of COVID-19?", sources())
    assert text.startswith("“The incubation period of COVID-19 is about five days")
    assert "recover" not in text  # a neighbour sentence that does not answer is left out
    assert [c.number for c in citations] == [1]


def test_a_long_sentence_is_cut_to_a_window_around_the_question_words() -> None:
    filler = "这一段文字与问题无关，只是为了让句子变得很长，" * 20
    text = filler + "青海湖的面积约为四千五百平方公里" + filler
    long_source = Source(1, "seg", "d", "long.md", "ds", 0, text, 1.0)
    text, _ = ExtractiveAnswerer().answer("青海湖的面积有多大？", [long_source])
    assert "青海湖的面积约为四千五百平方公里" in text
    assert text.startswith("“…") and len(text) <= MAX_ANSWER_CHARS + len("“…”[1]…")


def test_no_shared_word_quotes_the_lead_of_a_clearly_relevant_top_source() -> None:
    text, citations = ExtractiveAnswerer().answer("zzz qqq", sources())
    assert text == "“The incubation period of COVID-19 is about five days.”[1]"
    assert [c.number for c in citations] == [1]


def test_weak_evidence_is_no_answer() -> None:
    """A best sentence covering little of the question, from sources retrieval found only weakly
    relevant, is not quoted: the caller says "not found" instead."""
    weak = [
        Source(1, "seg-covid", "d1", "covid.md", "ds", 0, COVID, 0.3),
        Source(2, "seg-bishop", "d2", "bishop.md", "ds", 0, INTRO + BISHOP + BIRTH, 0.25),
    ]
    assert ExtractiveAnswerer().answer("How many moons does Mars have?", weak) == ("", [])
    text, _ = ExtractiveAnswerer().answer("What is the incubation period of COVID-19?", weak)
    assert text.startswith("“The incubation period of COVID-19 is about five days")


def test_answers_are_quotations() -> None:
    text, _ = ExtractiveAnswerer().answer("范廷颂是什么时候被任为主教的？", sources())
    assert text.startswith("“") and text.endswith("”[2]")


def test_no_sources_no_answer() -> None:
    assert ExtractiveAnswerer().answer("anything", []) == ("", [])
