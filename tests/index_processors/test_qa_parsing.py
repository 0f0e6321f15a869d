from zhiku.index_processors.qa_parsing import QAPair, parse_qa_pairs


def test_numbered_pairs_with_blank_lines_and_trailing_remark() -> None:
    reply = "Q1: What is zhiku?\nA1: A knowledge base.\n\nQ2: Who uses it?\nA2: Teams.\n\nHope this helps!"
    parsed = parse_qa_pairs(reply)
    assert parsed.pairs == [QAPair("What is zhiku?", "A knowledge base."), QAPair("Who uses it?", "Teams.")]
    assert parsed.problems == []


def test_full_width_colons_and_chinese_markers() -> None:
    reply = "Q1：年假有几天？\nA1：十天。\n问：茶园在哪里？\n答：在青山。\n问题3：几点开门？\n答案3：八点。"
    parsed = parse_qa_pairs(reply)
    assert [p.question for p in parsed.pairs] == ["年假有几天？", "茶园在哪里？", "几点开门？"]
    assert [p.answer for p in parsed.pairs] == ["十天。", "在青山。", "八点。"]


def test_markdown_bold_list_numbering_and_question_words() -> None:
    reply = "1. **Q1:** First?\n   **A1:** One.\n- Question 2: Second?\n  Answer 2: Two."
    assert parse_qa_pairs(reply).pairs == [QAPair("First?", "One."), QAPair("Second?", "Two.")]


def test_multi_line_answer_is_kept_whole() -> None:
    reply = "Q1: How to apply?\nA1: Fill in the form,\nthen send it to HR."
    assert parse_qa_pairs(reply).pairs[0].answer == "Fill in the form,\nthen send it to HR."


def test_unpaired_markers_are_reported_not_invented() -> None:
    parsed = parse_qa_pairs("A0: an answer first\nQ1: a question\nQ2: another?\nA2: yes\nQ3: dangling?")
    assert parsed.pairs == [QAPair("another?", "yes")]
    assert len(parsed.problems) == 3
    assert any("answer without a question" in p for p in parsed.problems)
    assert any("dangling?" in p for p in parsed.problems)


def test_plain_prose_gives_no_pairs() -> None:
    parsed = parse_qa_pairs("I cannot help with that. A model answer like this has no pairs.")
    assert parsed.pairs == []
