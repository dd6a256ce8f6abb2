"""A `synonyms.toml` an older helpdesk (or Notepad) wrote keeps the desk running: the strict word
checks hold for what is written (the command line, the editor's save, an import), while reading
for use keeps words the editor's lines cannot hold and drops a group of one word. `kb check`
notes such groups in either backend; importing a folder merges its groups with those stored."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Button, Static

from chatbot.cli.main import main
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import PassageStore
from chatbot.knowledge_base.synonyms import SYNONYMS_FILE, load_synonyms
from chatbot.tui import create_app
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.kb.backends import KnowledgeBaseBackend, kb_backend
from tests.kb.helpers import run_cli, snapshot
from tests.tui.conftest import FrozenClock, editor_settings
from tests.tui.editor_helpers import settle, type_into
from tests.tui.helpers import wait_until

__all__ = ["kb_backend"]

ROOT = Path(__file__).resolve().parents[2]
# What the previous helpdesk's `kb synonyms add Bike bike` and `add '#1' 'number one'` wrote.
OLDER_FILE = 'Bike = "bike"\n"#1" = "number one"\nhelmet = "headgear"\n'
KEPT = (("#1", "number one"), ("helmet", "headgear"))


def cli(capsys: pytest.CaptureFixture[str], kb: Path | str, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "kb", *argv, "--kb", str(kb))


# -- reading is lenient about what an older helpdesk wrote -----------------------------------------


def test_a_file_an_older_helpdesk_wrote_loads_without_the_group_of_one_word(
    kb_copy: Path,
) -> None:
    (kb_copy / SYNONYMS_FILE).write_text(OLDER_FILE, encoding="utf-8")
    assert load_synonyms(kb_copy) == KEPT
    assert PassageStore(kb_copy).synonyms() == KEPT
    with pytest.raises(KnowledgeBaseError, match="'Bike' is given as its own synonym"):
        load_synonyms(kb_copy, strict=True)  # What an import of this folder does.


def test_ask_answers_with_such_a_file(kb_copy: Path) -> None:
    (kb_copy / SYNONYMS_FILE).write_text(OLDER_FILE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "ask", "Do you lend headgear?", "--kb", str(kb_copy),
         "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert '"id": "helmet"' in result.stdout


def test_list_add_and_rm_work_on_such_a_file_and_rm_removes_each_entry(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb_copy / SYNONYMS_FILE).write_text(OLDER_FILE, encoding="utf-8")
    code, out, err = cli(capsys, kb_copy, "synonyms", "list")
    assert (code, out) == (0, "#1 = number one\nhelmet = headgear\n"), err
    assert err == "2 synonym groups\n"
    # Adding elsewhere keeps the old word: it is written quoted, and read back.
    code, out, err = cli(capsys, kb_copy, "synonyms", "add", "senior", "pensioner")
    assert (code, out) == (0, "senior = pensioner\n"), err
    assert load_synonyms(kb_copy) == (*KEPT, ("senior", "pensioner"))
    # No circle: each bad entry is removed on its own (the group of one word too, while the
    # file still holds it).
    (kb_copy / SYNONYMS_FILE).write_text(OLDER_FILE, encoding="utf-8")
    code, out, err = cli(capsys, kb_copy, "synonyms", "rm", "bike")
    assert (code, out) == (0, "removed the group 'Bike'\n"), err
    code, out, err = cli(capsys, kb_copy, "synonyms", "rm", "#1")
    assert (code, out) == (0, "removed #1 = number one\n"), err
    code, out, err = cli(capsys, kb_copy, "synonyms", "list")
    assert (code, out, err) == (0, "helmet = headgear\n", "1 synonym group\n")
    assert load_synonyms(kb_copy, strict=True) == (("helmet", "headgear"),)  # An import, too.
    code, _, err = cli(capsys, kb_copy, "synonyms", "rm", "bike")
    assert code == 2 and "no group starts with 'bike'" in err


def test_rm_of_a_word_with_no_group_and_no_file_says_so(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, kb_copy, "synonyms", "rm", "nope")
    assert code == 2 and err == "helpdesk: error: synonyms: no group starts with 'nope'\n"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('helmet = ""', "an empty word"),
        ("helmet = 3", "expected synonyms as a comma-separated string"),
        (f'helmet = "{"x" * 101}"', "longer than 100 characters"),
        ("helmet = [", "malformed TOML"),
    ],
)
def test_malformed_content_is_still_refused(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / SYNONYMS_FILE).write_text(toml + "\n", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match=message):
        load_synonyms(tmp_path)


def test_a_byte_order_mark_is_skipped(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (kb_copy / SYNONYMS_FILE).write_bytes(b'\xef\xbb\xbfhelmet = "headgear"\r\n')
    code, out, err = cli(capsys, kb_copy, "synonyms", "list")
    assert (code, out, err) == (0, "helmet = headgear\n", "1 synonym group\n")
    assert load_synonyms(kb_copy, strict=True) == (("helmet", "headgear"),)  # An import, too.


@pytest.mark.parametrize(
    ("key", "quoted"), [("vélo", '"vélo"'), ("return station", '"return station"')]
)
def test_a_word_toml_cannot_take_bare_gets_a_hint_to_quote_it(
    tmp_path: Path, key: str, quoted: str
) -> None:
    (tmp_path / SYNONYMS_FILE).write_text(f'{key} = "bike"\n', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as caught:
        load_synonyms(tmp_path)
    line = str(caught.value)
    assert "malformed TOML" in line and "(at line 1, column" in line
    assert "put a word in double quotes unless it is only ASCII letters, digits" in line
    assert line.endswith(f"{quoted} = ...")


def test_no_quote_hint_for_other_malformed_toml(tmp_path: Path) -> None:
    (tmp_path / SYNONYMS_FILE).write_text('bike = "cycle\n', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as caught:
        load_synonyms(tmp_path)
    assert "double quotes" not in str(caught.value)


# -- the editor shows such a group and does not drop it silently ---------------------------------


async def test_the_editor_names_a_loaded_group_its_lines_cannot_hold(
    kb_copy: Path, tmp_path: Path
) -> None:
    (kb_copy / SYNONYMS_FILE).write_text(OLDER_FILE, encoding="utf-8")
    settings = editor_settings(tmp_path / "helpdesk.sqlite3", kb_copy)
    app = create_app(settings, mode="editor", clock=FrozenClock(), agent="ana", timings=False,
                     bot=False)  # fmt: skip
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        panel = app.screen.query_one(SynonymsPanel)
        problem = panel.query_one("#synonyms-problem", Static)
        save = panel.query_one("#synonyms-save", Button)
        await wait_until(pilot, lambda: "#1 = number one" in panel.text)
        await wait_until(
            pilot, lambda: "line 1: '#1': the word starts with '#'" in str(problem.render())
        )
        assert save.disabled
        await pilot.press("ctrl+s")  # Refused: saving now would drop the group.
        await settle(pilot)
        assert (kb_copy / SYNONYMS_FILE).read_text(encoding="utf-8") == OLDER_FILE
        await type_into(pilot, "#synonyms-text", "one = number one\nhelmet = headgear\n")
        await wait_until(pilot, lambda: not save.disabled)
        assert str(problem.render()) == ""
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: load_synonyms(kb_copy) != KEPT)
        assert load_synonyms(kb_copy) == (("one", "number one"), ("helmet", "headgear"))


# -- kb check notes such groups in either backend ------------------------------------------------


def test_check_notes_what_saving_would_refuse_in_either_backend(
    kb_backend: KnowledgeBaseBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["kb", "import", str(ROOT / "knowledge_base"), "--kb", kb_backend.location]) == 0
    store = kb_backend.open()
    if isinstance(store, PassageStore):
        (store.directory / SYNONYMS_FILE).write_text(OLDER_FILE, encoding="utf-8")
    else:  # As the previous version could leave them in the database.
        store.save_synonyms([("Bike", "bike"), ("#1", "number one"), ("helmet", "headgear")],
                            based_on=store.synonyms_revision())  # fmt: skip
    capsys.readouterr()
    code, out, err = cli(capsys, kb_backend.location, "check")
    assert code == 0, err
    notes = [line for line in out.splitlines() if "synonyms rm WORD" in line]
    assert len(notes) == 2, out
    assert "'Bike' is given as its own synonym" in notes[0] and "ignored" in notes[0]
    assert "'#1': the word starts with '#'" in notes[1] and "saving refuses it" in notes[1]


# -- importing a folder merges its synonyms -------------------------------------------------------


def folder(tmp_path: Path, kb: Path, toml: str) -> Path:
    source = tmp_path / "source"
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(kb, source)
    (source / SYNONYMS_FILE).write_text(toml, encoding="utf-8")
    return source


def test_import_merges_synonyms_and_refuses_a_clash_writing_nothing(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    PassageStore(kb_copy).save_synonyms([("helmet", "headgear"), ("dock", "station")],
                                        based_on=None)  # fmt: skip
    source = folder(tmp_path, kb_copy, 'helmet = "headgear"\nsenior = "pensioner"\n')
    code, out, err = cli(capsys, kb_copy, "import", str(source))
    assert code == 0, err
    assert out.splitlines()[0].endswith("; 2 synonym groups: 1 added, 0 replaced, 1 unchanged")
    merged = (("helmet", "headgear"), ("dock", "station"), ("senior", "pensioner"))
    assert load_synonyms(kb_copy) == merged

    # The same word with other synonyms: one line, nothing written (passages neither).
    source = folder(tmp_path, kb_copy, 'Helmet = "lid"\n')
    (source / "new-one.json").write_text('{"id": "new-one", "text": "New."}', encoding="utf-8")
    before = snapshot(kb_copy)
    code, out, err = cli(capsys, kb_copy, "import", str(source))
    assert (code, out) == (2, ""), err
    assert err == (
        "helpdesk: error: synonyms: 'Helmet' already has a group (helmet = headgear); "
        "use --replace to overwrite it (nothing was imported)\n"
    )
    assert snapshot(kb_copy) == before

    code, out, err = cli(capsys, kb_copy, "import", str(source), "--replace")
    assert code == 0, err
    assert out.splitlines()[0].endswith("; 1 synonym group: 0 added, 1 replaced, 0 unchanged")
    assert load_synonyms(kb_copy) == (("Helmet", "lid"), *merged[1:])
