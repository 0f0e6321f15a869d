"""Freed memory goes back to the system after a piece of work, not kept at its peak: a parse in a
worker thread leaves its heap full of freed blocks between a few survivors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from zhiku.core.memory import malloc_trim

SCRIPT = textwrap.dedent(
    """
    import os, threading
    from zhiku.core.memory import release_memory

    def rss_mb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    survivors = []

    def parse():
        blocks = [bytes(2048) for _ in range(150_000)]  # ~300 MB of parse-sized pieces
        survivors.extend(blocks[::64])  # what outlives it, spread over the whole heap
        del blocks

    worker = threading.Thread(target=parse)
    worker.start()
    worker.join()
    peak = rss_mb()
    release_memory()
    print(peak, rss_mb())
    """
)


@pytest.mark.skipif(malloc_trim() is None or not sys.platform.startswith("linux"), reason="glibc only")
def test_release_memory_returns_the_freed_pages_of_a_parse() -> None:
    run = [sys.executable, "-c", SCRIPT]
    done = subprocess.run(run, capture_output=True, text=True, timeout=300, check=True)
    peak, after = map(float, done.stdout.split())
    assert peak > 200, done.stdout  # the work did hold its memory until then
    assert after < peak / 2, done.stdout
