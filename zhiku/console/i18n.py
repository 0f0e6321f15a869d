"""The console in English and Chinese: English text is the key, :data:`ZH` its translation.

The language is the ``lang`` cookie's (set by the switch on every page), else the browser's
``Accept-Language``, else English.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import request

LANGUAGES = ("en", "zh")
LANGUAGE_COOKIE = "lang"

ZH: dict[str, str] = {}


def choose_language() -> str:
    chosen = request.cookies.get(LANGUAGE_COOKIE)
    if chosen in LANGUAGES:
        return chosen
    best = request.accept_languages.best_match(["en", "zh", "zh-CN", "zh-TW", "zh-Hans", "zh-Hant"])
    return "zh" if best and best.startswith("zh") else "en"


def translator(lang: str) -> Callable[[str], str]:
    """``_(text)`` for templates: the text in ``lang`` (English when a translation is missing)."""
    if lang == "zh":
        return lambda text: ZH.get(text, text)
    return lambda text: text
