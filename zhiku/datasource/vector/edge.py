"""The default vector store: an embedded qdrant-edge shard, one directory per dataset."""

from __future__ import annotations

from pathlib import Path

from zhiku.datasource.points.collection import VectorSpec
from zhiku.datasource.points.edge import EdgeCollection
from zhiku.datasource.vector.dense import DEFAULT_HNSW_EF, DENSE, DenseVectorStore


class EdgeVectorStore(DenseVectorStore):
    """Cosine vector store in the shard directory ``path`` (created if missing).

    Single-process: a second open of ``path`` while it is open raises StoreError. Search scans
    exactly until :meth:`optimize` builds the HNSW graph (in a child process, searches go on; run
    it after ingest jobs), and always below ``index_threshold_kb`` of vectors (Qdrant's default:
    10,000 KB, ~6,500 384-d). ``build_time_limit``: seconds the build process may take (None:
    in proportion to the points), then it is killed and the previous index goes on serving.
    ``search_threads``: threads the shard reads its segments with (see ``EdgeCollection``).
    """

    def __init__(
        self,
        path: Path,
        dim: int,
        hnsw_ef: int = DEFAULT_HNSW_EF,
        index_threshold_kb: int | None = None,
        build_time_limit: float | None = None,
        search_threads: int = 1,
    ) -> None:
        collection = EdgeCollection(
            Path(path),
            VectorSpec(DENSE, dim),
            index_threshold_kb=index_threshold_kb,
            build_time_limit=build_time_limit,
            search_threads=search_threads,
        )
        super().__init__(collection, dim, hnsw_ef)
        self.path = Path(path)
