"""A second process beside a running ``zhiku serve`` on the same data directory never damages the
server's embedded stores: ten rounds of CLI ``search``, ``ingest`` and ``dataset show`` while the
server indexes uploads — search and ingest go through the server's API and work — then every
upload completes and the server shuts down cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.test_server import Server, _cli, _client, _wait
from tests.fixtures.make_files import make_text

pytestmark = pytest.mark.reliability

ROUNDS = 10


def _beside(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "zhiku.cli", "--home", str(home), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_cli_beside_a_serving_server_leaves_its_stores_intact(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(home, "init")
    key = _cli(home, "apikey", "create", "--name", "beside").stdout.strip()
    server = Server(home)
    try:
        server_file = home / "server.json"
        assert server_file.stat().st_mode & 0o777 == 0o600  # its token is a key to every dataset
        with _client(server, key) as client:
            dataset = client.post("/datasets", json={"name": "beside", "embedding_model": "use"}).json()["id"]
            batches = []
            for round_number in range(ROUNDS):
                created = client.post(
                    f"/datasets/{dataset}/document/create-by-text",
                    json={
                        "name": f"round-{round_number}",
                        "text": f"Round {round_number}: the kiln-{round_number} oolong is roasted twice.",
                    },
                )
                assert created.status_code == 200, created.text
                batches.append(created.json()["batch"])
                local = make_text(
                    tmp_path / f"local-{round_number}.txt", f"Local note {round_number} on kettles."
                )
                commands = [
                    _beside(home, "search", "roasted oolong", "--dataset", "beside"),
                    _beside(home, "ingest", str(local), "--dataset", "beside"),
                    _beside(home, "dataset", "show", "beside"),
                ]
                outputs = []
                for command in commands:
                    out, err = command.communicate(timeout=120)
                    assert "Traceback" not in err, err
                    assert command.returncode == 0, (command.args, out, err)
                    outputs.append(out)
                searched, ingested, shown = outputs
                assert searched.startswith("1.") or round_number == 0, searched
                assert "through zhiku serve" in ingested and "1 indexed, 0 failed" in ingested, ingested
                assert "beside" in shown  # reads need no store
            for batch in batches:
                status = _wait(client, dataset, batch)
                assert status["indexing_status"] == "completed", status
            hits = client.post(f"/datasets/{dataset}/retrieve", json={"query": "kiln-7 oolong"}).json()
            assert any("kiln-7" in r["segment"]["content"] for r in hits["records"])
            # what the CLI ingested through the server is served, and not ingested twice
            again = _beside(home, "ingest", str(tmp_path / "local-3.txt"), "--dataset", "beside")
            out, err = again.communicate(timeout=120)
            assert again.returncode == 0 and "skipped as duplicates" in out, (out, err)
            found = _beside(home, "search", "Local note 3 kettles", "--dataset", "beside", "--json")
            out, err = found.communicate(timeout=120)
            assert found.returncode == 0, err
            assert any("Local note 3" in hit["content"] for hit in json.loads(out)), out
    finally:
        server.process.send_signal(signal.SIGTERM)
        output, _ = server.process.communicate(timeout=60)
    assert server.process.returncode == 0, output
    assert "close failed" not in output and "Traceback" not in output, output
    assert not server_file.exists()  # commands after the server stops open the stores again
    # and the next owner opens the stores without repair or error
    assert "beside" in _cli(home, "dataset", "show", "beside").stdout
