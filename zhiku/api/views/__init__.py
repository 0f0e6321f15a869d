"""The endpoint groups of ``/v1``, each a :class:`~zhiku.api.routing.Routes`."""

from zhiku.api.views.chat import routes as answers
from zhiku.api.views.child_chunks import routes as child_chunks
from zhiku.api.views.datasets import routes as datasets
from zhiku.api.views.documents import routes as documents
from zhiku.api.views.external import routes as external
from zhiku.api.views.meta import routes as meta
from zhiku.api.views.metadata import routes as metadata
from zhiku.api.views.preview import routes as preview
from zhiku.api.views.retrieval import routes as retrieval
from zhiku.api.views.sections import routes as sections
from zhiku.api.views.segments import routes as segments

ALL = (
    datasets,
    documents,
    preview,
    metadata,
    sections,
    segments,
    child_chunks,
    retrieval,
    external,
    answers,
    meta,
)

__all__ = ["ALL"]
