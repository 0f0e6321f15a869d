"""Decode text files whose encoding nobody wrote down.

Order: a byte-order mark (UTF-8, UTF-16, UTF-32) decides; otherwise valid UTF-8 is taken at
once (the common case, no statistics needed); otherwise charset-normalizer guesses. Among its
equally plausible guesses the Chinese encodings are preferred (GB18030, a superset of GBK and
GB2312, then Big5), because short Chinese texts decode cleanly in Korean and Japanese code pages
too. Bytes that decode to mostly control or unassigned characters are not text.
"""

from __future__ import annotations

import codecs
import unicodedata

from zhiku.core.errors import ExtractionError

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

#: Preferred when charset-normalizer finds several encodings equally plausible.
_PREFERRED = ("gb18030", "big5", "utf_16_le", "utf_16_be", "cp1252")
#: How much more "chaos" (charset-normalizer's mess ratio) a preferred guess may have.
_TIE_MARGIN = 0.01
#: Share of unprintable characters above which decoded bytes are judged binary.
_MAX_UNPRINTABLE = 0.02
#: charset-normalizer looks at this many bytes at most when sniffing.
_SNIFF_BYTES = 64 * 1024


def decode_text(data: bytes, name: str) -> tuple[str, str]:
    """Decode ``data``; return ``(text, encoding)``.

    Raises ExtractionError(name, "not text ...") when the bytes are not text in any encoding.
    """
    text, encoding = _decode(data)
    if text is None or _unprintable_share(text[:_SNIFF_BYTES]) > _MAX_UNPRINTABLE:
        raise ExtractionError(name, "not text (binary content or unknown encoding)")
    return text, encoding


def looks_like_text(head: bytes) -> bool:
    """Whether the first bytes of a file are text; a multi-byte character cut at the end is fine."""
    head = head[:_SNIFF_BYTES]
    for bom, _ in _BOMS:
        if head.startswith(bom):
            return True
    if b"\x00" not in head:
        try:
            sample = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        except UnicodeDecodeError:
            pass
        else:
            return _unprintable_share(sample) <= _MAX_UNPRINTABLE
    # Cut the sample at the last newline so the statistics do not trip on a split character.
    cut = head.rfind(b"\n")
    text, _ = _decode(head[: cut + 1] if cut > 0 else head)
    return text is not None and _unprintable_share(text) <= _MAX_UNPRINTABLE


def _decode(data: bytes) -> tuple[str | None, str]:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                return None, encoding
    if b"\x00" not in data:  # NUL never occurs in UTF-8 text but often in UTF-16
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    return _guess(data)


def _guess(data: bytes) -> tuple[str | None, str]:
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data[:_SNIFF_BYTES] if len(data) > _SNIFF_BYTES else data))
    if b"\x00" not in data:
        # Without a BOM, UTF-16/32 text has NUL bytes (every ASCII character brings one); bytes
        # without any decode as UTF-16 to random Hangul, which scores as perfectly clean text
        # and beat Big5 on short Chinese files.
        matches = [m for m in matches if not m.encoding.startswith(("utf_16", "utf_32"))]
    if not matches:
        return None, ""
    best_chaos = min(m.chaos for m in matches)
    tied = [m for m in matches if m.chaos <= best_chaos + _TIE_MARGIN]
    rank = {enc: i for i, enc in enumerate(_PREFERRED)}
    choice = min(tied, key=lambda m: rank.get(m.encoding, len(rank)))
    try:
        return data.decode(choice.encoding), choice.encoding
    except UnicodeDecodeError:
        # Guessed from the first bytes; a later stray byte should not lose the whole file.
        return data.decode(choice.encoding, errors="replace"), choice.encoding


def _unprintable_share(text: str) -> float:
    if not text:
        return 0.0
    # Categories of the distinct characters only (a few thousand even in Chinese text), then
    # counts of the bad ones: per-character checks were a large part of reading a text file.
    bad = sum(
        text.count(ch)
        for ch in set(text)
        if ch not in "\n\r\t\f\v" and unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs")
    )
    return bad / len(text)
