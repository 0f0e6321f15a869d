"""What parsing one document may cost: seconds, and megabytes it may grow to.

Untrusted files are parsed by libraries whose cost follows the content, not the file size: a
4 KB DOCX inflates to megabytes of empty paragraphs, a 15 MB HTML page can hold millions of
elements, each a Python object. Every parse therefore runs on a budget (settings
``parse_time_limit`` and ``parse_max_mb``, applied by the ingestion of each document):

- time: the extractor's loops call :func:`~zhiku.core.cancellation.checkpoint`; past the budget
  the parse ends with :class:`TooCostly` and the worker takes the next document;
- memory, estimated before the parser runs: an archive's inflated members (whatever their
  ratio), plus what an XML or HTML tree of its elements takes in memory (:data:`BYTES_PER_ELEMENT`
  each), must stay within the budget; so must the text extracted;
- what a file may claim, counted before or while it is read: the elements of an HTML page, an
  EPUB, a DOCX or a PPTX (setting ``parse_max_elements``; BeautifulSoup makes a Python object of
  each, about 0.7 KB and 20 µs: a 65 KB EPUB of a million empty paragraphs is 30 s and most of a
  gigabyte; python-docx and python-pptx wrap each paragraph, run and shape they visit), the
  elements an extractor produces from them (:class:`ElementCounter`: a presentation may list one
  slide a hundred thousand times), and the cells of a spreadsheet (``parse_max_cells``, counted
  by the spreadsheet extractors);
- where: with ``isolated`` (setting ``parse_in_child_process``) in a child process, killed past
  the time limit or when the work is cancelled, even inside a library's single long call
  (:mod:`zhiku.extractors.parse_process`); its address space is capped too.
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from zhiku.core.cancellation import OverBudget, checkpoint, time_budget
from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError

MB = 1024 * 1024
#: What one parsed XML/HTML element costs in memory, about: an lxml node with its attributes
#: and the Python object the parser library wraps it in.
BYTES_PER_ELEMENT = 200
#: Formats whose parser builds a whole element tree (xlsx is read streaming, row by row).
TREE_FORMATS = frozenset({"docx", "pptx", "epub", "html"})
#: Elements an HTML page, EPUB, DOCX or PPTX may hold by default (a long book holds some tens of
#: thousands; Word writes about ten for a paragraph of one run).
MAX_ELEMENTS = 500_000
#: Cells a spreadsheet may hold by default (100,000 rows of 20 columns).
MAX_CELLS = 2_000_000
_MARKUP_SUFFIXES = (".xml", ".xhtml", ".html", ".htm", ".rels", ".opf", ".ncx")


class TooCostly(ExtractionError):
    """A file whose parse would exceed its budget: ``<format> too costly to parse (...)``."""

    def __init__(self, source: str, fmt: str, why: str) -> None:
        self.format = fmt
        super().__init__(source, f"{fmt.upper()} too costly to parse ({why})")


@dataclass(frozen=True)
class ParseBudget:
    """``seconds`` a parse may take (None: no limit), ``max_mb`` it may grow to, the most
    elements a markup or Office file and the most cells a spreadsheet may hold."""

    seconds: float | None = None
    max_mb: float = 256.0
    max_elements: int = MAX_ELEMENTS
    max_cells: int = MAX_CELLS
    #: parse in a child process killed when the work stops (:mod:`zhiku.extractors.parse_process`)
    isolated: bool = False

    @property
    def max_bytes(self) -> int:
        return int(self.max_mb * MB)


_budget: ContextVar[ParseBudget | None] = ContextVar("zhiku_parse_budget", default=None)
#: The budget outside any :func:`parse_budget` block: no time limit, the default size.
DEFAULT_BUDGET = ParseBudget()


def current_budget() -> ParseBudget:
    return _budget.get() or DEFAULT_BUDGET


@contextmanager
def parse_budget(budget: ParseBudget) -> Iterator[ParseBudget]:
    """Parse with ``budget`` in this block (this thread)."""
    reset = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(reset)


@contextmanager
def parsing(name: str, fmt: str) -> Iterator[ParseBudget]:
    """Run one parse on the current budget: past its seconds, :class:`TooCostly`."""
    budget = current_budget()
    started = time.monotonic()
    try:
        with time_budget(budget.seconds):
            yield budget
    except OverBudget:
        raise TooCostly(name, fmt, too_slow(time.monotonic() - started, budget.seconds or 0)) from None


def too_slow(spent: float, seconds: float) -> str:
    """Why a parse past its time limit was stopped, for :class:`TooCostly`."""
    return f"stopped after {spent:.0f} s; the limit is {seconds:g} s, setting parse_time_limit"


def check_elements(data: bytes, name: str, fmt: str, budget: ParseBudget) -> None:
    """:class:`TooCostly` when the elements of ``data`` (markup) would take more than the budget."""
    elements = count_elements(data)
    _check_tree(elements, len(data), name, fmt, budget)


def check_archive(data: bytes, name: str, fmt: str, budget: ParseBudget) -> None:
    """For a zip-based format: the inflated members and, for formats parsed into a tree, their
    XML elements (counted while inflating, a megabyte at a time) must fit the budget."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a readable zip: the format's parser says so in its own words
    with archive:
        if fmt not in TREE_FORMATS:
            return
        elements = inflated = 0
        for member in archive.infolist():
            if not member.filename.lower().endswith(_MARKUP_SUFFIXES):
                continue
            try:
                with archive.open(member) as stream:
                    tail = b""
                    for block in iter(lambda: stream.read(MB), b""):
                        checkpoint()
                        inflated += len(block)
                        elements += count_elements(tail + block) - count_elements(tail)
                        tail = block[-1:]
                        _check_tree(elements, inflated, name, fmt, budget)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
                return


def count_elements(markup: bytes) -> int:
    """Start tags, about: ``<`` not followed by ``/``, ``!`` or ``?``."""
    return markup.count(b"<") - markup.count(b"</") - markup.count(b"<!") - markup.count(b"<?")


def _check_tree(elements: int, size: int, name: str, fmt: str, budget: ParseBudget) -> None:
    cost = size + elements * BYTES_PER_ELEMENT
    if cost > budget.max_bytes:
        raise TooCostly(
            name,
            fmt,
            f"{elements:,} elements in {size / MB:.0f} MB of markup would take over "
            f"{budget.max_mb:g} MB to parse, setting parse_max_mb",
        )
    if elements > budget.max_elements:
        raise _too_many_elements(name, fmt, budget.max_elements)


def _too_many_elements(name: str, fmt: str, limit: int) -> TooCostly:
    return TooCostly(name, fmt, f"over {limit:,} elements, the limit set by parse_max_elements")


class ElementCounter:
    """Counts what an extractor makes of a file (paragraphs, shapes, slides) against the budget's
    ``max_elements``: the markup was counted before parsing, but a part the file refers to many
    times is parsed once and read each time. Past the limit, :class:`TooCostly`."""

    def __init__(self, name: str, fmt: str) -> None:
        self.name, self.format = name, fmt
        self.limit = current_budget().max_elements
        self.elements = 0

    def add(self, elements: int = 1) -> None:
        """Count ``elements`` more, at a :func:`checkpoint` (each is a step of the parse)."""
        checkpoint()
        self.elements += elements
        if self.elements > self.limit:
            raise _too_many_elements(self.name, self.format, self.limit)


def check_text(documents: list[Document], name: str, fmt: str, budget: ParseBudget) -> list[Document]:
    """The documents, unless their text is larger than the budget."""
    size = sum(len(document.text) for document in documents)
    if size > budget.max_bytes:
        why = f"{size / MB:.0f} M characters of text, over parse_max_mb {budget.max_mb:g}"
        raise TooCostly(name, fmt, why)
    return documents
