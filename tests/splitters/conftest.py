from __future__ import annotations

import pytest

from zhiku.splitters import TiktokenLength


@pytest.fixture(scope="session")
def length() -> TiktokenLength:
    return TiktokenLength()
