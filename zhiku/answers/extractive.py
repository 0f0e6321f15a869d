"""The offline answerer: the source sentences that best match the question, quoted and cited.

No model, no network: it answers when no chat model is configured, and its answers are honest by
construction — every sentence is copied from the source its ``[n]`` names, inside quotation marks,
so it reads as the quotation it is. A sentence is scored by
how much of the question it covers: IDF-weighted question words (jieba for Chinese, so "主教"
outweighs "什么"), blended with character-bigram overlap (which catches what word segmentation
splits differently), times a prior for the source's retrieval rank. The best sentence is kept with
its neighbours in the same source while they fit :data:`MAX_ANSWER_CHARS`, so the answer reads as
a passage rather than a fragment.

It abstains (answers nothing, so the caller says "not found") when its best sentence covers too
little of the question (:data:`MIN_EVIDENCE`) and no source is clearly relevant by its retrieval
relevance (:data:`LEAD_RELEVANCE`): a quote that does not answer is worse than none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from zhiku.answers.citations import citations_of
from zhiku.answers.sentences import Sentence, split_sentences
from zhiku.answers.sources import Source
from zhiku.answers.types import Citation
from zhiku.text.keywords import idf
from zhiku.text.tokenizer import Tokenizer

#: An answer longer than this is no longer a quote but a copy of the source.
MAX_ANSWER_CHARS = 200
#: At most this many consecutive sentences make an answer.
MAX_SENTENCES = 3
#: Weight of IDF-weighted word coverage against character-bigram coverage in a sentence's score.
WORD_WEIGHT = 0.7
#: How fast trust in a source falls with its rank: the prior is 1 / (1 + RANK_DECAY * (n - 1)).
RANK_DECAY = 0.15
#: A neighbour sentence joins the answer if it scores at least this share of the best one, or if
#: the best sentence is too short to stand alone (:data:`MIN_STANDALONE_CHARS`).
NEIGHBOUR_SHARE = 0.5
MIN_STANDALONE_CHARS = 24
#: The least a best sentence must score (its share of the question covered, times the rank prior)
#: to be quoted as an answer.
MIN_EVIDENCE = 0.25
#: A source this relevant (retrieval relevance) is quoted from its opening when no sentence covers
#: the question well: it matched by meaning, which word overlap cannot see.
LEAD_RELEVANCE = 0.5

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class _Candidate:
    source: Source
    index: int  # the sentence's place in its source
    score: float


class ExtractiveAnswerer:
    """Answers with the best-matching source sentences; see the module docstring."""

    name = "extractive"

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self._tokenizer = tokenizer or Tokenizer()

    def answer(self, question: str, sources: Sequence[Source]) -> tuple[str, list[Citation]]:
        """The answer text with one ``[n]`` per quoted span, and its citations; ``("", [])``
        when there are no sources."""
        if not sources:
            return "", []
        words = self._weighted_words(question)
        bigrams = _bigrams(question)
        split = {source.number: split_sentences(source.text) for source in sources}
        best: _Candidate | None = None
        for rank, source in enumerate(sources):
            prior = 1.0 / (1.0 + RANK_DECAY * rank)
            for index, sentence in enumerate(split[source.number]):
                score = prior * self._score(sentence.text, words, bigrams)
                if best is None or score > best.score:
                    best = _Candidate(source, index, score)
        if best is None or best.score < MIN_EVIDENCE:
            if sources[0].score < LEAD_RELEVANCE:
                return "", []
            return self._lead(sources[0], split[sources[0].number])
        sentences = split[best.source.number]
        chosen = self._with_neighbours(best, sentences, words, bigrams)
        text = self._quote(best.source, chosen, words)
        return text, citations_of(text, sources)

    def _weighted_words(self, text: str) -> dict[str, float]:
        return {word: idf(word) for word in set(self._tokenizer.tokenize(text))}

    def _score(self, sentence: str, words: dict[str, float], bigrams: set[str]) -> float:
        lowered = _fold(sentence)
        word_total = sum(words.values())
        word_part = 0.0
        if word_total > 0:
            word_part = sum(weight for word, weight in words.items() if word in lowered) / word_total
        bigram_part = len(bigrams & _bigrams(sentence)) / len(bigrams) if bigrams else 0.0
        return WORD_WEIGHT * word_part + (1.0 - WORD_WEIGHT) * bigram_part

    def _with_neighbours(
        self,
        best: _Candidate,
        sentences: list[Sentence],
        words: dict[str, float],
        bigrams: set[str],
    ) -> list[Sentence]:
        """The best sentence and the adjacent ones worth adding, in source order."""
        first = last = best.index
        length = len(sentences[best.index].text)
        best_raw = self._score(sentences[best.index].text, words, bigrams)
        while last - first + 1 < MAX_SENTENCES:
            options = [i for i in (first - 1, last + 1) if 0 <= i < len(sentences)]
            fitting = [i for i in options if length + len(sentences[i].text) <= MAX_ANSWER_CHARS]
            if not fitting:
                break
            pick = max(fitting, key=lambda i: self._score(sentences[i].text, words, bigrams))
            wanted = self._score(sentences[pick].text, words, bigrams) >= NEIGHBOUR_SHARE * best_raw
            if not wanted and length >= MIN_STANDALONE_CHARS:
                break
            if not wanted:
                pick = last + 1 if last + 1 in fitting else pick  # a short sentence reads on forward
            first, last = min(first, pick), max(last, pick)
            length += len(sentences[pick].text)
        return sentences[first : last + 1]

    def _quote(self, source: Source, chosen: list[Sentence], words: dict[str, float]) -> str:
        """``chosen`` as they stand in the source (one span), cut to a window around the question's
        words when longer than :data:`MAX_ANSWER_CHARS`, with the source's marker."""
        span = source.text[chosen[0].start : chosen[-1].end].strip()
        if len(span) > MAX_ANSWER_CHARS:
            span = _window(span, words)
        return _cite(span, source.number)

    def _lead(self, source: Source, sentences: list[Sentence]) -> tuple[str, list[Citation]]:
        """No sentence covers the question well, but the top source is clearly relevant: quote its
        opening, which retrieval found for reasons (meaning) lexical overlap cannot see."""
        if not sentences:
            return "", []
        text = sentences[0].text
        if len(text) > MAX_ANSWER_CHARS:
            text = text[:MAX_ANSWER_CHARS].rstrip() + "…"
        text = _cite(text, source.number)
        return text, citations_of(text, [source])


def _cite(text: str, number: int) -> str:
    """``text`` in quotation marks, then ``[number]``: a quotation, cited."""
    return f"“{text}”[{number}]"


def _window(span: str, words: dict[str, float]) -> str:
    """The :data:`MAX_ANSWER_CHARS` characters of ``span`` holding the most question-word weight,
    with ``…`` where text was cut."""
    lowered = _fold(span)
    weight_at = [0.0] * (len(span) + 1)
    for word, weight in words.items():
        for match in re.finditer(re.escape(word), lowered):
            weight_at[match.start()] += weight
    best_start, best_weight = 0, -1.0
    window = sum(weight_at[:MAX_ANSWER_CHARS])
    for start in range(0, max(1, len(span) - MAX_ANSWER_CHARS + 1)):
        if start:
            window += weight_at[start + MAX_ANSWER_CHARS - 1] - weight_at[start - 1]
        if window > best_weight:
            best_start, best_weight = start, window
    # Start a little before the window's first match, so the answer opens with some context.
    first = next(
        (i for i in range(best_start, best_start + MAX_ANSWER_CHARS) if i < len(span) and weight_at[i] > 0),
        best_start,
    )
    end = min(len(span), max(0, first - MAX_ANSWER_CHARS // 10) + MAX_ANSWER_CHARS)
    start = max(0, end - MAX_ANSWER_CHARS)
    piece = span[start:end].strip()
    return ("…" if start > 0 else "") + piece + ("…" if end < len(span) else "")


def _fold(text: str) -> str:
    """Lower-cased NFKC text, for matching question words against a sentence."""
    return unicodedata.normalize("NFKC", text).lower()


def _bigrams(text: str) -> set[str]:
    """Character bigrams of the Chinese runs and words of the rest (stop words included: they
    carry little weight in a set this small, and English questions are mostly function words)."""
    folded = _fold(text)
    found: set[str] = set(_WORD.findall(folded))
    run: list[str] = []
    for char in folded + " ":
        if _CJK.match(char):
            run.append(char)
            continue
        found.update(a + b for a, b in zip(run, run[1:], strict=False))
        run = []
    return found

