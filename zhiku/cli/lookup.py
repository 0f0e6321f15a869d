"""Finding the documents a command names: by id, or by a name only one document has."""

from __future__ import annotations

from collections.abc import Sequence

from zhiku.core.errors import InvalidInput, NotFound
from zhiku.knowledge_base import Dataset, DocumentInfo


class AmbiguousName(InvalidInput):
    """A document name several documents share: the user must give one of their ids."""

    code = "ambiguous_name"

    def __init__(self, message: str, candidates: Sequence[DocumentInfo]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


def find_document(dataset: Dataset, id_or_name: str) -> DocumentInfo:
    """The document with this id, else the only one with this name; NotFound or AmbiguousName
    (listing the candidates' ids, statuses and dates) otherwise."""
    try:
        return dataset.document(id_or_name)
    except NotFound:
        pass
    matches = dataset.documents(name=id_or_name)
    if not matches:
        raise NotFound(f"no document {id_or_name!r} in dataset {dataset.name!r}")
    if len(matches) > 1:
        candidates = "; ".join(
            f"{info.id} ({info.status}, {info.source or f'added {info.created_at:%Y-%m-%d %H:%M:%S}'})"
            for info in matches
        )
        raise AmbiguousName(
            f"{len(matches)} documents are named {id_or_name!r} in dataset {dataset.name!r}; "
            f"give one of their ids: {candidates}",
            matches,
        )
    return matches[0]


def find_documents(dataset: Dataset, ids_or_names: Sequence[str]) -> list[DocumentInfo]:
    """Each named document, all found before any is changed (a repeated one counts once)."""
    found = {info.id: info for info in (find_document(dataset, wanted) for wanted in ids_or_names)}
    return list(found.values())
