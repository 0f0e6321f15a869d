"""What the console's pages share: paging arguments and the dataset a page is about."""

from __future__ import annotations

from dataclasses import dataclass

from flask import request

from zhiku.api.context import visible_dataset
from zhiku.console.forms import integer
from zhiku.knowledge_base import Dataset

PAGE_SIZE = 50
#: Pages beyond this are refused (a listing shows at most PAGE_SIZE * MAX_PAGE rows).
MAX_PAGE = 100_000


@dataclass(frozen=True)
class Paging:
    page: int
    size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size

    def pages(self, total: int) -> int:
        return max(1, -(-total // self.size))


def paging(size: int = PAGE_SIZE) -> Paging:
    return Paging(integer(request.args, "page", low=1, high=MAX_PAGE, default=1) or 1, size)


def dataset_of(dataset_id: str) -> Dataset:
    """The dataset if the signed-in key may use it; the API's 404 otherwise."""
    return visible_dataset(dataset_id)
