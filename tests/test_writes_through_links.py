"""A file the help desk rewrites that is a symbolic link is written through to its target, as
editors and git do: the settings file linked into a dotfiles repository, a replay cache linked to
a team's shared one. The write-temporary-and-rename replaced the link with a plain file, and the
file it pointed at was left unchanged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chatbot.config import load_settings
from chatbot.errors import HelpdeskError
from chatbot.files import write_text_atomic
from chatbot.settings_file import save_setting
from tests.cli_run import run_cli
from tests.valen_server import ValenTestServer

QUESTION = "I was charged twice for the same ride, can I get my money back?"


def linked(link: Path, target: Path) -> None:
    """`link` made a relative symbolic link to `target`, as a dotfiles manager makes them."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


def test_saving_the_agents_name_writes_into_the_file_the_settings_link_leads_to(
    tmp_path: Path,
) -> None:
    target = tmp_path / "dotfiles" / "helpdesk.toml"
    target.parent.mkdir()
    target.write_text("# mine\n[engine]\nthreshold = 0.8\n")
    target.chmod(0o640)
    link = tmp_path / "config" / "helpdesk" / "config.toml"  # Where the settings are read.
    linked(link, target)

    assert save_setting("agent", "name", "Ana") == link
    assert link.is_symlink()
    assert target.read_text() == '# mine\n[engine]\nthreshold = 0.8\n\n[agent]\nname = "Ana"\n'
    assert target.stat().st_mode & 0o777 == 0o640  # Kept, as for any file replaced.
    assert sorted(p.name for p in target.parent.iterdir()) == ["helpdesk.toml"]  # No leftover.
    assert sorted(p.name for p in link.parent.iterdir()) == ["config.toml"]
    settings = load_settings()
    assert (settings.agent.name, settings.engine.threshold) == ("Ana", 0.8)


def test_a_settings_link_to_a_file_not_made_yet_makes_it_there(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "helpdesk.toml"
    target.parent.mkdir()
    link = tmp_path / "config" / "helpdesk" / "config.toml"
    linked(link, target)
    save_setting("agent", "name", "Ana")
    assert link.is_symlink()
    assert target.read_text() == '[agent]\nname = "Ana"\n'


def test_a_loop_of_links_is_one_line_and_nothing_is_replaced(tmp_path: Path) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.symlink_to(second.name)
    second.symlink_to(first.name)
    with pytest.raises(HelpdeskError, match="Too many levels of symbolic links"):
        save_setting("agent", "name", "Ana", path=first)
    assert first.is_symlink() and second.is_symlink()


def test_the_shared_write_helper_writes_through_a_chain_of_links(tmp_path: Path) -> None:
    target = tmp_path / "real" / "file.json"
    target.parent.mkdir()
    target.write_text("old")
    middle = tmp_path / "middle.json"
    linked(middle, target)
    outer = tmp_path / "outer" / "file.json"
    linked(outer, middle)
    write_text_atomic(outer, "new")
    assert (outer.is_symlink(), middle.is_symlink(), target.read_text()) == (True, True, "new")
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


def test_recording_into_a_linked_cache_records_into_the_shared_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, valen_server: ValenTestServer
) -> None:
    shared = tmp_path / "shared" / "team-cache.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"format": "helpdesk-valen-replay/1", "entries": {}}))
    link = tmp_path / "linkcache.json"
    linked(link, shared)
    code, _, err = run_cli(capsys, "ask", QUESTION, "--replay", "record", "--cache", str(link),
                           "--base-url", valen_server.base_url, "-k", "2")  # fmt: skip
    assert code == 0 and err == "", err
    assert link.is_symlink()
    entries = json.loads(shared.read_text())["entries"]
    assert len(entries) == 2
    # Locked beside the file written, never beside a link: two links to one shared cache are
    # one lock. No temporary file is left either.
    assert not (tmp_path / ".linkcache.json.lock").exists()
    assert {p.name for p in shared.parent.iterdir()} <= {"team-cache.json", ".team-cache.json.lock"}
    # And replayed from it, through the link.
    code, out, err = run_cli(capsys, "ask", QUESTION, "--cache", str(link), "-k", "2")
    assert (code, err) == (0, "")
    assert "replay-miss" not in out
