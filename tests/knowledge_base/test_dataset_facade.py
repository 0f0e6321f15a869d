"""The Dataset facade stays a facade: short, and with no database query of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import zhiku.knowledge_base.dataset as dataset_module
from tests.fixtures.delegation import delegated_names_reaching_their_collaborators
from zhiku import KnowledgeBase

#: Most lines ``dataset.py`` may hold; what grows past it belongs in a collaborator.
MAX_LINES = 250

SOURCE = Path(dataset_module.__file__).read_text(encoding="utf-8")


def imported_modules(source: str) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            modules.add(node.module)
    return modules


def test_dataset_module_is_at_most_250_lines() -> None:
    assert len(SOURCE.splitlines()) <= MAX_LINES


def test_dataset_module_builds_no_query() -> None:
    # queries are built with SQLAlchemy over the row models: the facade imports neither
    modules = imported_modules(SOURCE)
    assert not [name for name in modules if name == "sqlalchemy" or name.startswith("sqlalchemy.")]
    assert not [name for name in modules if name == "zhiku.core.db" or name.startswith("zhiku.core.db.")]


def test_imported_modules_sees_a_query_import() -> None:
    # the check above would pass vacuously if imports were not found
    found = imported_modules("from sqlalchemy import select\nimport zhiku.core.db.models\n")
    assert found == {"sqlalchemy", "zhiku.core.db.models"}


def test_every_delegated_method_reaches_its_collaborator(kb: KnowledgeBase) -> None:
    # a Delegated names its collaborator's attribute as a string: each must be set by __init__
    dataset = kb.create_dataset("facade")
    reached = delegated_names_reaching_their_collaborators(dataset)
    assert {"add_files", "documents", "update", "sync_folder", "sections"} <= reached
