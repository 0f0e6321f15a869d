"""SearchCutter gives exactly jieba's ``cut_for_search`` tokens, with and without HMM."""

from __future__ import annotations

import random
from pathlib import Path

import jieba
import pytest

from zhiku.demo.runner import corpus_files
from zhiku.text.search_cut import Lexicon, SearchCutter
from zhiku.text.tokenizer import _HAN_BLOCK, _default_prefix_dict

#: Characters for random blocks: common Han characters, and the ASCII jieba keeps inside a block.
_ALPHABET = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种"
    "面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本"
    "患者医生血压头痛发烧咳嗽检查治疗药物北京大学清华研究所机器学习向量检索全文"
    "abcXYZ019+#&._%-"
)


@pytest.fixture(scope="module")
def jieba_tokenizer() -> jieba.Tokenizer:
    freq, total = _default_prefix_dict()
    instance = jieba.Tokenizer()
    instance.FREQ, instance.total = freq, total
    instance.initialized = True
    return instance


def _blocks() -> list[str]:
    texts = []
    for path in corpus_files():
        if path.suffix in (".txt", ".md"):
            texts.append(path.read_text(encoding="utf-8"))
    texts += [
        "我在北京大学学习",
        "iPhone15售价5999元",
        "COVID-19患者的血压为120/80mmHg",
        "T恤B超X光",
        "中华人民共和国国务院总理",
        "研究生命起源",
        "结婚的和尚未结婚的",
        "他说的确实在理",
    ]
    blocks = [match.group() for text in texts for match in _HAN_BLOCK.finditer(text)]
    rng = random.Random(7)
    blocks += ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    return blocks


@pytest.mark.parametrize("hmm", [True, False])
def test_same_tokens_as_jieba(jieba_tokenizer: jieba.Tokenizer, hmm: bool) -> None:
    cutter = SearchCutter(Lexicon.from_frequencies(jieba_tokenizer.FREQ, jieba_tokenizer.total), hmm=hmm)
    for block in _blocks():
        assert cutter.cut(block) == list(jieba_tokenizer.cut_for_search(block, HMM=hmm)), block


def test_same_tokens_with_a_user_dictionary(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("知库引擎 100 n\n混合检索 50\n", encoding="utf-8")
    freq, total = _default_prefix_dict()
    instance = jieba.Tokenizer()
    instance.FREQ, instance.total = dict(freq), total
    instance.initialized = True
    instance.load_userdict(str(words))
    cutter = SearchCutter(Lexicon.from_frequencies(instance.FREQ, instance.total))
    for block in ["知库引擎支持混合检索", "知库引擎", "用知库引擎做混合检索的实验"]:
        assert cutter.cut(block) == list(instance.cut_for_search(block)), block
    assert "知库引擎" in cutter.cut("知库引擎支持混合检索")


def test_lexicon_marks_prefixes_and_words() -> None:
    lexicon = Lexicon.from_frequencies({"北": 10, "北京": 30, "北京大": 0, "北京大学": 5}, total=100)
    assert lexicon.log_probs["北京大"] is None
    assert lexicon.log_probs["北京"] == pytest.approx(-1.2039728)
    assert "南" not in lexicon.log_probs
