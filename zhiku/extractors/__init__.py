"""Extractors: turn files into :class:`~zhiku.core.documents.Document` values.

``extract(source, name)`` picks the reader by suffix and content (:mod:`.dispatch`) and runs it.
One module per format: :mod:`.txt`, :mod:`.markdown`, :mod:`.html`, :mod:`.pdf`, :mod:`.docx`,
:mod:`.spreadsheet` (CSV/TSV, XLSX, XLS), :mod:`.epub`, :mod:`.unstructured_formats` (PPTX), :mod:`.eml`.
Parser libraries are imported only when a file of their format is read.
"""

from __future__ import annotations

from zhiku.extractors.base import Extractor
from zhiku.extractors.dispatch import extract, extractor_for, extractors

__all__ = ["Extractor", "extract", "extractor_for", "extractors"]
