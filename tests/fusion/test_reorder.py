from __future__ import annotations

import pytest

from zhiku.fusion.reorder import reorder


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, []),
        (1, [1]),
        (2, [1, 2]),
        (3, [1, 3, 2]),
        (4, [1, 3, 4, 2]),
        (5, [1, 3, 5, 4, 2]),
        (6, [1, 3, 5, 6, 4, 2]),
        (7, [1, 3, 5, 7, 6, 4, 2]),
    ],
)
def test_odd_ranks_then_even_ranks_reversed(n: int, expected: list[int]) -> None:
    ranks = list(range(1, n + 1))
    assert reorder(ranks) == expected
    assert ranks == list(range(1, n + 1))  # input left alone


def test_accepts_any_sequence() -> None:
    assert reorder(("a", "b", "c")) == ["a", "c", "b"]
