"""The corpus statistics of a BM25 table on PostgreSQL, in two tables beside it:

- ``<table>_terms``: how many records hold each term (every record, disabled ones and summaries
  included, as in Qdrant);
- ``<table>_stats``: one row, the number of records and their total length.

The store changes them in the transaction of each write, holding the stats row's lock, so they
cannot drift from the records (see :mod:`zhiku.datasource.fulltext.pgvector`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Integer,
    MetaData,
    SmallInteger,
    Table,
    any_,
    delete,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, insert

_INT_ARRAY = ARRAY(Integer)
_BIG_ARRAY = ARRAY(BigInteger)
#: The key of the stats table's one row.
STATS_ROW = 1


class CorpusStatistics:
    """Records per term, the record count and their total length of the BM25 table
    ``table_name``; its two tables are added to ``metadata``, created and dropped with it."""

    def __init__(self, metadata: MetaData, table_name: str) -> None:
        self.term_docs = Table(
            f"{table_name}_terms",
            metadata,
            Column("term", Integer, primary_key=True),
            Column("docs", BigInteger, nullable=False),
        )
        self.stats = Table(
            f"{table_name}_stats",
            metadata,
            Column("id", SmallInteger, primary_key=True),
            Column("docs", BigInteger, nullable=False),
            Column("length", BigInteger, nullable=False),
        )

    def create_row(self, connection: Connection) -> None:
        """The stats row of an empty corpus, unless there is one (the tables exist)."""
        connection.execute(
            insert(self.stats).values(id=STATS_ROW, docs=0, length=0).on_conflict_do_nothing()
        )

    def read(self, connection: Connection, *, lock: bool = False) -> tuple[int, int]:
        """The number of records and their total length (``lock``: held until the commit)."""
        statement = select(self.stats.c.docs, self.stats.c.length).where(self.stats.c.id == STATS_ROW)
        docs, length = connection.execute(statement.with_for_update() if lock else statement).one()
        return int(docs), int(length)

    def write(self, connection: Connection, docs: int, length: int) -> None:
        """Set the number of records and their total length (read with ``lock`` first)."""
        connection.execute(update(self.stats).values(docs=docs, length=length))

    def change_term_docs(self, connection: Connection, change: Counter[int]) -> None:
        """Add ``change`` to the terms' record counts and forget the terms no record holds any
        more. One statement over two arrays: a batch of 512 records changes some 10,000 terms,
        which as many parameter rows took ten times longer."""
        changed = sorted((term, n) for term, n in change.items() if n)
        if not changed:
            return
        terms = [term for term, _ in changed]
        rows = select(
            func.unnest(literal(terms, _INT_ARRAY)), func.unnest(literal([n for _, n in changed], _BIG_ARRAY))
        )
        statement = insert(self.term_docs).from_select(["term", "docs"], rows)
        statement = statement.on_conflict_do_update(
            index_elements=[self.term_docs.c.term],
            set_={"docs": self.term_docs.c.docs + statement.excluded.docs},
        )
        connection.execute(statement)
        fewer = [term for term, n in changed if n < 0]
        if fewer:
            connection.execute(
                delete(self.term_docs).where(
                    self.term_docs.c.term == any_(literal(fewer, _INT_ARRAY)), self.term_docs.c.docs <= 0
                )
            )

    def held(self, connection: Connection, terms: Sequence[int]) -> tuple[int, dict[int, int]]:
        """The number of records (at least 1), and how many records hold each of ``terms`` that
        some record holds (one statement: the stats row beside the terms' rows, a row of nulls
        when none is held)."""
        held = self.term_docs.c.term == any_(literal(list(terms), _INT_ARRAY))
        rows = connection.execute(
            select(self.stats.c.docs, self.term_docs.c.term, self.term_docs.c.docs)
            .select_from(self.stats.outerjoin(self.term_docs, held))
            .where(self.stats.c.id == STATS_ROW)
        ).all()
        return max(int(rows[0][0]), 1), {
            int(term): int(count) for _, term, count in rows if term is not None and count > 0
        }


#: Held: the number of records (at least 1), and how many hold each of some terms.
Held = tuple[int, dict[int, int]]


class RecentHeld:
    """The statistics the latest searches read, by their query terms, for ``seconds``: what the
    relevance scale asks next (the most a query could score) is then read from the statistics
    its scores were computed with, without a transaction of its own. At most ``size`` queries."""

    def __init__(self, seconds: float = 5.0, size: int = 256) -> None:
        self.seconds = seconds
        self.size = size
        self._lock = threading.Lock()
        self._held: OrderedDict[frozenset[int], tuple[float, Held]] = OrderedDict()

    def remember(self, terms: Iterable[int], held: Held) -> None:
        with self._lock:
            key = frozenset(terms)
            self._held[key] = (time.monotonic(), held)
            self._held.move_to_end(key)
            while len(self._held) > self.size:
                self._held.popitem(last=False)

    def get(self, terms: Iterable[int]) -> Held | None:
        with self._lock:
            found = self._held.get(frozenset(terms))
        if found is None or time.monotonic() - found[0] > self.seconds:
            return None
        return found[1]
