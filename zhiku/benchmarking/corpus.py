"""The benchmark corpus: N distinct bilingual segments and a list of queries.

Text comes from the bundled demo corpus, so the benchmark runs the same on any checkout; an
evaluation-set directory (``*/corpus.jsonl``) can be named instead with ``eval_dir``. Passages are
cut at sentence ends into segments of at most about :data:`SEGMENT_TOKENS` tokens; when more
segments are asked for than the text holds, the rest are written by a word-level Markov chain
trained on that text, one chain per language (seeded, so every run builds the same corpus): its
sentences keep the text's vocabulary and word statistics, which is what BM25, keyword postings
and the index sizes depend on, and there are enough of them for a million distinct segments.
Segments hold no blank line, so a file of segments joined by blank lines splits back into
exactly those segments.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from zhiku.core.errors import InvalidInput, ZhikuError

#: Rough upper bound, in cl100k tokens, of a segment cut from a passage.
SEGMENT_TOKENS = 300
#: Segments per file written by :func:`write_corpus`.
SEGMENTS_PER_FILE = 100

_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=[.])\s+")
_SPACES = re.compile(r"\s+")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_MIN_SENTENCE_CHARS = 8


@dataclass
class BenchCorpus:
    """Segments (one paragraph each, no blank lines) and queries to time searches with."""

    texts: list[str]
    queries: list[str]
    source: str
    recombined: int


def build_corpus(segments: int, queries: int, *, seed: int = 0, eval_dir: Path | None = None) -> BenchCorpus:
    """``segments`` distinct texts and ``queries`` queries; deterministic for a given ``seed``.

    Raises InvalidInput for a count below 1, or when the text cannot give that many segments.
    """
    if segments < 1 or queries < 1:
        raise InvalidInput("segments and queries must be positive")
    sets = sorted(p.parent for p in eval_dir.glob("*/corpus.jsonl")) if eval_dir and eval_dir.is_dir() else []
    if sets:
        pieces_by_set = [list(_pieces(_jsonl_texts(s / "corpus.jsonl"))) for s in sets]
        pieces = list(_round_robin(pieces_by_set))
        query_sets = [_jsonl_texts(s / "queries.jsonl") for s in sets if (s / "queries.jsonl").is_file()]
        query_texts = list(_round_robin(query_sets))
        source = "evaluation sets " + ", ".join(s.name for s in sets)
    else:
        pieces = list(_pieces(_demo_texts()))
        query_texts = []
        source = "bundled demo corpus sentences"
    rng = random.Random(seed)
    texts = list(dict.fromkeys(pieces))[:segments]
    recombined = segments - len(texts)
    if recombined:
        texts.extend(_generate(_sentence_pools(pieces), recombined, set(texts), rng))
    if len(query_texts) < queries:
        sampled = rng.sample(texts, min(len(texts), queries - len(query_texts)))
        query_texts.extend(text[:40] for text in sampled)
    return BenchCorpus(texts=texts, queries=query_texts[:queries], source=source, recombined=recombined)


def write_corpus(texts: Sequence[str], directory: Path, per_file: int = SEGMENTS_PER_FILE) -> list[Path]:
    """Write ``texts`` as UTF-8 ``.txt`` files of ``per_file`` paragraphs separated by blank lines."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, start in enumerate(range(0, len(texts), per_file)):
        path = directory / f"part-{number:05d}.txt"
        path.write_text("\n\n".join(texts[start : start + per_file]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def _jsonl_texts(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in lines if line.strip()]


def _demo_texts() -> list[str]:
    from zhiku.demo.runner import corpus_files
    from zhiku.extractors import extract

    texts: list[str] = []
    for path in corpus_files():
        try:
            texts.extend(document.text for document in extract(path, path.name))
        except ZhikuError:
            continue
    return texts


def _round_robin(lists: Sequence[Sequence[str]]) -> Iterator[str]:
    for position in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if position < len(items):
                yield items[position]


def _tokens(text: str) -> float:
    """cl100k tokens, roughly: one per Chinese character, one per four other characters."""
    han = len(_HAN.findall(text))
    return han + (len(text) - han) / 4


def _sentences(text: str) -> list[str]:
    flat = _SPACES.sub(" ", text).strip()
    return [s.strip() for s in _SENTENCE_END.split(flat) if s and len(s.strip()) >= _MIN_SENTENCE_CHARS]


def _pieces(texts: Sequence[str]) -> Iterator[str]:
    """Each text cut at sentence ends into runs of at most about SEGMENT_TOKENS tokens."""
    for text in texts:
        run: list[str] = []
        size = 0.0
        for sentence in _sentences(text):
            cost = _tokens(sentence)
            if run and size + cost > SEGMENT_TOKENS:
                yield _join(run)
                run, size = [], 0.0
            run.append(sentence)
            size += cost
        if run:
            yield _join(run)


def _join(sentences: Sequence[str]) -> str:
    return "".join(s if _HAN.search(s[-1:]) or s[-1:] in "。！？；" else s + " " for s in sentences).strip()


def _sentence_pools(pieces: Sequence[str]) -> list[list[str]]:
    """Sentences grouped by language (Chinese, other), empty groups left out."""
    chinese: list[str] = []
    other: list[str] = []
    for piece in pieces:
        for sentence in _sentences(piece):
            (chinese if _HAN.search(sentence) else other).append(sentence)
    return [pool for pool in (chinese, other) if pool]


def _generate(
    pools: Sequence[Sequence[str]], count: int, seen: set[str], rng: random.Random
) -> Iterator[str]:
    """``count`` new texts of 2-4 Markov sentences of one language, none equal to one in ``seen``."""
    if count > 0 and not pools:
        raise InvalidInput("no sentences to build benchmark segments from")
    chains = [_Chain(pool) for pool in pools]
    made = misses = 0
    while made < count:
        chain = chains[made % len(chains)]
        text = _join([chain.sentence(rng) for _ in range(rng.randint(2, 4))])
        if text in seen:
            misses += 1
            if misses > count + 1000:  # a chain this repetitive cannot fill the corpus
                raise InvalidInput(f"too few distinct sentences to make {count} benchmark segments")
            continue
        seen.add(text)
        made += 1
        yield text


class _Chain:
    """A first-order Markov chain over the words of some sentences (jieba words for Chinese)."""

    #: Words after which a generated sentence is ended even without a full stop.
    MAX_WORDS = 48

    def __init__(self, sentences: Sequence[str]) -> None:
        import jieba

        self._chinese = bool(_HAN.search("".join(sentences[:50])))
        self._starts: list[str] = []
        self._next: dict[str, list[str]] = {}
        for sentence in sentences:
            words = [w for w in (jieba.lcut(sentence) if self._chinese else sentence.split()) if w.strip()]
            if not words:
                continue
            self._starts.append(words[0])
            for word, following in zip(words, [*words[1:], ""], strict=True):
                self._next.setdefault(word, []).append(following)

    def sentence(self, rng: random.Random) -> str:
        words = [rng.choice(self._starts)]
        while len(words) < self.MAX_WORDS:
            following = rng.choice(self._next.get(words[-1], [""]))
            if not following:
                break
            words.append(following)
        text = ("" if self._chinese else " ").join(words)
        return text if text[-1:] in "。！？；.!?;" else text + ("。" if self._chinese else ".")
