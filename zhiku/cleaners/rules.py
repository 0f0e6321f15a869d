"""zhiku's own optional cleaning rules (Dify offers the same two under these names)."""

from __future__ import annotations

import re

_SPACE_RUN = re.compile(r"[ \t\u00a0]{2,}")
_TRAILING_SPACE = re.compile(r"[ \t\u00a0]+$", re.MULTILINE)

_URL_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]"
_MARKDOWN_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?[^)\s>]*>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")
_ANGLE_LINK = re.compile(rf"<(?:(?:https?|ftp)://|mailto:|www\.){_URL_CHARS}*>", re.IGNORECASE)
_BARE_URL = re.compile(rf"(?:(?:https?|ftp)://|www\.){_URL_CHARS}+", re.IGNORECASE)
_EMAIL = re.compile(r"(?:mailto:)?[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
#: Punctuation that ends a sentence after a URL rather than belonging to it.
_URL_TAIL = ".,;:!?)]'"


class RemoveExtraSpaces:
    """Collapses runs of spaces and tabs to one space and drops spaces at line ends.

    Line breaks stay (they carry paragraph structure), and the ideographic space U+3000 is left
    alone: Chinese text uses it for paragraph indentation.
    """

    def clean(self, text: str) -> str:
        return _SPACE_RUN.sub(" ", _TRAILING_SPACE.sub("", text))


class RemoveUrlsEmails:
    """Removes bare URLs and e-mail addresses; a Markdown link ``[text](url)`` keeps its text.

    Punctuation right after a URL (``see https://x.org.``) stays, and only ASCII URL characters
    are taken, so Chinese text written right against a URL is kept.
    """

    def clean(self, text: str) -> str:
        text = _MARKDOWN_LINK.sub(lambda m: m.group(1), text)
        text = _ANGLE_LINK.sub("", text)
        text = _BARE_URL.sub(_keep_tail, text)
        return _EMAIL.sub("", text)


def _keep_tail(match: re.Match[str]) -> str:
    url = match.group()
    stripped = url.rstrip(_URL_TAIL)
    return url[len(stripped) :]
