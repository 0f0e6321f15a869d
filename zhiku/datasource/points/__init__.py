"""What the dense vector stores and the sparse BM25 stores share.

``base.py`` is the one store contract (:class:`SegmentStore`, with ``search`` typed per family)
and the bookkeeping every Qdrant-backed store inherits (:class:`PointStore`: ids, enable and
disable, deletes, flush, lifecycle). ``collection.py`` is the view of a Qdrant collection both
families write through; ``edge.py`` (embedded qdrant-edge shard) and ``qdrant.py`` (qdrant-client
collection) are its two backends, each serving dense and sparse vectors alike. ``pgvector.py`` is
the same bookkeeping on a PostgreSQL table, which the pgvector stores of both families extend.
"""
