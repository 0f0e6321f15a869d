"""A shard too small to be split into parts searches with one pool thread whatever
``edge_search_threads`` allows: qdrant-edge's own default is 8 per shard on any machine, whose
idle threads spin for work and cost a small search more CPU than they save (a split shard's
threads are counted in ``test_edge_parts``). Counted in a fresh process (Linux names the pool's
threads ``edge-search-N``), so no other test's shards are in the count."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COUNT_POOL_THREADS = """
import os, sys
from pathlib import Path
import zhiku.benchmarking  # registers the fast "synthetic" embedding model
from zhiku import KnowledgeBase

settings = {} if sys.argv[2] == "default" else {"edge_search_threads": int(sys.argv[2])}
with KnowledgeBase.open(Path(sys.argv[1]), embedding_model="synthetic", **settings) as kb:
    ds = kb.create_dataset("pool")
    ds.add_text("longjing.md", "明前龙井在清明前采摘，滋味鲜爽。")
    assert ds.search("明前龙井", top_k=1), "nothing found"
    names = [Path(f"/proc/self/task/{tid}/comm").read_text().strip() for tid in os.listdir("/proc/self/task")]
    print(sum(name.startswith("edge-search") for name in names))
"""


def pool_threads(home: Path, setting: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", COUNT_POOL_THREADS, str(home), setting],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through Linux's /proc")
@pytest.mark.parametrize("setting", ["default", "8"])
def test_a_small_shard_searches_with_one_thread(tmp_path: Path, setting: str) -> None:
    shards = 2  # the dataset's vectors and its BM25 records
    assert pool_threads(tmp_path / "home", setting) == shards
