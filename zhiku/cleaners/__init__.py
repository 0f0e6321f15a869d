"""Cleaners: rewrite extracted text before it is split.

Rules, by registry name (``build_cleaners(["default", "remove_extra_spaces"])``):

- ``default`` — :class:`DefaultCleaner`: line breaks normalised to ``\\n``; control characters
  (except tab and newline), unpaired surrogates, U+FFFE/U+FFFF and zero-width characters
  removed; three or more blank lines collapsed to two. Meant to run on every document.
- ``remove_extra_spaces`` — runs of spaces/tabs become one space, line ends trimmed; newlines and
  Chinese text (including the ideographic space U+3000) are kept.
- ``remove_urls_emails`` — Markdown links ``[text](url)`` keep ``text``; bare URLs and e-mail
  addresses are removed.
- From ``unstructured.cleaners.core`` (see :mod:`.unstructured_rules`): ``clean_bullets``,
  ``clean_ordered_bullets``, ``clean_dashes``, ``clean_trailing_punctuation``,
  ``clean_extra_whitespace`` (line by line), ``clean_ligatures``, ``replace_unicode_quotes``,
  ``group_broken_paragraphs`` (whole text).
- Refused: ``clean_non_ascii_chars`` (deletes Chinese), ``remove_punctuation`` and
  ``replace_mime_encodings``; asking for them raises ConfigError with the reason.

Third-party cleaners register through the ``zhiku.plugins`` entry point group
(``cleaners.<name>``), or in code with ``cleaners.add(name, factory)``.
"""

from __future__ import annotations

from zhiku.cleaners.base import Cleaner, CleanerChain
from zhiku.cleaners.default import DefaultCleaner
from zhiku.cleaners.registry import build_cleaners, cleaners
from zhiku.cleaners.rules import RemoveExtraSpaces, RemoveUrlsEmails
from zhiku.cleaners.unstructured_rules import REFUSED_RULES

__all__ = [
    "REFUSED_RULES",
    "Cleaner",
    "CleanerChain",
    "DefaultCleaner",
    "RemoveExtraSpaces",
    "RemoveUrlsEmails",
    "build_cleaners",
    "cleaners",
]
