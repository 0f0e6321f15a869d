"""An installed plug-in package (entry points in group ``zhiku.plugins``) is used by name.

The package is a module and a ``*.dist-info`` with ``entry_points.txt`` on a fresh ``sys.path``
entry — what ``pip install`` leaves behind — and the checks run in a child process, so the
plug-ins never enter this process's registries. Its extractor ``extractors.txt`` replaces the
built-in text reader; its splitter ``splitters.lines`` is chosen by a dataset's process rule,
set through the HTTP API, and by a per-document process rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

PLUGIN = '''
from zhiku.core.documents import Chunk, Document
from zhiku.extractors.base import read_bytes


class ShoutingText:
    """Reads a text file upper-cased, so a test can see which extractor ran."""

    suffixes = (".txt",)

    @staticmethod
    def accepts(head):
        return True

    def extract(self, source, *, name):
        text = read_bytes(source, name).decode("utf-8").upper()
        return [Document(text=text, metadata={"source": name, "reader": "shouting"})]


class LineSplitter:
    """One chunk per non-blank line."""

    def __init__(self, *, max_tokens, chunk_overlap, separator, length):
        self.max_tokens = max_tokens

    def split(self, documents):
        chunks = []
        for document in documents:
            for line in document.text.splitlines():
                text = line.strip()
                if text:
                    chunks.append(Chunk(text, len(chunks), len(text.split()), dict(document.metadata)))
        return chunks
'''

CHILD = """
import json, sys, time

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from pathlib import Path

from tests.api.conftest import Api, context_of, make_app

app = make_app(Path(sys.argv[3]))
context = context_of(app)
try:
    _, secret = context.keys.create(name="plugins")
    api = Api(app.test_client(), secret)
    out = {}

    # The dataset's own process rule names the splitter; documents inherit it.
    dataset_id = api.create_dataset("lines", process_rule={"splitter": "lines"})
    document_id = api.indexed_text(dataset_id, "tea", "green tea\\nblack tea\\n\\noolong")
    segments = api.get(f"/v1/datasets/{dataset_id}/documents/{document_id}/segments").json["data"]
    out["dataset_rule"] = sorted(s["content"] for s in segments)
    out["dataset"] = api.get(f"/v1/datasets/{dataset_id}").json

    # A document's process rule names it too (the dataset keeps the default splitter).
    other_id = api.create_dataset("recursive")
    document_id = api.indexed_text(other_id, "tea", "puer\\njasmine", process_rule={"splitter": "lines"})
    segments = api.get(f"/v1/datasets/{other_id}/documents/{document_id}/segments").json["data"]
    out["document_rule"] = sorted(s["content"] for s in segments)

    # An unknown splitter is refused by name, before anything is queued.
    refused = api.post(f"/v1/datasets/{other_id}/document/create-by-text",
                       json={"name": "x", "text": "y", "process_rule": {"splitter": "paragraphs"}})
    out["unknown"] = [refused.status_code, refused.json["message"]]
finally:
    context.close()
print(json.dumps(out))
"""


def _install(site: Path) -> None:
    """The package as pip would leave it: a module and its dist-info with entry points."""
    site.mkdir()
    (site / "zhiku_tiny_plugins.py").write_text(PLUGIN)
    info = site / "zhiku_tiny_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zhiku-tiny-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[zhiku.plugins]\n"
        "extractors.txt = zhiku_tiny_plugins:ShoutingText\n"
        "splitters.lines = zhiku_tiny_plugins:LineSplitter\n"
    )


def test_an_installed_extractor_and_splitter_are_used_by_name(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _install(site)
    repo = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(site), str(repo), str(tmp_path / "home")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])},
    )
    assert child.returncode == 0, child.stderr[-3000:]
    out = json.loads(child.stdout.strip().splitlines()[-1])

    assert out["dataset_rule"] == ["BLACK TEA", "GREEN TEA", "OOLONG"]  # both plug-ins ran
    assert out["dataset"]["process_rule"]["splitter"] == "lines"  # stored with the dataset
    assert out["document_rule"] == ["JASMINE", "PUER"]
    assert out["unknown"][0] == 400 and "paragraphs" in out["unknown"][1]
    assert "zhiku_tiny_plugins" not in sys.modules  # this process never loaded them
