"""The ``zhiku`` command run in process on a temp data directory with the fast ``use`` model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest
from click.testing import CliRunner, Result

from zhiku.cli import main


class Run(Protocol):
    def __call__(self, *args: str, code: int | None = 0, stdin: str | None = None) -> Result: ...


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """``run("search", ...)``: the command's result, its exit status checked against ``code``
    (None: not checked)."""
    monkeypatch.setenv("ZHIKU_EMBEDDING_MODEL", "use")
    runner = CliRunner()
    home = tmp_path / "home"

    def invoke(*args: str, code: int | None = 0, stdin: str | None = None) -> Result:
        result = runner.invoke(main, ["--home", str(home), *args], input=stdin, catch_exceptions=False)
        if code is not None:
            assert result.exit_code == code, result.output
        return result

    return invoke


@pytest.fixture
def run_json(run: Run) -> Callable[..., Any]:
    """``run_json("document", "list", ...)``: the command run with ``--json``, its stdout parsed."""

    def invoke(*args: str, code: int = 0) -> Any:
        return json.loads(run(*args, "--json", code=code).stdout)

    return invoke


#: The tea dataset's files: two documents named ``a.txt`` (in different folders), one ``b.txt``,
#: and a broken PDF that fails.
TEA_FILES = {
    "a.txt": "Longjing is a green tea from Hangzhou, pan-fired by hand.",
    "sub/a.txt": "Oolong tea is half oxidised and rolled into tight balls.",
    "b.txt": "Pu-erh is aged for years in bamboo baskets.",
}


@pytest.fixture
def tea(run: Run, tmp_path: Path) -> Path:
    """Dataset ``tea`` holding :data:`TEA_FILES` and ``bad.pdf`` (status ``error``); the folder."""
    folder = tmp_path / "tea"
    for name, text in TEA_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "bad.pdf").write_bytes(b"%PDF-1.5 nothing else")
    run("ingest", str(folder), "--dataset", "tea", "--create", code=1)
    return folder
