"""The scale-out vector store: a Qdrant collection through qdrant-client (server, local or memory)."""

from __future__ import annotations

from zhiku.datasource.points.collection import VectorSpec
from zhiku.datasource.points.qdrant import ClientCollection
from zhiku.datasource.points.server import QdrantServer
from zhiku.datasource.vector.dense import DEFAULT_HNSW_EF, DENSE, DenseVectorStore


class QdrantClientVectorStore(DenseVectorStore):
    """Cosine vector store in ``collection`` at ``location`` (created if missing).

    ``location``: a server URL, ``":memory:"``, or a directory for qdrant-client's local mode
    (exact search in Python, for small data; one process per directory).
    """

    def __init__(
        self,
        location: str,
        collection: str,
        dim: int,
        hnsw_ef: int = DEFAULT_HNSW_EF,
        server: QdrantServer | None = None,
    ) -> None:
        spec = VectorSpec(DENSE, dim)
        super().__init__(ClientCollection(location, collection, spec, server=server), dim, hnsw_ef)
        self.location = location
        self.collection = collection
