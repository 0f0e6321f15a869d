"""Tokens for keyword and BM25 search: jieba for Chinese, lower-cased words for everything else.

Chinese runs get jieba's search-mode tokens (``cut_for_search``: words plus the dictionary words
inside long words, which favours recall), computed by :class:`SearchCutter`, which gives the
same tokens in less time; any other text becomes lower-cased ``\\w+`` words, stemmed when the
tokenizer has a stemmer (:mod:`zhiku.text.stemming`). Punctuation and whitespace are
dropped, digits kept, stop words removed (before stemming: the list holds surface forms).

A tokenizer with a user dictionary segments with its own copy of jieba's dictionary, so one
dataset's user dictionary never changes another dataset's tokens. jieba's default dictionary takes
about a second to parse (and its :class:`Lexicon` a fifth of that); both are made once per process
and shared, read-only, by every tokenizer without a user dictionary. With
:func:`keep_lexicon_in` (a knowledge base names its data directory) the default Lexicon is stored
there once built, and later processes load it in a fifth of the time.

BM25 indexes :meth:`Tokenizer.terms`: the tokens and, with ``han_bigrams`` (new datasets), every
pair of neighbouring Chinese characters as a term of its own. jieba cuts the same characters
differently in different surroundings — 这种病能治吗 gives 病能治, 这种病不能治愈 gives 不能 / 治愈;
孕妇怎么用药 gives 用药, 服用药物 gives 服用 / 药物 — so a question and the passage that answers it
may share no token; they still share the pairs 能治 and 用药. BM25 alone, nDCG@10:
zh_medical_dialogue 0.283 → 0.307, cmrc2018_train 0.957 → 0.963 (``zhiku eval``). Scored offline
with the same BM25 on the first set: pairs in place of jieba's words 0.302; single characters as
well 0.307, with a lower hybrid. The keyword channel keeps the tokens.

Store :meth:`Tokenizer.settings` with a dataset and rebuild with :meth:`Tokenizer.from_settings`,
so queries are tokenized exactly like the indexed text.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import jieba

from zhiku.core.errors import ConfigError
from zhiku.text.search_cut import Lexicon, SearchCutter
from zhiku.text.stemming import make_stemmer

#: A few very frequent Chinese function words and English stop words; short on purpose, since
#: BM25's IDF already discounts common words and a long list removes meaning ("not", "no").
DEFAULT_STOP_WORDS: frozenset[str] = frozenset(
    """
    的 了 和 是 在 也 就 都 而 及 与 或 着 之 于 把 被 让 给 从 对 向 为 以 等 吧 吗 呢 啊 呀 哦 嗯
    我 你 您 他 她 它 我们 你们 他们 它们 这 那 这个 那个 这些 那些 其 该 个 们 此 即 则 并 且 但
    但是 因为 所以
    a an the and or of to in on at by for from with as is are was were be been being it its this
    that these those there their then than so such into onto about over under i me my we our you
    your he him his she her they them what which who whom whose when where why how am do does did
    s t can will would shall should could may might must also just only very too
    """.split()
)

#: Whether a new dataset's BM25 indexes character pairs (settings stored without the key: no).
DEFAULT_HAN_BIGRAMS = True
#: Marks a character pair as a term of its own, so the pair 党参 does not add to the word 党参's count.
BIGRAM_MARK = "\u00a7"

#: jieba segments a run of these characters as one block: Han, and the ASCII it keeps inside words.
_BLOCK_HAN = "\u4e00-\u9fd5"
_BLOCK_ASCII_CHARS = "a-zA-Z0-9+#&._%\\-"
#: A whole block holding a Han character (those go to jieba; the others are plain words). It may
#: start only where a block starts, and nothing backtracks, so long ASCII runs cost linear time.
_HAN_BLOCK = re.compile(
    f"(?<![{_BLOCK_HAN}{_BLOCK_ASCII_CHARS}])[{_BLOCK_ASCII_CHARS}]*+[{_BLOCK_HAN}]"
    f"[{_BLOCK_HAN}{_BLOCK_ASCII_CHARS}]*+"
)
_HAN = re.compile(f"[{_BLOCK_HAN}]")
#: Runs of two Chinese characters or more, for :meth:`Tokenizer.terms`' character pairs.
_HAN_RUN = re.compile(f"[{_BLOCK_HAN}]{{2,}}")
_BLOCK_ASCII = re.compile(f"[{_BLOCK_ASCII_CHARS}]")
_WORD = re.compile(r"\w+")

_DEFAULT_DICT_LOCK = threading.Lock()
_default_dict: tuple[dict[str, int], int] | None = None
_DEFAULT_LEXICON_LOCK = threading.Lock()
_default_lexicon: Lexicon | None = None
_lexicon_directory: Path | None = None

#: Distinct Chinese blocks remembered per tokenizer; templated text repeats many clauses.
_BLOCK_CACHE_SIZE = 16384


def _default_prefix_dict() -> tuple[dict[str, int], int]:
    """jieba's default prefix dictionary (word -> frequency, total), parsed once per process."""
    global _default_dict
    with _DEFAULT_DICT_LOCK:
        if _default_dict is None:
            _default_dict = jieba.Tokenizer.gen_pfdict(jieba.Tokenizer().get_dict_file())
        return _default_dict


def keep_lexicon_in(directory: Path) -> None:
    """Store the default dictionary's :class:`Lexicon` in ``directory`` when it is built, and load
    it from there in later processes (~0.2 s instead of ~1.3 s to parse jieba's dictionary)."""
    global _lexicon_directory
    _lexicon_directory = Path(directory)


def _default_dict_lexicon() -> Lexicon:
    """The :class:`Lexicon` of jieba's default dictionary, made once per process and shared."""
    global _default_lexicon
    with _DEFAULT_LEXICON_LOCK:
        if _default_lexicon is None:
            stored = _lexicon_file()
            _default_lexicon = _read_lexicon(stored) if stored is not None else None
            if _default_lexicon is None:
                _default_lexicon = Lexicon.from_frequencies(*_default_prefix_dict())
                if stored is not None:
                    _write_lexicon(stored, _default_lexicon)
        return _default_lexicon


def _lexicon_file() -> Path | None:
    """Where the stored Lexicon lives: named by jieba's version (its dictionary ships with it) and
    Python's (marshal's format is Python's own)."""
    if _lexicon_directory is None:
        return None
    python = f"{sys.version_info.major}{sys.version_info.minor}"
    return _lexicon_directory / f"jieba-{jieba.__version__}-lexicon-py{python}.marshal"


def _read_lexicon(path: Path) -> Lexicon | None:
    """The stored Lexicon, or None when absent or unreadable (it is then built and stored again)."""
    try:
        log_probs, log_total = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(log_probs, dict) or not isinstance(log_total, float):
        return None
    return Lexicon(log_probs, log_total)


def _write_lexicon(path: Path, lexicon: Lexicon) -> None:
    """Write atomically (processes starting together each write a whole file); a store that
    cannot be written only costs the next process the parse."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(marshal.dumps((lexicon.log_probs, lexicon.log_total)))
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)


class Tokenizer:
    """Thread-safe tokenizer with a dataset's user dictionary and stop words.

    ``user_dict`` is a jieba user dictionary (UTF-8, ``word [freq] [tag]`` per line); a missing or
    malformed file raises :class:`ConfigError` here. Without one, jieba's dictionary is loaded at
    the first Chinese text (about a second, once per process).

    ``stop_words`` replaces :data:`DEFAULT_STOP_WORDS` (pass ``[]`` to keep every token); they are
    compared after lower-casing. ``hmm`` lets jieba guess words missing from its dictionary.
    ``stemmer`` names a stemmer for the words outside Chinese text (``plural`` or ``english``,
    see :mod:`zhiku.text.stemming`); None keeps them as written. An unknown name raises
    :class:`ConfigError`. ``han_bigrams`` adds the pairs of neighbouring Chinese characters to
    :meth:`terms` (BM25's terms), not to :meth:`tokenize`.
    """

    def __init__(
        self,
        user_dict: Path | None = None,
        stop_words: Iterable[str] | None = None,
        hmm: bool = True,
        stemmer: str | None = None,
        han_bigrams: bool = False,
    ) -> None:
        self.stemmer = stemmer
        self.han_bigrams = han_bigrams
        try:
            self._stem = make_stemmer(stemmer) if stemmer is not None else None
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.user_dict = Path(user_dict) if user_dict is not None else None
        self.stop_words = (
            DEFAULT_STOP_WORDS if stop_words is None else frozenset(w.lower() for w in stop_words)
        )
        self.hmm = hmm
        self._cutter_lock = threading.Lock()
        # With a user dictionary, load now so a bad file fails here, not at the first query.
        self._cutter_instance: SearchCutter | None = None if user_dict is None else self._build_cutter()
        self._cut_block = lru_cache(maxsize=_BLOCK_CACHE_SIZE)(self._cut_block_uncached)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Tokenizer:
        """The tokenizer described by :meth:`settings` (missing keys take the defaults)."""
        user_dict = settings.get("user_dict")
        return cls(
            user_dict=Path(user_dict) if user_dict else None,
            stop_words=settings.get("stop_words"),
            hmm=bool(settings.get("hmm", True)),
            stemmer=settings.get("stemmer"),
            han_bigrams=bool(settings.get("han_bigrams", False)),
        )

    def settings(self) -> dict[str, Any]:
        """JSON-ready description, stored with a dataset: ``user_dict``, ``stop_words``, ``hmm``,
        ``stemmer``, ``han_bigrams``."""
        return {
            "kind": "jieba",
            "user_dict": str(self.user_dict) if self.user_dict is not None else None,
            "stop_words": sorted(self.stop_words),
            "hmm": self.hmm,
            "stemmer": self.stemmer,
            "han_bigrams": self.han_bigrams,
        }

    def terms(self, text: str, tokens: Sequence[str] | None = None) -> list[str]:
        """BM25's terms of ``text``: :meth:`tokenize`'s tokens (``tokens``, when already made), then,
        with ``han_bigrams``, each pair of neighbouring Chinese characters (marked with
        :data:`BIGRAM_MARK`), repeats kept."""
        tokens = self.tokenize(text) if tokens is None else list(tokens)
        if self.han_bigrams:
            for run in _HAN_RUN.findall(text):
                tokens.extend(BIGRAM_MARK + run[i : i + 2] for i in range(len(run) - 1))
        return tokens

    def tokenize(self, text: str) -> list[str]:
        """Tokens of ``text`` in order, repeats kept (BM25 counts them)."""
        tokens: list[str] = []
        if not _HAN.search(text):
            self._add_words(text, tokens)
            return tokens
        start = 0
        for match in _HAN_BLOCK.finditer(text):
            if match.start() > start:
                self._add_words(text[start : match.start()], tokens)
            tokens.extend(self._cut_block(match.group()))
            start = match.end()
        if start < len(text):
            self._add_words(text[start:], tokens)
        return tokens

    def _add_words(self, text: str, tokens: list[str]) -> None:
        stop = self.stop_words
        words = [w for w in _WORD.findall(text.lower()) if w not in stop]
        tokens.extend(words if self._stem is None else self._stem(words))

    def _cut_block_uncached(self, block: str) -> tuple[str, ...]:
        stop = self.stop_words
        pieces = self._cutter().cut(block)
        if not _BLOCK_ASCII.search(block):  # the usual case: Han only, nothing to lower-case
            return tuple(piece for piece in pieces if piece not in stop)
        out: list[str] = []
        # A block holds Han characters and ASCII only, so a piece without Han is ASCII.
        for piece in pieces:
            if piece.isascii():
                self._add_words(piece, out)
            elif (piece := piece.lower()) not in stop:
                out.append(piece)
        return tuple(out)

    def _cutter(self) -> SearchCutter:
        """The private segmenter, built on the first Chinese text (English never needs it)."""
        if self._cutter_instance is None:
            with self._cutter_lock:
                if self._cutter_instance is None:
                    self._cutter_instance = self._build_cutter()
        return self._cutter_instance

    def _build_cutter(self) -> SearchCutter:
        if self.user_dict is None:
            return SearchCutter(_default_dict_lexicon(), hmm=self.hmm)
        if not self.user_dict.is_file():
            raise ConfigError(f"jieba user dictionary not found: {self.user_dict}")
        freq, total = _default_prefix_dict()
        instance = jieba.Tokenizer()
        instance.FREQ, instance.total = dict(freq), total
        instance.initialized = True
        try:
            instance.load_userdict(str(self.user_dict))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(f"invalid jieba user dictionary {self.user_dict}: {exc}") from exc
        return SearchCutter(Lexicon.from_frequencies(instance.FREQ, instance.total), hmm=self.hmm)

    def __repr__(self) -> str:
        stop = f"{len(self.stop_words)} words"
        return (
            f"Tokenizer(user_dict={self.user_dict!r}, stop_words={stop}, hmm={self.hmm}, "
            f"stemmer={self.stemmer!r})"
        )
