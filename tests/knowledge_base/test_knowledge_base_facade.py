"""The KnowledgeBase facade stays a facade: a short module, a short class, its calls delegated."""

from __future__ import annotations

import ast
from pathlib import Path

import zhiku.knowledge_base.knowledge_base as knowledge_base_module
from tests.fixtures.delegation import delegated_names_reaching_their_collaborators
from zhiku import KnowledgeBase

#: Most lines ``knowledge_base.py`` may hold, and its ``KnowledgeBase`` class; what grows past
#: them belongs in a collaborator.
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 300

SOURCE = Path(knowledge_base_module.__file__).read_text(encoding="utf-8")


def class_lines(source: str, name: str) -> int:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == name:
            assert node.end_lineno is not None
            return node.end_lineno - node.lineno + 1
    raise AssertionError(f"no class {name} in the source")


def test_knowledge_base_module_is_at_most_500_lines() -> None:
    assert len(SOURCE.splitlines()) <= MAX_MODULE_LINES


def test_knowledge_base_class_is_at_most_300_lines() -> None:
    assert class_lines(SOURCE, "KnowledgeBase") <= MAX_CLASS_LINES


def test_class_lines_counts_from_the_class_line_to_its_last() -> None:
    # the check above would pass vacuously if the class were measured wrongly
    assert class_lines("x = 1\n\nclass A:\n    a = 1\n\n    def f(self) -> None:\n        pass\n", "A") == 5


def test_every_delegated_method_reaches_its_collaborator(kb: KnowledgeBase) -> None:
    # a Delegated names its collaborator's attribute as a string: each must be set by __init__
    reached = delegated_names_reaching_their_collaborators(kb)
    assert {"create_dataset", "retrieve", "ask", "chat_model", "dataset_index"} <= reached
