"""The dataset tokenizer: jieba search mode for Chinese, lower-cased words, stop words, user dicts."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from zhiku.core.errors import ConfigError
from zhiku.text.tokenizer import BIGRAM_MARK, DEFAULT_STOP_WORDS, Tokenizer


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


def test_chinese_search_mode_adds_inner_words(tokenizer: Tokenizer) -> None:
    tokens = tokenizer.tokenize("我在北京大学学习")
    assert {"北京", "大学", "北京大学", "学习"} <= set(tokens)
    assert "我" not in tokens and "在" not in tokens  # default stop words


def test_english_digits_and_punctuation(tokenizer: Tokenizer) -> None:
    assert tokenizer.tokenize("The Running DOGS, of 2024!") == ["running", "dogs", "2024"]
    tokens = tokenizer.tokenize("iPhone 15 售价5999元！COVID-19 café")
    assert tokens == ["iphone", "15", "售价", "5999", "元", "covid", "19", "café"]
    assert tokenizer.tokenize("，。！？ ... \n\t") == []
    assert tokenizer.tokenize("") == []


def test_repeats_are_kept(tokenizer: Tokenizer) -> None:
    assert tokenizer.tokenize("tea tea 茶 tea") == ["tea", "tea", "茶", "tea"]


def test_stop_words_can_be_replaced() -> None:
    keep_all = Tokenizer(stop_words=[])
    assert keep_all.tokenize("the cat 的") == ["the", "cat", "的"]
    custom = Tokenizer(stop_words=["Cat"])
    assert custom.tokenize("the cat sat") == ["the", "sat"]


def test_user_dictionary_stays_with_its_tokenizer(tmp_path: Path, tokenizer: Tokenizer) -> None:
    words = tmp_path / "words.txt"
    words.write_text("知库引擎 100 n\n", encoding="utf-8")
    with_dict = Tokenizer(user_dict=words)
    assert "知库引擎" in with_dict.tokenize("知库引擎支持混合检索")
    assert "知库引擎" not in tokenizer.tokenize("知库引擎支持混合检索")
    assert "知库引擎" not in Tokenizer().tokenize("知库引擎支持混合检索")


def test_bad_user_dictionary_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        Tokenizer(user_dict=tmp_path / "missing.txt")
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="invalid"):
        Tokenizer(user_dict=broken)


def test_settings_round_trip(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("知库引擎\n", encoding="utf-8")
    original = Tokenizer(user_dict=words, stop_words=["支持"], hmm=False, han_bigrams=True)
    settings = json.loads(json.dumps(original.settings()))
    rebuilt = Tokenizer.from_settings(settings)
    text = "知库引擎支持混合检索 and BM25"
    assert rebuilt.tokenize(text) == original.tokenize(text)
    assert rebuilt.terms(text) == original.terms(text) != original.tokenize(text)
    assert "支持" not in rebuilt.tokenize(text)
    assert Tokenizer.from_settings({}).settings()["stop_words"] == sorted(DEFAULT_STOP_WORDS)
    assert not Tokenizer.from_settings({}).han_bigrams  # settings stored before the option: no pairs


def test_terms_add_pairs_of_chinese_characters_that_tokens_cut_apart() -> None:
    pairs = Tokenizer(han_bigrams=True)
    question, answer = "孕妇怎么用药，这种病能治吗", "服用药物：这种病不能治愈。Rest"
    assert "用药" in pairs.tokenize(question) and "病能治" in pairs.tokenize(question)
    assert not {"能治", "用药"} & set(pairs.tokenize(answer))  # 服用 / 药物, 不能 / 治愈
    shared = set(pairs.terms(question)) & set(pairs.terms(answer))
    assert {BIGRAM_MARK + "用药", BIGRAM_MARK + "能治"} <= shared
    assert pairs.terms(answer)[: len(pairs.tokenize(answer))] == pairs.tokenize(answer)  # tokens first
    assert pairs.terms("茶") == ["茶"] and pairs.terms("tea cups") == ["tea", "cups"]
    assert pairs.terms("绿茶绿茶") == ["绿茶", "绿茶", *(BIGRAM_MARK + p for p in ("绿茶", "茶绿", "绿茶"))]
    assert Tokenizer().terms(question) == Tokenizer().tokenize(question)  # off by default


def test_thread_safe(tokenizer: Tokenizer) -> None:
    texts = [f"第{i}个段落讲向量检索和全文检索 paragraph {i}" for i in range(200)]
    expected = [Tokenizer().tokenize(t) for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(tokenizer.tokenize, texts)) == expected


def _tokens_in_fresh_process(directory: Path) -> list[str]:
    """Chinese tokens from a new interpreter whose default Lexicon is kept in ``directory``."""
    program = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from zhiku.text import tokenizer\n"
        "tokenizer.keep_lexicon_in(Path(sys.argv[1]))\n"
        "print(json.dumps(tokenizer.Tokenizer().tokenize('会员积分的有效期是多久？中华人民共和国')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(directory)], capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout))


def test_the_default_lexicon_is_stored_once_and_read_back_the_same(tmp_path: Path) -> None:
    built = _tokens_in_fresh_process(tmp_path)
    [stored] = tmp_path.glob("jieba-*-lexicon-py*.marshal")
    assert built == Tokenizer().tokenize("会员积分的有效期是多久？中华人民共和国")
    written = stored.stat().st_mtime_ns
    assert _tokens_in_fresh_process(tmp_path) == built and stored.stat().st_mtime_ns == written
    stored.write_bytes(b"not a lexicon")  # a damaged file is rebuilt, not trusted
    assert _tokens_in_fresh_process(tmp_path) == built and stored.stat().st_size > 1_000_000
