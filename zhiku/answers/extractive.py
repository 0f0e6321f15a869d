"""The offline answerer: the source sentences that best match the question, quoted and cited.

No model, no network: it answers when no chat model is configured, and its answers are honest by
construction — every sentence is copied from the source its ``[n]`` names, inside quotation marks,
so it reads as the quotation it is. A sentence is scored by
how much of the question it covers: IDF-weighted question words (jieba for Chinese, so "主教"
outweighs "什么"), blended with character-bigram overlap (which catches what word segmentation
splits differently), times a prior for the source's retrieval rank. The best sentence is kept with
its neighbours in the same source while they fit :data:`MAX_ANSWER_CHARS`, so the answer reads as
a passage rather than a fragment.

Structured text is read as the unit it is. A record (consecutive ``key: value`` lines, as a CSV row
or a spec sheet is indexed) is one candidate, scored as a whole, since every line is about the same
subject; a table row is scored with its table's header. A field whose name is what the question asks
for (价格 for 多少钱, origin for "where … from", see :data:`FIELDS`) counts as covering those question
words, and the quote is the record's subject line with the fields asked for — the price, not the
name line that merely matches best. A value of the shape asked for (a duration for 多久 / how long,
see :data:`VALUES`) counts the same way in any sentence; both count only where the text also names
something else the question names, so a price never answers for another product.

A sentence under a markdown heading is read with part of it (:data:`HEADING_CREDIT`): "steep for
2 minutes" under "## Green tea" answers how long to steep green tea. Headings themselves answer
nothing, and an answer does not run on into the next section. A question in the source (an FAQ) is
quoted with the sentence after it, which answers it.

It abstains (answers nothing, so the caller says "not found") when its best sentence covers too
little of the question (:data:`MIN_EVIDENCE`) and no source is clearly relevant by its retrieval
relevance (:data:`LEAD_RELEVANCE`): a quote that does not answer is worse than none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zhiku.answers.citations import citations_of
from zhiku.answers.sentences import Sentence, split_sentences, unwrap
from zhiku.answers.source_structure import Block, Line, blocks_of, heading_spans, headings_of, join_lines
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
#: The share of its weight a word of the context (not of the question itself) counts with.
CONTEXT_WEIGHT = 0.3
#: A source this relevant (retrieval relevance) is quoted from its opening when no sentence covers
#: the question well: it matched by meaning, which word overlap cannot see.
LEAD_RELEVANCE = 0.5

#: Share of the question a sentence's section heading covers (beyond the sentence) that counts
#: for the sentence: half, as the heading names the section's topic, not what the sentence says.
HEADING_CREDIT = 0.5

#: What a question asks for (left of ``->``) and the names of the fields or table columns that hold
#: it (right): a question holding a word on the left is answered by a field whose name holds one on
#: the right. Generic catalogue and contact vocabulary, Chinese and English.
FIELDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = tuple(
    (tuple(asks.split("/")), tuple(names.split("/")))
    for asks, names in (
        line.split(" -> ")
        for line in (
            "多少钱/价格/价钱/售价/几块钱/price/cost/how much -> 价格/价钱/售价/单价/定价/price/cost",
            "产地/哪里产/哪儿产/产自/产于/出产/原产/origin/come from/comes from/grown"
            " -> 产地/原产/出产/origin",
            "规格/多大/多重/重量/多少克/净含量/容量/size/how big/how heavy/weigh"
            " -> 规格/重量/净含量/容量/尺寸/size/weight/capacity",
            "编号/型号/货号/product code/code/sku/model number -> 编号/型号/货号/code/sku/model",
            "风味/口味/味道/香气/香味/什么味/taste/flavour/flavor/aroma"
            " -> 风味/口味/味道/香气/taste/flavour/flavor/aroma",
            "类别/种类/类型/哪类/哪一类/什么类/category/what type/what kind -> 类/category/type",
            "几天/多少天/多久/多长时间/时效/how long/how many days -> 时效/时长/天数/duration/days",
            "运费/邮费/快递费/shipping/postage/delivery fee -> 运费/邮费/shipping/postage",
            "地址/在哪/位置/address/where is/located -> 地址/位置/address/location",
            "电话/热线/号码/phone/hotline -> 电话/热线/phone/tel",
            "邮箱/email/e-mail -> 邮箱/email/e-mail",
            "营业时间/几点/开门/关门/opening hours/hours/open -> 营业时间/时间/hours/opening",
            "什么时候/哪年/哪一年/日期/when/what year/what date -> 日期/年份/时间/year/date",
        )
    )
)

#: Question words: what an answer fills in, so never what it holds.
INTERROGATIVES = frozenset(
    "什么 多少 几 哪 哪里 哪儿 哪个 谁 怎么 怎样 如何 为什么 吗 呢".split()
    + "what which who whom whose how when where why".split()
)

_NUMBER = (
    r"(?:\d+(?:\.\d+)?|[一二两三四五六七八九十百半几]+"
    r"|(?<![a-z])(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve))"
)
#: What a question asks for, and the shape of a value that answers it: a sentence holding such a
#: value covers the question's words for it (多久 is answered by "3天", not by the word 多久).
VALUES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (
        ("多久", "多长时间", "几天", "多少天", "how long", "how many days"),
        re.compile(
            rf"{_NUMBER}(?:\s*(?:-|~|到|至|to)\s*{_NUMBER})?[\s-]*(?:个?工作日|天|小时|分钟|周|个?月|年|秒|"
            r"(?:business |working )?days?\b|hours?\b|minutes?\b|seconds?\b|weeks?\b|months?\b|years?\b)"
        ),
    ),
    (
        ("多少钱", "价格", "价钱", "费用", "price", "cost", "how much is", "how much does"),
        re.compile(r"\d+(?:\.\d+)?\s*(?:元|块|yuan\b|rmb\b)|[¥$€£]\s*\d"),
    ),
    (("几点", "what time"), re.compile(r"\b\d{1,2}[:：]\d{2}\b")),
    (
        ("几个", "多少个", "几家", "多少家", "几种", "多少种", "几位", "多少位", "how many"),
        re.compile(rf"{_NUMBER}\s*(?:个|家|种|位|款|座|所|名|处|间)|(?<![\d.:])\b{_NUMBER}\b(?![\d.:%])"),
    ),
    (("多少度", "温度", "水温", "how hot", "temperature"), re.compile(r"\d+\s*(?:°\s*[cf]\b|℃|度)")),
)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class _Candidate:
    source: Source
    index: int  # the sentence's place in its source (-1 for a block)
    score: float
    lines: tuple[Line, ...] = ()  # a block's lines to quote


class ExtractiveAnswerer:
    """Answers with the best-matching source sentences; see the module docstring."""

    name = "extractive"

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self._tokenizer = tokenizer or Tokenizer()

    def answer(
        self, question: str, sources: Sequence[Source], *, context: str = ""
    ) -> tuple[str, list[Citation]]:
        """The answer text with one ``[n]`` per quoted span, and its citations; ``("", [])``
        when there are no sources. ``context``'s words (earlier questions a follow-up leans on)
        count too, at :data:`CONTEXT_WEIGHT` of their weight: they name what the question is
        about, not what it asks."""
        if not sources:
            return "", []
        words = self._weighted_words(question)
        for word, weight in self._weighted_words(context).items():
            words.setdefault(word, CONTEXT_WEIGHT * weight)
        bigrams = _bigrams(question)
        asked = _asked(question)
        folded = _fold(question)
        valued = [(cue, shape) for cues, shape in VALUES for cue in cues if _has(folded, cue)]
        split = {source.number: split_sentences(source.text) for source in sources}
        best = self._best(sources, split, words, bigrams, asked, valued)
        if best is None or best.score < MIN_EVIDENCE:
            if sources[0].score < LEAD_RELEVANCE:
                return "", []
            return self._lead(sources[0], split[sources[0].number])
        if best.lines:
            text = _cite(join_lines(best.source.text, best.lines), best.source.number)
            return text, citations_of(text, sources)
        sentences = split[best.source.number]
        chosen = self._with_neighbours(best, sentences, words, bigrams)
        text = self._quote(best.source, chosen, words)
        return text, citations_of(text, sources)

    def _best(
        self,
        sources: Sequence[Source],
        split: dict[int, list[Sentence]],
        words: dict[str, float],
        bigrams: set[str],
        asked: list[tuple[str, tuple[str, ...]]],
        valued: list[tuple[str, re.Pattern[str]]],
    ) -> _Candidate | None:
        """The best-scoring sentence or block of lines over all sources, a source's rank
        discounting its scores (None when no source has a sentence or block to quote)."""
        best: _Candidate | None = None
        for rank, source in enumerate(sources):
            prior = 1.0 / (1.0 + RANK_DECAY * rank)
            blocks = blocks_of(source.text)
            headings = headings_of(source.text)
            in_heading = _within(heading_spans(source.text))
            for index, sentence in enumerate(split[source.number]):
                if any(
                    a <= sentence.start and sentence.end <= b for a, b in (block.span for block in blocks)
                ):
                    continue
                if in_heading(sentence):
                    continue
                score = prior * self._in_section(sentence, headings, words, bigrams, valued)
                if best is None or score > best.score:
                    best = _Candidate(source, index, score)
            for block in blocks:
                raw, lines = self._read(block, source.text, words, bigrams, asked, valued)
                if best is None or prior * raw > best.score:
                    best = _Candidate(source, -1, prior * raw, lines)
        return best

    def _in_section(
        self,
        sentence: Sentence,
        headings: list[tuple[int, str]],
        words: dict[str, float],
        bigrams: set[str],
        valued: list[tuple[str, re.Pattern[str]]],
    ) -> float:
        """A sentence's score, with :data:`HEADING_CREDIT` of what its section's heading adds: the
        heading says what the section is about ("Green tea"), which its sentences do not repeat."""
        own = self._credited(sentence.text, _values_in(sentence.text, valued), words, bigrams)
        heading = next((text for at, text in reversed(headings) if at < sentence.start), None)
        if heading is None:
            return own
        sectioned = f"{heading} {sentence.text}"
        whole = self._credited(sectioned, _values_in(sectioned, valued), words, bigrams)
        return own + HEADING_CREDIT * (whole - own)

    def _read(
        self,
        block: Block,
        text: str,
        words: dict[str, float],
        bigrams: set[str],
        asked: list[tuple[str, tuple[str, ...]]],
        valued: list[tuple[str, re.Pattern[str]]],
    ) -> tuple[float, tuple[Line, ...]]:
        """A block's score and the lines to quote from it. The block is scored as a whole, with
        the question's words for what a field holds counted as covered by that field; a record
        is quoted as its subject line (the one best matching the question) and the fields asked
        for, or whole when none is."""
        found = [(line, cue) for line in block.lines for cue, names in asked if _names(line.key, names)]
        fields = {line for line, _ in found}
        body = " ".join(text[line.start : line.end] for line in block.lines)
        cues = [cue for _, cue in found] + _values_in(body, valued)
        score = self._credited(body, cues, words, bigrams)
        if not block.record:
            return score, block.lines
        others = [line for line in block.lines if line not in fields]
        subject = max(
            others, key=lambda line: self._score(text[line.start : line.end], words, bigrams), default=None
        )
        if fields:
            return score, tuple(
                sorted(fields | ({subject} if subject else set()), key=lambda line: line.start)
            )
        whole = block.lines[-1].end - block.lines[0].start
        return score, block.lines if whole <= MAX_ANSWER_CHARS or subject is None else (subject,)

    def _credited(self, text: str, cues: list[str], words: dict[str, float], bigrams: set[str]) -> float:
        """``text``'s score with the question's words ``cues`` (多少钱, how long) counted as covered
        — a price field, a duration answers them — provided ``text`` also holds a word of the rest
        of the question, if it has any besides question words: a price answers "多少钱" only for
        something the question names."""
        plain = self._score(text, words, bigrams)
        rest = [
            word
            for word in words
            if word not in INTERROGATIVES and not any(word in cue or cue in word for cue in cues)
        ]
        lowered = _fold(text)
        if not cues or (rest and not any(word in lowered for word in rest)):
            return plain
        return self._score(" ".join([text, *cues]), words, bigrams)

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
        """The best sentence and the adjacent ones worth adding, in source order, within its
        section."""
        first = last = best.index
        in_heading = _within(heading_spans(best.source.text))
        length = len(sentences[best.index].text)
        best_raw = self._score(sentences[best.index].text, words, bigrams)
        while last - first + 1 < MAX_SENTENCES:
            options = [i for i in (first - 1, last + 1) if 0 <= i < len(sentences)]
            # a heading is no part of a quote, and the next section (after its heading) is about
            # something else
            options = [i for i in options if not in_heading(sentences[i])]
            fitting = [i for i in options if length + len(sentences[i].text) <= MAX_ANSWER_CHARS]
            if not fitting:
                break
            pick = max(fitting, key=lambda i: self._score(sentences[i].text, words, bigrams))
            wanted = self._score(sentences[pick].text, words, bigrams) >= NEIGHBOUR_SHARE * best_raw
            asks = sentences[last].text.endswith(("?", "？")) and last + 1 in fitting
            if not wanted and not asks and length >= MIN_STANDALONE_CHARS:
                break
            if asks:
                pick = last + 1  # a question in the source (an FAQ) is answered by what follows it
            elif not wanted:
                pick = last + 1 if last + 1 in fitting else pick  # a short sentence reads on forward
            first, last = min(first, pick), max(last, pick)
            length += len(sentences[pick].text)
        return sentences[first : last + 1]

    def _quote(self, source: Source, chosen: list[Sentence], words: dict[str, float]) -> str:
        """``chosen`` as they stand in the source (one span), cut to a window around the question's
        words when longer than :data:`MAX_ANSWER_CHARS`, with the source's marker."""
        span = unwrap(source.text, chosen[0].start, chosen[-1].end).strip()
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


def _asked(question: str) -> list[tuple[str, tuple[str, ...]]]:
    """The question's words for what a field holds (``多少钱``), each with the field names that
    hold it (:data:`FIELDS`)."""
    folded = _fold(question)
    return [(cue, names) for cues, names in FIELDS for cue in cues if _has(folded, cue)]


def _names(key: str, names: tuple[str, ...]) -> bool:
    folded = _fold(key)
    return bool(key) and any(_has(folded, name) for name in names)


def _has(text: str, word: str) -> bool:
    """``word`` in ``text``; a Latin word only at a word start ("cost" in "costs", not "id" in
    "width")."""
    if not word.isascii():
        return word in text
    return re.search(rf"(?<![a-z0-9]){re.escape(word)}", text) is not None


def _values_in(text: str, valued: list[tuple[str, re.Pattern[str]]]) -> list[str]:
    """The question's words for a value (多久) whose shape ``text`` holds (3天)."""
    folded = _fold(text)
    return [cue for cue, shape in valued if shape.search(folded)]


def _within(spans: list[tuple[int, int]]) -> Callable[[Sentence], bool]:
    """Whether a sentence lies in one of ``spans`` (a source's heading lines)."""
    return lambda sentence: any(a <= sentence.start < b for a, b in spans)
