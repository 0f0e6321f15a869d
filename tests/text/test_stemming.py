"""Stemmers for the words outside Chinese text: plural folding (default) and Snowball English."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from zhiku.core.errors import ConfigError
from zhiku.text.stemming import make_stemmer, plural_stem
from zhiku.text.tokenizer import Tokenizer


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("studies", "study"),  # -ies → -y
        ("cells", "cell"),
        ("diseases", "disease"),  # -es → -e: the s only
        ("virus", "virus"),  # -us and -ss are no plurals
        ("class", "class"),
        ("does", "does"),  # -oes, -aes, -ees, -ies after a vowel kept
        ("ties", "ty"),
        ("patients", "patient"),
        ("covid19s", "covid19s"),  # not letters only: left alone
        ("cafés", "cafés"),
        ("is", "is"),  # shorter than 3
    ],
)
def test_plural_stem(word: str, stem: str) -> None:
    assert plural_stem(word) == stem


def test_the_tokenizer_stems_words_outside_chinese_only() -> None:
    plural = Tokenizer(stemmer="plural")
    assert plural.tokenize("Cells and Studies of 新冠病毒 viruses, 2 variants") == [
        "cell", "study", "新冠", "病毒", "viruse", "2", "variant",  # -es → -e, as "virus" is not
    ]
    assert plural.tokenize("iPhones售价") == ["iphone", "售价"]  # ASCII inside a Chinese block
    english = Tokenizer(stemmer="english")
    assert english.tokenize("infected infection infects") == ["infect", "infect", "infect"]
    assert Tokenizer().tokenize("cells studies") == ["cells", "studies"]  # none: as written


def test_stop_words_are_matched_before_stemming() -> None:
    assert Tokenizer(stemmer="plural", stop_words=["cells"]).tokenize("cells cell") == ["cell"]


def test_the_stemmer_is_part_of_the_settings() -> None:
    settings = Tokenizer(stemmer="english").settings()
    assert settings["stemmer"] == "english"
    assert Tokenizer.from_settings(settings).tokenize("studies") == ["studi"]
    assert Tokenizer.from_settings({}).stemmer is None  # datasets from before stemming keep their tokens


def test_unknown_stemmer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown stemmer 'klingon'"):
        Tokenizer(stemmer="klingon")
    with pytest.raises(ValueError, match="klingon"):
        make_stemmer("klingon")


def test_snowball_from_many_threads() -> None:
    tokenizer = Tokenizer(stemmer="english")
    texts = [f"running jumps {i} connections connected" for i in range(300)]
    expected = [["run", "jump", str(i), "connect", "connect"] for i in range(300)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(tokenizer.tokenize, texts)) == expected
