"""Cleaning functions of ``unstructured.cleaners.core`` as zhiku cleaners.

unstructured wrote them for one element (a paragraph, a list item) at a time; several strip the
text or collapse all its whitespace, which would flatten a whole document into one line. Those
are applied line by line here (blank lines are left as they are), the others to the whole text.
"""

from __future__ import annotations

from collections.abc import Callable

#: Function name -> applied line by line?
UNSTRUCTURED_RULES: dict[str, bool] = {
    "clean_bullets": True,  # "● point" -> "point"
    "clean_ordered_bullets": True,  # "1.1 point" -> "point" (also eats "3.14 ..." at a line start)
    "clean_dashes": True,  # every "-" and en dash becomes a space (dates too: opt in with care)
    "clean_trailing_punctuation": True,  # ".,:;" at line ends (not Chinese "。")
    "clean_extra_whitespace": True,  # runs of spaces and NBSP to one space, line trimmed
    "clean_ligatures": False,  # "ﬁ" -> "fi" (also "æ" -> "ae")
    "replace_unicode_quotes": False,  # cp1252 quote bytes read as Latin-1 -> curly quotes
    "group_broken_paragraphs": False,  # joins hard-wrapped English lines; paragraphs by "\n\n"
}

#: Functions of unstructured.cleaners.core that zhiku will not run, and why.
REFUSED_RULES: dict[str, str] = {
    "clean_non_ascii_chars": "it deletes every non-ASCII character, including all Chinese text",
    "remove_punctuation": "it deletes all punctuation, Chinese 。，？ included, which splitters and "
    "readers need",
    "replace_mime_encodings": "it decodes quoted-printable and corrupts ordinary text containing "
    "'='; e-mail extraction decodes MIME already",
}


class UnstructuredRule:
    """One ``unstructured.cleaners.core`` function; the library is imported on first use."""

    def __init__(self, function: str, line_wise: bool) -> None:
        self.function = function
        self.line_wise = line_wise
        self._fn: Callable[[str], str] | None = None

    def clean(self, text: str) -> str:
        fn = self._load()
        if not self.line_wise:
            return fn(text)
        return "\n".join(fn(line) if line.strip() else line for line in text.split("\n"))

    def _load(self) -> Callable[[str], str]:
        if self._fn is None:
            from zhiku.extractors import unstructured_offline  # sets DO_NOT_TRACK before import

            unstructured_offline.prepare_unstructured()
            from unstructured.cleaners import core

            self._fn = getattr(core, self.function)
        return self._fn

    def __repr__(self) -> str:
        return f"UnstructuredRule({self.function!r}, line_wise={self.line_wise})"
