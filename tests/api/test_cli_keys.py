"""``zhiku apikey create|list|revoke`` on the database alone."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from zhiku import KnowledgeBase
from zhiku.api.keys import ApiKeys
from zhiku.cli import main


def test_create_scoped_list_and_revoke(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.create_dataset("tea")
        sessions = kb.sessions
        runner = CliRunner()
        created = runner.invoke(
            main, ["--home", str(home), "apikey", "create", "--dataset", "tea", "--name", "app"]
        )
        assert created.exit_code == 0, created.output
        secret = created.stdout.strip()
        key = ApiKeys(sessions).verify(secret)
        assert key is not None and key.datasets == (dataset.id,) and key.name == "app"

        listed = runner.invoke(main, ["--home", str(home), "apikey", "list"])
        assert key.prefix in listed.output and "active" in listed.output and secret not in listed.output
        unknown = runner.invoke(main, ["--home", str(home), "apikey", "create", "--dataset", "nope"])
        assert unknown.exit_code != 0 and "no dataset 'nope'" in unknown.output

        revoked = runner.invoke(main, ["--home", str(home), "apikey", "revoke", key.prefix])
        assert revoked.exit_code == 0 and key.id in revoked.output
        assert ApiKeys(sessions).verify(secret) is None
