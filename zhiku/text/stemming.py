"""Stemmers for the words a tokenizer keeps outside Chinese text (Chinese has no inflection).

``plural`` (the default for new datasets) folds English plurals onto their singular, as Lucene's
``EnglishMinimalStemmer`` does (Harman's S-stemmer: "studies" → "study", "cells" → "cell",
"virus" and "class" kept): it joins the forms a question and a passage most often disagree on
and never merges words of different meaning. ``english`` is the Snowball English stemmer
(PyStemmer), which also folds "infected"/"infection"/"infects" onto "infect": it ranks the
SciFact claims better, the COVID-QA questions worse (docs/results/quality.md), and its stems
("studi") are what keyword lists then show. Words with anything but ASCII letters (numbers,
codes, other scripts) are left as they are.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

StemmerName = Literal["plural", "english"]
STEMMERS: tuple[StemmerName, ...] = ("plural", "english")
#: What a new dataset stems with; a dataset keeps the stemmer its indexes were built with.
DEFAULT_STEMMER: StemmerName = "plural"

#: Stems a list of lower-cased words, in order.
Stem = Callable[[list[str]], list[str]]


def plural_stem(word: str) -> str:
    """``word`` without its English plural ending (Lucene's EnglishMinimalStemmer rules)."""
    n = len(word)
    if n < 3 or word[-1] != "s" or not (word.isascii() and word.isalpha()):
        return word
    before = word[-2]
    if before in "us":
        return word
    if before == "e":
        if n > 3 and word[-3] == "i" and word[-4] not in "ae":
            return word[:-3] + "y"
        if word[-3] in "iaoe":
            return word
    return word[:-1]


def make_stemmer(name: str) -> Stem:
    """The stemmer called ``name`` (one of :data:`STEMMERS`); ValueError for another name."""
    if name == "plural":
        return lambda words: [plural_stem(w) for w in words]
    if name == "english":
        return _snowball_english()
    raise ValueError(f"unknown stemmer {name!r}; use one of {', '.join(STEMMERS)}")


def _snowball_english() -> Stem:
    import Stemmer  # PyStemmer: only a dataset that asks for it loads the C extension

    local = threading.local()  # a PyStemmer object must not be shared between threads

    def stem(words: list[str]) -> list[str]:
        stemmer = getattr(local, "stemmer", None)
        if stemmer is None:
            stemmer = local.stemmer = Stemmer.Stemmer("english")
        return [stemmer.stemWord(w) if w.isascii() and w.isalpha() else w for w in words]

    return stem
