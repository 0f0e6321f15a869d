"""Child process for the resume test: ingests one long text with the slow counting model until
the parent kills it. Arguments: home, dataset name, text file."""

from __future__ import annotations

import sys

from tests.knowledge_base.slow_embedding import register
from zhiku import KnowledgeBase


def main() -> None:
    home, dataset, text_file = sys.argv[1:4]
    register()
    with KnowledgeBase.open(home) as kb:
        kb.dataset(dataset).add_file(text_file)


if __name__ == "__main__":
    main()
