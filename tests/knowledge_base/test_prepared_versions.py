"""A version handed from a worker to the store owner keeps everything the write needs,
parent-child children and summaries included (they are what the stores index)."""

from __future__ import annotations

import json

from zhiku.core.documents import ChildChunk, Segment
from zhiku.knowledge_base.indexing.dataset_index import DocumentVersion
from zhiku.knowledge_base.runtime.prepared_versions import _payload, _version


def test_a_parent_child_version_survives_the_hand_over() -> None:
    child = ChildChunk(
        id="c1", position=0, content="绿茶用八十度的水冲泡", tokens=9, hash="h", keywords=["绿茶"]
    )
    parent = Segment(
        id="s1", document_id="d1", position=0, content="绿茶用八十度的水冲泡。乌龙茶用沸水。", tokens=20,
        hash="p", metadata={"page": 1}, children=[child],
        summary=ChildChunk(id="m1", position=0, content="绿茶的冲泡水温", tokens=5, hash="m"),
    )
    plain = Segment(id="s2", document_id="d1", position=1, content="black tea", tokens=2, hash="q")
    version = DocumentVersion("d1", [parent, plain], [{"position": 3, "reason": "bad"}], "sha")
    stored = json.loads(json.dumps(_payload(version)))  # as the JSON column keeps it
    back = _version("d1", stored)
    assert back.segments == [parent, plain]
    assert isinstance(back.segments[0].children[0], ChildChunk)
    assert back.failed_chunks == version.failed_chunks and back.file_hash == "sha"
