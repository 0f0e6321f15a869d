"""SIGTERM stops ``zhiku serve`` while a document is being parsed — the parsing child process is
killed, or, parsing in the indexing thread, the run is cancelled at its next checkpoint (not left
running until the process dies) — and the document is resumed to ``completed`` by the next start.

The slow parse is an installed extractor plug-in (entry point ``extractors.txt``) that loops on
:func:`~zhiku.core.cancellation.checkpoint` while a gate file exists, and records whether it
was cancelled."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.api.test_server import Server, _cli, _client, _wait

PLUGIN = '''
import os
import time
from pathlib import Path

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.core.errors import Cancelled
from zhiku.extractors.base import read_bytes


class GatedText:
    """Reads a text file; while the gate file exists it keeps parsing (checkpoint by checkpoint)."""

    suffixes = (".txt",)

    @staticmethod
    def accepts(head):
        return True

    def extract(self, source, *, name):
        gate = Path(os.environ["ZHIKU_TEST_GATE"])
        if gate.exists():
            (gate.parent / "started").write_text(str(os.getpid()))
            try:
                while gate.exists():
                    checkpoint()
                    time.sleep(0.02)
            except Cancelled as exc:
                (gate.parent / "cancelled").write_text(str(exc))
                raise
        return [Document(text=read_bytes(source, name).decode("utf-8"), metadata={"source": name})]
'''


def _install(site: Path) -> None:
    site.mkdir()
    (site / "zhiku_gated_text.py").write_text(PLUGIN)
    info = site / "zhiku_gated_text-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zhiku-gated-text\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[zhiku.plugins]\nextractors.txt = zhiku_gated_text:GatedText\n")


@pytest.mark.parametrize("in_child", [True, False], ids=["child-process", "in-thread"])
def test_sigterm_stops_a_running_parse_and_the_next_start_resumes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_child: bool
) -> None:
    site, home, gate = tmp_path / "site", tmp_path / "home", tmp_path / "gate"
    _install(site)
    repo = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(site), str(repo), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.setenv("ZHIKU_TEST_GATE", str(gate))
    monkeypatch.setenv("ZHIKU_PARSE_IN_CHILD_PROCESS", "true" if in_child else "false")
    _cli(home, "init")
    key = _cli(home, "apikey", "create", "--name", "shutdown").stdout.strip()
    gate.write_text("closed")

    server = Server(home)
    try:
        with _client(server, key) as client:
            dataset = client.post("/datasets", json={"name": "tea", "embedding_model": "use"}).json()["id"]
            created = client.post(
                f"/datasets/{dataset}/document/create-by-text",
                json={"name": "brewing", "text": "Oolong is brewed at 90 degrees for three minutes."},
            ).json()
            batch = created["batch"]
            deadline = time.monotonic() + 120  # hang guard
            while not (tmp_path / "started").exists():
                assert time.monotonic() < deadline and server.process.poll() is None
                time.sleep(0.05)
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=60)  # hang guard: a stopped run ends at its next checkpoint
        except subprocess.TimeoutExpired:
            pytest.fail("zhiku serve did not exit after SIGTERM")
        parser = int((tmp_path / "started").read_text())
        if in_child:  # the parsing child was killed with its server
            assert parser != server.process.pid
            with pytest.raises(ProcessLookupError):
                os.kill(parser, 0)
        else:  # the parse was cancelled cooperatively, not abandoned to die with the process
            assert parser == server.process.pid
            assert "stopping" in (tmp_path / "cancelled").read_text()
    finally:
        server.stop()

    gate.unlink()
    server = Server(home)
    try:
        with _client(server, key) as client:
            assert _wait(client, dataset, batch)["indexing_status"] == "completed"
            found = client.post(
                f"/datasets/{dataset}/retrieve",
                json={"query": "oolong", "retrieval_model": {"search_method": "full_text_search"}},
            ).json()["records"]
            assert found and "Oolong" in found[0]["segment"]["content"]
    finally:
        server.stop()
