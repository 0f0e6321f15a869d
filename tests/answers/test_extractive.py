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


RECORD = (
    "编号: QS-202\n名称: 武夷大红袍\nEnglish name: Wuyi Da Hong Pao\n茶类: 乌龙茶\n产地: 福建武夷山\n"
    "规格: 125克罐装\n价格（元）: 368\n风味: 岩骨花香，焙火足"
)


def record_sources() -> list[Source]:
    return [
        Source(1, "seg-record", "d1", "products.csv", "ds", 4, RECORD, 0.2),
        Source(2, "seg-covid", "d2", "covid.md", "ds", 0, COVID, 0.01),
    ]


def test_a_record_answers_with_the_field_asked_for_beside_its_subject() -> None:
    """The name line matches the question best, but the price line is what it asks for."""
    text, citations = ExtractiveAnswerer().answer("武夷大红袍多少钱？", record_sources())
    assert text == "“名称: 武夷大红袍 … 价格（元）: 368”[1]"
    assert [c.number for c in citations] == [1]
    text, _ = ExtractiveAnswerer().answer("武夷大红袍产自哪里？", record_sources())
    assert "产地: 福建武夷山" in text and "368" not in text
    text, _ = ExtractiveAnswerer().answer("How much is the Wuyi Da Hong Pao?", record_sources())
    assert text == "“English name: Wuyi Da Hong Pao … 价格（元）: 368”[1]"


def test_a_record_asked_about_as_a_whole_is_quoted_whole() -> None:
    text, _ = ExtractiveAnswerer().answer("What is QS-202?", record_sources())
    assert text == f"“{RECORD}”[1]"


def test_a_price_field_does_not_answer_for_something_else() -> None:
    """ "多少钱" is answered by a price only for what the question names."""
    assert ExtractiveAnswerer().answer("火星车多少钱？", record_sources()) == ("", [])
    assert ExtractiveAnswerer().answer("How much is a Mars rover?", record_sources()) == ("", [])


SHIPPING = (
    "运费是多少？多久能收到？\n中国大陆地区单笔订单满199元包邮。各地区的预计时效和运费如下：\n"
    "配送地区 | 预计时效 | 运费（未满包邮时）\n江浙沪 | 1-2天 | 8元\n新疆、西藏 | 5-7天 | 20元"
)


def test_a_table_row_is_read_with_its_header_even_from_a_barely_relevant_source() -> None:
    """Retrieval relevance is tiny on a small corpus: the row itself is the evidence."""
    faq = [Source(1, "seg-faq", "d1", "faq.html", "ds", 0, SHIPPING, 0.0066)]
    text, _ = ExtractiveAnswerer().answer("另外，寄到新疆要几天？", faq)
    assert text == "“配送地区 | 预计时效 | 运费（未满包邮时） … 新疆、西藏 | 5-7天 | 20元”[1]"


def test_rows_of_a_table_cut_from_its_header_are_rows_too() -> None:
    rows = "新疆、西藏 | 5-7天 | 20元\n香港、澳门、台湾 | 5-8天 | 60元\n海外 | 7-15天 | 按重量计算"
    faq = [Source(1, "seg-faq", "d1", "faq.html", "ds", 1, rows, 0.0055)]
    text, _ = ExtractiveAnswerer().answer("寄到香港要多久？", faq)
    assert text == "“香港、澳门、台湾 | 5-8天 | 60元”[1]"


GUIDE = (
    "## Green tea\n\nBrew green tea with water at 80°C. Never pour boiling water onto it: it\n"
    "scalds the tender leaves. Use 3 grams of leaf for 150 ml of water and steep for 2\n"
    "minutes.\n\n## Black tea\n\nBlack tea takes fully boiling water. Steep it for 3 to 4 minutes."
)


def test_a_sentence_is_read_under_its_heading_and_a_duration_answers_how_long() -> None:
    """ "steep for 2 minutes" says neither "green" nor "how long": its heading says the one, its
    value the other; the heading itself answers nothing."""
    guide = [Source(1, "seg-guide", "d1", "guide.md", "ds", 0, GUIDE, 0.05)]
    text, _ = ExtractiveAnswerer().answer("How long do I steep green tea?", guide)
    assert "steep for 2 minutes" in text and "Black" not in text and "##" not in text


def test_a_wrapped_sentence_is_quoted_whole_on_one_line() -> None:
    guide = [Source(1, "seg-guide", "d1", "guide.md", "ds", 0, GUIDE, 0.05)]
    text, _ = ExtractiveAnswerer().answer("What does boiling water do to green tea leaves?", guide)
    assert "Never pour boiling water onto it: it scalds the tender leaves." in text


def test_a_question_in_the_source_is_quoted_with_its_answer() -> None:
    """An FAQ's question matches best; what follows it is the answer, however long the question."""
    faq_text = (
        "智能温控壶屏幕上显示的故障代码 E07 是什么意思，应该怎样处理？\nE07 表示壶内无水，壶已自动停止加热。"
    )
    faq = [Source(1, "seg-faq", "d1", "faq.html", "ds", 0, faq_text, 0.02)]
    text, _ = ExtractiveAnswerer().answer("温控壶屏幕显示 E07 是什么意思？", faq)
    assert "E07 表示壶内无水" in text


def test_the_heading_before_a_short_sentence_is_not_quoted() -> None:
    guide = [Source(1, "seg-guide", "d1", "guide.md", "ds", 0, GUIDE, 0.05)]
    text, _ = ExtractiveAnswerer().answer("What temperature for green tea?", guide)
    assert text.startswith("“Brew green tea with water at 80°C.") and "##" not in text


def test_no_sentence_of_a_two_sentence_heading_is_quoted() -> None:
    """An FAQ page's question heading ("### Shipping cost? Delivery time?") is a heading in both its
    sentences: the answer is what stands under it."""
    faq_text = "### 运费是多少？多久能收到？\n\n中国大陆地区单笔订单满199元包邮，一般2-4天送达。"
    faq = [Source(1, "seg-faq", "d1", "faq.html", "ds", 0, faq_text, 0.02)]
    text, _ = ExtractiveAnswerer().answer("多久能收到？", faq)
    assert "2-4天送达" in text and "###" not in text and not text.startswith("“多久能收到")


def test_a_number_answers_how_many_for_what_the_question_names() -> None:
    """Both sources name the gardens; the lower-ranked one holds the count asked for."""
    grow, count = "The partner gardens grow green and white teas.", "There are 23 partner gardens."
    about = [
        Source(1, "seg-grow", "d1", "history.md", "ds", 0, grow, 0.02),
        Source(2, "seg-count", "d1", "history.md", "ds", 1, count, 0.02),
    ]
    text, _ = ExtractiveAnswerer().answer("How many partner gardens are there?", about)
    assert text == "“There are 23 partner gardens.”[2]"
    stores = [
        Source(1, "seg-tasting", "d1", "stores.md", "ds", 0, "杭州门店每天都提供免费试饮。", 0.02),
        Source(2, "seg-count", "d1", "stores.md", "ds", 1, "杭州现有3家门店。", 0.02),
    ]
    text, _ = ExtractiveAnswerer().answer("杭州门店有几家？", stores)
    assert text == "“杭州现有3家门店。”[2]"
