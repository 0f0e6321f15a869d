"""Up to how many admitted points an embedded dense shard surely scans a filtered search.

Qdrant plans each segment's filtered search itself: when the filter admits fewer points than the
segment's full-scan bound (in KB of vectors, fixed in the segment's config when it was built),
it scans them, by their int8 copies where the segment has them; else it walks the graph, which
a filter admitting a small share of the points strands (recall@10 0.18 at 10% of 100,000). So a
search is left to Qdrant's plan only below the smallest bound of the shard's graph segments, read
from their configs: a shard built before the bound was raised keeps its old one until its next
build, and a config that cannot be read gives no bound (the search is then asked to be exact).
"""

from __future__ import annotations

import json
from pathlib import Path

#: Qdrant keeps each segment's config in ``segments/<id>/segment.json``.
_SEGMENT_CONFIGS = "segments/*/segment.json"


def scanned_at_most(shard: Path, vector: str, dim: int, configured_kb: int) -> int:
    """The smallest full-scan bound of the shard's graph segments, in points of ``dim`` float32
    components, less one (a segment scans when the most its filter may admit is under the
    bound); ``configured_kb``'s where no segment has a graph yet (every search scans); 0 when a
    segment's config cannot be read."""
    bounds: list[int] = []
    for config in Path(shard).glob(_SEGMENT_CONFIGS):
        try:
            index = json.loads(config.read_text(encoding="utf-8"))["config"]["vector_data"][vector]["index"]
            if index["type"] == "hnsw":
                bounds.append(int(index["options"]["full_scan_threshold"]))
        except (OSError, ValueError, KeyError, TypeError):
            return 0
    return max(min(bounds, default=configured_kb) * 1024 // (4 * dim) - 1, 0)
