"""The cleaner every document goes through: removes what is never content."""

from __future__ import annotations

import re

_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_REMOVED = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f"  # control characters except \t \n \v \f \r
    "\ud800-\udfff"  # surrogates left unpaired
    "\ufffe\uffff"  # noncharacters (a byte-swapped BOM, a sentinel)
    "\u200b-\u200d\u2060\ufeff]"  # zero-width space, (non-)joiner, word joiner, BOM
)
_LINE_BREAKS = re.compile("\r\n|[\r\v\f\u2028\u2029\x85]")
_MANY_BLANK_LINES = re.compile(r"\n(?:[ \t]*\n){3,}")


class DefaultCleaner:
    """Normalises line breaks and drops invisible junk.

    - ``\\r\\n``, ``\\r``, vertical tab, form feed and the Unicode line/paragraph separators
      become ``\\n`` (a form feed often separates PDF pages: it must not glue words);
    - other control characters (C0 except ``\\t``/``\\n``, DEL, C1) are removed;
    - a surrogate pair left as two code points is joined into its character, lone surrogates
      are removed, as are U+FFFE and U+FFFF;
    - zero-width characters (U+200B-U+200D, U+2060, U+FEFF) are removed; note that this also
      takes the joiner out of emoji sequences such as family emoji;
    - three or more blank lines in a row become two.
    """

    def clean(self, text: str) -> str:
        text = _SURROGATE_PAIR.sub(_join_pair, text)
        text = _LINE_BREAKS.sub("\n", text)
        text = _REMOVED.sub("", text)
        return _MANY_BLANK_LINES.sub("\n\n\n", text)


def _join_pair(match: re.Match[str]) -> str:
    high, low = (ord(c) for c in match.group())
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
