from __future__ import annotations

import random
import re

import pytest

from zhiku.core.documents import Document
from zhiku.core.errors import ConfigError
from zhiku.splitters import RecursiveSplitter, TiktokenLength, splitters

ZH_SENTENCES = [
    "自然语言处理是人工智能的一个重要分支，它研究如何让计算机理解人类语言。",
    "检索增强生成把知识库和大模型结合起来！",
    "这样做真的有效吗？",
    "我们需要更多的中文数据来评估召回率和准确率。",
    "今天天气很好。",
]
EN_SENTENCES = [
    "The quick brown fox jumps over the lazy dog. ",
    "Retrieval augmented generation combines search with language models. ",
    "Does chunking matter for recall? ",
    "It does, and overlap helps! ",
]


def zh_paragraph(rng: random.Random, sentences: int) -> str:
    return "".join(rng.choice(ZH_SENTENCES) for _ in range(sentences))


def en_paragraph(rng: random.Random, sentences: int) -> str:
    return "".join(rng.choice(EN_SENTENCES) for _ in range(sentences)).strip()


def assert_valid(chunks: list, limit: int, length: TiktokenLength) -> None:
    assert chunks
    for chunk in chunks:
        assert chunk.content == chunk.content.strip() and chunk.content
        assert chunk.tokens == length(chunk.content)
        assert chunk.tokens <= limit
        assert "oversized" not in chunk.metadata
        assert "\ufffd" not in chunk.content


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_chinese_paragraph_without_newlines(length: TiktokenLength) -> None:
    text = zh_paragraph(random.Random(1), 120)
    chunks = RecursiveSplitter(max_tokens=100, chunk_overlap=0, length=length).split([Document(text)])
    assert_valid(chunks, 100, length)
    assert len(chunks) > 10
    assert "".join(c.content for c in chunks) == text  # nothing lost, nothing repeated
    assert all(c.content[-1] in "。！？" for c in chunks)  # cut at sentence ends, which stay attached
    assert all(c.tokens > 60 for c in chunks[:-1])  # merged greedily, not one sentence per chunk


def test_english_text(length: TiktokenLength) -> None:
    rng = random.Random(2)
    text = "\n\n".join(en_paragraph(rng, rng.randint(3, 25)) for _ in range(20))
    chunks = RecursiveSplitter(max_tokens=80, chunk_overlap=0, length=length).split([Document(text)])
    assert_valid(chunks, 80, length)
    assert squash("".join(c.content for c in chunks)) == squash(text)
    for chunk in chunks:
        assert chunk.content[0].isupper()  # no chunk starts inside a word or sentence
        assert chunk.content[-1] in ".?!"


def test_mixed_text_keeps_fitting_paragraphs_whole(length: TiktokenLength) -> None:
    rng = random.Random(3)
    paragraphs = [zh_paragraph(rng, 30)]  # Chinese first: the tokens-per-character guess runs high
    paragraphs += [en_paragraph(rng, 4) for _ in range(8)] + [zh_paragraph(rng, 2) for _ in range(4)]
    text = "\n\n".join(paragraphs)
    chunks = RecursiveSplitter(max_tokens=120, chunk_overlap=0, length=length).split([Document(text)])
    assert_valid(chunks, 120, length)
    for paragraph in paragraphs[1:]:
        assert length(paragraph) <= 120
        assert any(paragraph in c.content for c in chunks), paragraph  # never cut


def test_closing_quote_stays_with_its_sentence(length: TiktokenLength) -> None:
    text = "他说：“今天天气很好。”" * 30
    chunks = RecursiveSplitter(max_tokens=40, chunk_overlap=0, length=length).split_text(text)
    assert all(c.content.endswith("。”") for c in chunks)


@pytest.mark.parametrize(
    "run",
    [
        "https://example.com/docs/" + "/".join(f"section-{i}_part.html#anchor{i}" for i in range(150)),
        "我们今天讨论自然语言处理技术的发展历史和未来趋势以及龘龘靐齉" * 60,
        "a" * 5000,
    ],
    ids=["url", "cjk", "ascii"],
)
def test_unsplittable_run_is_cut_between_characters(run: str, length: TiktokenLength) -> None:
    chunks = RecursiveSplitter(max_tokens=50, chunk_overlap=0, length=length).split_text(run)
    assert len(chunks) > 3
    assert "".join(c.content for c in chunks) == run
    for chunk in chunks:
        assert chunk.tokens == length(chunk.content) <= 50
    assert all(c.tokens >= 45 for c in chunks[:-1])  # cuts are as late as the limit allows


def test_overlap_repeats_the_end_of_the_previous_chunk(length: TiktokenLength) -> None:
    sentences = [f"第{i}句话说明了检索的重要性。" for i in range(60)]
    sentences += [f"Sentence number {i} explains why recall matters. " for i in range(40)]
    text = "".join(sentences)
    chunks = RecursiveSplitter(max_tokens=100, chunk_overlap=40, length=length).split_text(text)
    assert len(chunks) > 5
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert current.tokens <= 100
        first = next(s.strip() for s in sentences if current.content.startswith(s.strip()))
        assert first in previous.content  # the chunk opens with text the previous one ends with
        overlap = max(
            (
                current.content[:k]
                for k in range(1, len(current.content))
                if previous.content.endswith(current.content[:k])
            ),
            key=len,
        )
        assert overlap.startswith(first)
        assert length(overlap) <= 40 + 1  # whole sentences summing to at most the overlap
        assert overlap != previous.content  # never the whole previous chunk
    without = RecursiveSplitter(max_tokens=100, chunk_overlap=0, length=length).split_text(text)
    assert len(without) < len(chunks)
    assert not any(b.content.split("。")[0] in a.content for a, b in zip(without, without[1:], strict=False))


def random_text(rng: random.Random) -> str:
    words = [
        "检索",
        "增强",
        "生成",
        "模型",
        "the",
        "fox",
        "jumps",
        "RAG",
        "3.14",
        "知识库",
        "龘",
        "🙂",
        "https://x.y/z",
    ]
    marks = ["。", "！", "？", "，", "、", ". ", ", ", " ", " ", "", "", "\n", "\n\n", "……", "”"]
    return "".join(rng.choice(words) + rng.choice(marks) for _ in range(rng.randint(0, 600)))


@pytest.mark.parametrize("seed", range(40))
def test_max_tokens_is_never_exceeded(seed: int, length: TiktokenLength) -> None:
    rng = random.Random(seed)
    limit = rng.choice([1, 2, 3, 4, 8, 16, 33, 64, 200])
    overlap = rng.randint(0, limit - 1)
    text = random_text(rng)
    splitter = RecursiveSplitter(max_tokens=limit, chunk_overlap=overlap, length=length)
    chunks = splitter.split_text(text)
    for chunk in chunks:
        assert chunk.content and chunk.content == chunk.content.strip()
        assert chunk.tokens == length(chunk.content)
        assert chunk.tokens <= limit or (chunk.oversized and len(chunk.content) == 1)
        assert chunk.content in text
    if overlap == 0:
        assert squash("".join(c.content for c in chunks)) == squash(text)


def test_verifies_sums_with_a_real_count() -> None:
    """A length that is not additive: the sum of the pieces underestimates the joined text."""

    def superadditive(text: str) -> int:
        return len(text) if len(text) <= 12 else len(text) * 3 // 2

    text = "短句。" * 200 + "abc def ghi " * 50
    chunks = RecursiveSplitter(max_tokens=30, chunk_overlap=6, length=superadditive).split_text(text)
    assert chunks
    for chunk in chunks:
        assert chunk.tokens == superadditive(chunk.content) <= 30


def test_character_length() -> None:
    """Any ``text -> int`` callable is a length function; ``len`` counts characters."""
    text = "一二三四五。六七八九十。" * 3
    chunks = RecursiveSplitter(max_tokens=10, chunk_overlap=0, length=len).split_text(text)
    assert [c.content for c in chunks] == ["一二三四五。", "六七八九十。"] * 3
    assert [c.tokens for c in chunks] == [6] * 6


def test_single_character_over_the_limit_is_flagged(length: TiktokenLength) -> None:
    assert length("龘") > 1
    chunks = RecursiveSplitter(max_tokens=1, chunk_overlap=0, length=length).split([Document("龘 ab")])
    assert [(c.content, c.metadata.get("oversized", False)) for c in chunks] == [("龘", True), ("ab", False)]


def test_positions_and_metadata_span_documents(length: TiktokenLength) -> None:
    rng = random.Random(6)
    documents = [
        Document(zh_paragraph(rng, 20), {"source": "a.pdf", "page": 1}),
        Document("   \n\n  ", {"source": "a.pdf", "page": 2}),
        Document(en_paragraph(rng, 20), {"source": "a.pdf", "page": 3}),
    ]
    chunks = RecursiveSplitter(max_tokens=60, chunk_overlap=10, length=length).split(documents)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    pages = [c.metadata["page"] for c in chunks]
    assert pages == sorted(pages) and set(pages) == {1, 3}
    assert all(c.metadata["source"] == "a.pdf" for c in chunks)
    chunks[0].metadata["page"] = 99
    assert documents[0].metadata["page"] == 1  # a copy, not the document's dict


def test_empty_and_whitespace_documents(length: TiktokenLength) -> None:
    splitter = RecursiveSplitter(length=length)
    assert splitter.split([]) == []
    assert splitter.split([Document(""), Document(" \n\n\t ")]) == []


def test_counts_each_text_about_twice(length: TiktokenLength) -> None:
    """Pieces are counted once and each chunk once more; no level re-counts the same text."""
    counted = 0

    def counting(text: str) -> int:
        nonlocal counted
        count = length(text)
        counted += count
        return count

    rng = random.Random(7)
    text = "\n".join(zh_paragraph(rng, 40) + en_paragraph(rng, 10) for _ in range(20))
    RecursiveSplitter(max_tokens=200, chunk_overlap=20, length=counting).split_text(text)
    assert counted < 2.4 * length(text)


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_sizes(max_tokens: int, overlap: int, length: TiktokenLength) -> None:
    with pytest.raises(ConfigError):
        RecursiveSplitter(max_tokens=max_tokens, chunk_overlap=overlap, length=length)


def test_registry(length: TiktokenLength) -> None:
    assert {"recursive", "fixed_separator"} <= set(splitters.names())
    splitter = splitters.factory("recursive")(max_tokens=64, chunk_overlap=8, separator="\n\n", length=length)
    assert isinstance(splitter, RecursiveSplitter) and splitter.max_tokens == 64
