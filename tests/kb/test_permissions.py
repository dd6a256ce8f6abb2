"""Files the knowledge base writes follow the person's umask: `umask 077` keeps them private."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.files import write_text_atomic
from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.store import PassageStore
from tests.conftest import SEED_DATA


@pytest.fixture(params=[0o077, 0o022, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    value: int = request.param
    old = os.umask(value)
    try:
        yield value
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_files_and_folders_follow_the_umask(
    tmp_path: Path, umask: int, capsys: pytest.CaptureFixture[str]
) -> None:
    file_mode, dir_mode = 0o666 & ~umask, 0o777 & ~umask
    kb = tmp_path / "kb"
    assert main(["kb", "import", str(SEED_DATA), "--kb", str(kb)]) == 0  # Creates the folder.
    store = PassageStore(kb)
    store.add(Passage(id="new-one", text="hello"))
    seen = store.get("new-one")
    store.save(seen.passage.model_copy(update={"text": "hello again"}), based_on=seen.revision)
    export = tmp_path / "export.json"
    assert main(["kb", "export", "--output", str(export), "--kb", str(kb)]) == 0
    capsys.readouterr()

    [version] = (kb / ".history" / "new-one").iterdir()
    for path in [kb / "new-one.json", kb / "helmet.json", version, export, kb / ".lock"]:
        assert mode(path) == file_mode, path
    for path in [kb, kb / ".history", kb / ".history" / "new-one"]:
        assert mode(path) == dir_mode, path


def test_a_replaced_file_keeps_the_mode_it_was_given(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "shared.json"
    path.write_text("{}")
    path.chmod(0o640)
    write_text_atomic(path, '{"new": true}')
    assert mode(path) == 0o640
    assert list(tmp_path.glob(".*.tmp")) == []


def test_the_data_folder_made_for_the_first_knowledge_base_is_private(
    tmp_path: Path, umask: int
) -> None:
    """The default knowledge base is copied into the user's data folder, where the database is
    kept too: the first run makes that folder, and it must be private like the database's."""
    from chatbot.config import load_settings

    kb = Path(load_settings().knowledge_base.path)
    folder = tmp_path / "data" / "helpdesk"
    assert kb.parent == folder
    assert (kb / "refund-time.json").is_file()
    assert mode(folder) == 0o700
