"""PowerPoint (``.pptx``) through the ``unstructured`` library, offline.

See :mod:`zhiku.extractors.unstructured_offline` for what keeps it off the network. Tables come
back as HTML from unstructured and are rendered with the HTML rules (cells joined by ``" | "``).

- PPTX: one Document per slide with ``page`` (the slide number) and ``title`` (the slide's first
  title); speaker notes are included (unstructured puts them before the slide's shapes), they
  often carry the explanation the slide only hints at. The slides' elements are read as
  unstructured's partitioner makes them, one at a time: each is a checkpoint and counts against
  ``parse_max_elements`` (a deck may list one slide a hundred thousand times), and only their text
  is kept.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from zhiku.core.documents import Document
from zhiku.extractors import unstructured_offline
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.budget import ElementCounter
from zhiku.extractors.html import html_to_text

if TYPE_CHECKING:
    from unstructured.documents.elements import Element


class PptxExtractor:
    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        data = read_bytes(source, name)
        counter = ElementCounter(name, "pptx")
        texts: dict[int, list[str]] = {}
        titles: dict[int, str] = {}
        with parser_errors(name, "PPTX"):
            for element in _pptx_elements(data):
                counter.add()
                number = element.metadata.page_number or 1
                slide = texts.setdefault(number, [])
                text = _element_text(element)
                if text:
                    slide.append(text)
                    if element.category == "Title":
                        titles.setdefault(number, text)
        documents = [
            make_document("\n\n".join(parts), name, page=number, title=titles.get(number))
            for number, parts in sorted(texts.items())
        ]
        return require_text(documents, name, "no slide with text")


def _pptx_elements(data: bytes) -> Iterator[Element]:
    """The elements of a deck as unstructured makes them, one at a time. ``partition_pptx`` is
    this stream made into a list (plus metadata zhiku does not keep), with no way to stop it."""
    unstructured_offline.prepare_unstructured()
    from unstructured.partition.pptx import PptxPartitionerOptions, _PptxPartitioner

    options = PptxPartitionerOptions(
        file=io.BytesIO(data),
        file_path=None,
        include_page_breaks=False,
        include_slide_notes=True,
        infer_table_structure=True,
        strategy="fast",
    )
    return _PptxPartitioner.iter_presentation_elements(options)


def _element_text(element: Element) -> str:
    """An element's text, a table's rendered by the HTML rules; stripped."""
    html = getattr(element.metadata, "text_as_html", None)
    text = html_to_text(html)[0] if element.category == "Table" and html else element.text
    return text.strip()
