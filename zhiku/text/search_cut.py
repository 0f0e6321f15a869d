"""jieba's search-mode segmentation (``cut_for_search``) of one block, token for token, faster.

Tokenizing is most of the work of indexing Chinese text, and most of jieba's time goes to its
structure rather than its algorithm: five nested generators per block, a dict of DAG lists built
and then walked again by ``max`` over a generator of tuples, a logarithm per dictionary look-up,
and a dict-of-dicts Viterbi that copies every path at every character. :class:`SearchCutter`
runs the same algorithm on the same dictionary and HMM tables in flat loops, and gives exactly
jieba's tokens:

- the best route (maximum of summed log word probabilities) is computed right to left while
  walking each position's dictionary prefixes, with jieba's tie rule (the longer word wins) and
  its floating-point sums, the log probabilities computed once per word (:class:`Lexicon`);
- runs of single characters that are not one dictionary word go to jieba's HMM (``finalseg``)
  when ``hmm`` is on, with its emission and transition tables, its sums in its order and its tie
  rules; without HMM, single letters and digits are joined as jieba does;
- words longer than two characters are followed by their dictionary 2- and 3-grams, as in
  search mode.

A block is what jieba segments as a unit: a run of ``[\\u4E00-\\u9FD5a-zA-Z0-9+#&._%-]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from math import log

from jieba import finalseg

_ENGLISH_CHAR = re.compile(r"[a-zA-Z0-9]")
_MIN = finalseg.MIN_FLOAT
#: Marks a string that is not even the prefix of a dictionary word.
_ABSENT = object()


@dataclass(frozen=True)
class Lexicon:
    """A jieba dictionary as the route search reads it.

    ``log_probs`` maps each word to ``log(freq) - log(total)`` (the very float jieba computes at
    every look-up) and each mere prefix of a word (frequency 0) to None; strings that are neither
    are absent. Built once per dictionary (about 0.2 s for jieba's) and shared, read-only.
    """

    log_probs: dict[str, float | None]
    log_total: float

    @classmethod
    def from_frequencies(cls, freq: Mapping[str, int], total: int) -> Lexicon:
        """From jieba's prefix dictionary (``Tokenizer.FREQ``) and its ``total``."""
        log_total = log(total)
        log_probs = {word: log(count) - log_total if count else None for word, count in freq.items()}
        return cls(log_probs, log_total)


def _transition(source: str, target: str) -> float:
    value: float = finalseg.trans_P[source].get(target, _MIN)
    return value


_B_M, _B_E = _transition("B", "M"), _transition("B", "E")
_M_M, _M_E = _transition("M", "M"), _transition("M", "E")
_E_B, _E_S = _transition("E", "B"), _transition("E", "S")
_S_B, _S_S = _transition("S", "B"), _transition("S", "S")
_START_B, _START_M, _START_E, _START_S = (finalseg.start_P[state] for state in "BMES")
_EMIT_B, _EMIT_M, _EMIT_E, _EMIT_S = (finalseg.emit_P[state].get for state in "BMES")
#: HMM states by index, as the Viterbi back-pointers store them.
_B, _M, _E, _S = range(4)
#: A run of Han characters only: the HMM takes it whole, without finalseg's splitting.
_ALL_HAN = re.compile(r"[\u4E00-\u9FD5]+")


class SearchCutter:
    """``cut_for_search(block, HMM=hmm)`` of a jieba tokenizer whose dictionary is ``lexicon``."""

    def __init__(self, lexicon: Lexicon, hmm: bool = True) -> None:
        self.lexicon = lexicon
        self.hmm = hmm

    def cut(self, block: str) -> list[str]:
        """Search-mode words of ``block``, in jieba's order."""
        words = self._words_hmm(block) if self.hmm else self._words_no_hmm(block)
        get = self.lexicon.log_probs.get
        out: list[str] = []
        for word in words:
            n = len(word)
            if n > 2:
                for i in range(n - 1):
                    if get(gram := word[i : i + 2]) is not None:
                        out.append(gram)
                if n > 3:
                    for i in range(n - 2):
                        if get(gram := word[i : i + 3]) is not None:
                            out.append(gram)
            out.append(word)
        return out

    def _route(self, block: str) -> list[int]:
        """End (exclusive) of the best word starting at each position (jieba's DAG + ``calc``).

        A position's candidates are its dictionary words, or the single character when it has
        none; each scores its log probability plus the best score after it (a character outside
        the dictionary counts as log(1) - log(total)), and on a tie the longer word wins (jieba's
        ``max`` over ``(score, end)``).
        """
        get = self.lexicon.log_probs.get
        log_total = self.lexicon.log_total
        absent = _ABSENT
        n = len(block)
        score = [0.0] * (n + 1)
        ends = list(range(1, n + 1))
        for k in range(n - 1, -1, -1):
            weight = get(block[k], absent)
            best = None
            end = k + 1
            while weight is not absent:
                if weight is not None:
                    value = weight + score[end]  # type: ignore[operator]
                    if best is None or value >= best:
                        best = value
                        ends[k] = end
                if end == n:
                    break
                end += 1
                weight = get(block[k:end], absent)
            # 0.0 - log_total + score is exactly score - log_total: the same float as jieba's.
            score[k] = score[k + 1] - log_total if best is None else best
        return ends

    def _words_no_hmm(self, block: str) -> list[str]:
        """jieba's ``__cut_DAG_NO_HMM``: route words, with single letters and digits joined."""
        ends = self._route(block)
        words: list[str] = []
        n = len(block)
        x = 0
        run_start = -1
        while x < n:
            y = ends[x]
            if y - x == 1 and _ENGLISH_CHAR.match(block[x]):
                if run_start < 0:
                    run_start = x
            else:
                if run_start >= 0:
                    words.append(block[run_start:x])
                    run_start = -1
                words.append(block[x:y])
            x = y
        if run_start >= 0:
            words.append(block[run_start:])
        return words

    def _words_hmm(self, block: str) -> list[str]:
        """jieba's ``__cut_DAG``: route words, runs of single characters through the HMM."""
        ends = self._route(block)
        words: list[str] = []
        n = len(block)
        x = 0
        run_start = -1
        while x < n:
            y = ends[x]
            if y - x == 1:
                if run_start < 0:
                    run_start = x
            else:
                if run_start >= 0:
                    self._single_run(block[run_start:x], words)
                    run_start = -1
                words.append(block[x:y])
            x = y
        if run_start >= 0:
            self._single_run(block[run_start:], words)
        return words

    def _single_run(self, run: str, words: list[str]) -> None:
        if len(run) == 1:
            words.append(run)
        elif self.lexicon.log_probs.get(run) is None:
            _hmm_cut(run, words)
        else:
            words.extend(run)


def _hmm_cut(text: str, words: list[str]) -> None:
    """jieba's ``finalseg.cut``: HMM words of Han runs, letter/digit runs kept whole."""
    if _ALL_HAN.fullmatch(text):
        _add_hmm_words(text, words)
        return
    for part in finalseg.re_han.split(text):
        if not part:
            continue
        if finalseg.re_han.match(part):
            _add_hmm_words(part, words)
        else:
            words.extend(piece for piece in finalseg.re_skip.split(part) if piece)


def _add_hmm_words(han: str, words: list[str]) -> None:
    force_split = finalseg.Force_Split_Words
    for word in _viterbi_words(han):
        if word in force_split:
            words.extend(word)
        else:
            words.append(word)


def _viterbi_words(text: str) -> list[str]:
    """Words of a Han run from its most likely B/M/E/S tags (jieba's ``viterbi`` and ``__cut``).

    Same tables, same sums in the same order, same ties: of two equal predecessors the state
    later in the alphabet wins, and so does S over E at the end, as jieba's ``max`` over
    ``(probability, state)`` tuples decides.
    """
    emit_b, emit_m, emit_e, emit_s = _EMIT_B, _EMIT_M, _EMIT_E, _EMIT_S
    first = text[0]
    v_b = _START_B + emit_b(first, _MIN)
    v_m = _START_M + emit_m(first, _MIN)
    v_e = _START_E + emit_e(first, _MIN)
    v_s = _START_S + emit_s(first, _MIN)
    back: list[tuple[int, int, int, int]] = []
    for i in range(1, len(text)):
        char = text[i]
        em = emit_b(char, _MIN)
        from_e, from_s = v_e + _E_B + em, v_s + _S_B + em
        b, prev_b = (from_s, _S) if from_s >= from_e else (from_e, _E)
        em = emit_m(char, _MIN)
        from_m, from_b = v_m + _M_M + em, v_b + _B_M + em
        m, prev_m = (from_m, _M) if from_m >= from_b else (from_b, _B)
        em = emit_e(char, _MIN)
        from_b, from_m = v_b + _B_E + em, v_m + _M_E + em
        e, prev_e = (from_m, _M) if from_m >= from_b else (from_b, _B)
        em = emit_s(char, _MIN)
        from_s, from_e = v_s + _S_S + em, v_e + _E_S + em
        s, prev_s = (from_s, _S) if from_s >= from_e else (from_e, _E)
        back.append((prev_b, prev_m, prev_e, prev_s))
        v_b, v_m, v_e, v_s = b, m, e, s
    state = _S if v_s >= v_e else _E
    tags = [state]
    for prev in reversed(back):
        state = prev[state]
        tags.append(state)
    tags.reverse()
    words: list[str] = []
    begin = next_start = 0
    for i, tag in enumerate(tags):
        if tag == _B:
            begin = i
        elif tag == _E:
            words.append(text[begin : i + 1])
            next_start = i + 1
        elif tag == _S:
            words.append(text[i])
            next_start = i + 1
    if next_start < len(text):
        words.append(text[next_start:])
    return words
