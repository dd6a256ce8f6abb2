"""What a synonym group may hold: two different words at least (`helmet = helmet` is refused
before anything is written, on every way in), and only words the editor's lines can hold (no
control character or line break, no leading '#', no ',' or '='); and a bad group already in
`synonyms.toml` can still be removed with `helpdesk kb synonyms rm`."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import Button, Static

from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import PassageStore
from chatbot.knowledge_base.synonyms import (
    SYNONYMS_FILE,
    group_line,
    load_synonyms,
    parse_synonym_lines,
    parse_synonyms,
    synonyms_toml,
)
from chatbot.tui import create_app
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.kb.helpers import run_cli, snapshot
from tests.tui.conftest import FrozenClock, editor_settings
from tests.tui.editor_helpers import settle, type_into
from tests.tui.helpers import wait_until

OWN_SYNONYM = "'helmet' is given as its own synonym; a group needs two different words"


def refused(capsys: pytest.CaptureFixture[str], kb: Path, *argv: str) -> str:
    """Run `helpdesk kb ...` expecting the one-line refusal; nothing in `kb` may change."""
    before = snapshot(kb)
    code, out, err = run_cli(capsys, "kb", *argv, "--kb", str(kb))
    assert (code, out) == (2, ""), err
    assert err.startswith("helpdesk: error: ") and err.count("\n") == 1, err
    assert snapshot(kb) == before
    return err


# -- a group needs two different words -----------------------------------------------------------


@pytest.mark.parametrize("words", [["helmet", "helmet"], ["helmet", "Helmet", " HELMET "]])
def test_a_word_given_as_its_own_synonym_is_refused_before_anything_is_written(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], words: list[str]
) -> None:
    err = refused(capsys, kb_copy, "synonyms", "add", *words)
    assert OWN_SYNONYM in err
    assert not (kb_copy / SYNONYMS_FILE).exists()
    # Every command still works: nothing broken was left behind.
    code, _, err = run_cli(capsys, "kb", "synonyms", "list", "--kb", str(kb_copy))
    assert code == 0, err


def test_adding_a_word_a_group_has_already_changes_nothing_in_it(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    PassageStore(kb_copy).save_synonyms([("helmet", "headgear")], based_on=None)
    code, out, err = run_cli(capsys, "kb", "synonyms", "add", "helmet", "Helmet", "HEADGEAR",
                             "lid", "--kb", str(kb_copy))  # fmt: skip
    assert (code, out) == (0, "helmet = headgear, lid\n"), err


def test_duplicates_are_dropped_ignoring_case_keeping_the_first_spelling() -> None:
    assert parse_synonyms({"Bike": "bike, Cycle, CYCLE, bicycle"}, where="x") == (
        ("Bike", "Cycle", "bicycle"),
    )
    with pytest.raises(KnowledgeBaseError, match="'helmet': 'helmet' is given as its own"):
        parse_synonyms({"helmet": ["HELMET", "helmet"]}, where="synonyms.toml")


def test_the_editor_names_the_line_as_it_is_typed() -> None:
    groups, problems = parse_synonym_lines("bike = bicycle\nhelmet = helmet\n")
    assert groups == (("bike", "bicycle"),)
    assert problems == [f"line 2: 'helmet': {OWN_SYNONYM}"]


async def test_the_editor_does_not_save_a_word_as_its_own_synonym(
    kb_copy: Path, tmp_path: Path
) -> None:
    settings = editor_settings(tmp_path / "helpdesk.sqlite3", kb_copy)
    app = create_app(settings, mode="editor", clock=FrozenClock(), agent="ana", timings=False,
                     bot=False)  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        panel = app.screen.query_one(SynonymsPanel)
        await type_into(pilot, "#synonyms-text", "helmet = helmet")
        problem = panel.query_one("#synonyms-problem", Static)
        await wait_until(pilot, lambda: OWN_SYNONYM in str(problem.render()))
        assert panel.query_one("#synonyms-save", Button).disabled
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not (kb_copy / SYNONYMS_FILE).exists()


async def test_the_editor_saves_over_a_file_that_does_not_load(
    kb_copy: Path, tmp_path: Path
) -> None:
    """The tab says "saving replaces the file": it does, rather than calling the save a
    conflict with someone else's change."""
    settings = editor_settings(tmp_path / "helpdesk.sqlite3", kb_copy)
    app = create_app(settings, mode="editor", clock=FrozenClock(), agent="ana", timings=False,
                     bot=False)  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        # Broken by hand (or an older helpdesk) while the editor is open.
        (kb_copy / SYNONYMS_FILE).write_text('helmet = ""\n', encoding="utf-8")
        await pilot.press("ctrl+o")
        panel = app.screen.query_one(SynonymsPanel)
        problem = panel.query_one("#synonyms-problem", Static)
        await wait_until(pilot, lambda: "saving replaces the file" in str(problem.render()))
        await type_into(pilot, "#synonyms-text", "helmet = headgear")
        await wait_until(pilot, lambda: not panel.query_one("#synonyms-save", Button).disabled)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: load_synonyms_or_none(kb_copy) is not None)
        assert load_synonyms(kb_copy) == (("helmet", "headgear"),)


def load_synonyms_or_none(kb: Path) -> tuple[tuple[str, ...], ...] | None:
    try:
        return load_synonyms(kb)
    except KnowledgeBaseError:
        return None


def test_importing_a_folder_whose_synonyms_repeat_a_word_writes_nothing(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source"
    shutil.copytree(kb_copy, source)
    (source / SYNONYMS_FILE).write_text('helmet = "helmet"\n', encoding="utf-8")
    target = tmp_path / "target"
    target.mkdir()
    err = refused(capsys, target, "import", str(source))
    assert OWN_SYNONYM in err and str(source / SYNONYMS_FILE) in err
    assert list(target.iterdir()) == []


# -- a bad group already written can be removed ----------------------------------------------------


def test_rm_removes_a_bad_group_that_every_other_command_refuses(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What `kb synonyms add helmet helmet` used to leave behind.
    (kb_copy / SYNONYMS_FILE).write_text('helmet = ""\nbike = "bicycle"\n', encoding="utf-8")
    for argv in (["synonyms", "list"], ["synonyms", "rm", "bike"],
                 ["synonyms", "rm", "helmet", "headgear"]):  # fmt: skip
        assert "'helmet': an empty word" in refused(capsys, kb_copy, *argv)
    code, out, err = run_cli(capsys, "kb", "synonyms", "rm", "HELMET", "--kb", str(kb_copy))
    assert (code, out) == (0, "removed the group 'helmet'\n"), err
    assert load_synonyms(kb_copy) == (("bike", "bicycle"),)


def test_rm_of_a_bad_group_still_refuses_another_bad_one_and_a_word_with_no_group(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb_copy / SYNONYMS_FILE).write_text('helmet = ""\nbike = [3]\n', encoding="utf-8")
    assert "'bike': expected synonyms as a comma-separated string" in refused(
        capsys, kb_copy, "synonyms", "rm", "helmet"
    )
    assert "'helmet': an empty word" in refused(capsys, kb_copy, "synonyms", "rm", "nope")


# -- only words the editor's lines can hold ------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["q", "q\x1b[31m"], r"'q': the synonym 'q\x1b[31m' holds a control character (\x1b)"),
        (["q\x07", "z"], r"'q\x07': the word holds a control character (\x07)"),
        (["q", "q\nz"], r"'q': the synonym 'q\nz' holds a line break"),
        (["q", "a\tb"], r"'q': the synonym 'a\tb' holds a tab"),
        (["q", "a\u2028b"], r"'q': the synonym 'a\u2028b' holds a line break (\u2028)"),
        (["q", "#comment"], "'q': the synonym '#comment' starts with '#', which starts a comment"),
        (["#comment", "q"], "'#comment': the word starts with '#'"),
        (["q", "a=b"], "'q': the synonym 'a=b' holds '=', which separates a word from"),
        (["q", "a,b"], "'q': the synonym 'a,b' holds ',', which separates synonyms"),
    ],
)
def test_cli_refuses_a_word_the_editor_could_not_hold(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], words: list[str], message: str
) -> None:
    err = refused(capsys, kb_copy, "synonyms", "add", *words)
    assert f"helpdesk: error: synonyms: {message}" in err
    assert "\x1b" not in err and "\x07" not in err and "\u2028" not in err  # Spelled out.
    assert not (kb_copy / SYNONYMS_FILE).exists()


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('bike = ["bicycle", "a,b"]', "'bike': the synonym 'a,b' holds ','"),
        ('bike = ["bicycle", "a=b"]', "'bike': the synonym 'a=b' holds '='"),
        ('"a=b" = "bicycle"', "'a=b': the word holds '='"),
        ('"#bike" = "bicycle"', "'#bike': the word starts with '#'"),
        ('bike = "cycle, \\u001b[2J"', "the synonym '\\x1b[2J' holds a control character"),
    ],
)
def test_a_file_holding_such_a_word_is_one_line_naming_the_entry_when_imported(
    tmp_path: Path, toml: str, message: str
) -> None:
    """Refused when the file is about to be written elsewhere (an import); read for use, as an
    older helpdesk may have written it, the word is kept (tests/kb/test_synonyms_compat.py)."""
    (tmp_path / SYNONYMS_FILE).write_text(toml + "\n", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as caught:
        load_synonyms(tmp_path, strict=True)
    line = str(caught.value)
    assert line.startswith(f"{tmp_path / SYNONYMS_FILE}: ") and message in line
    assert "\n" not in line and "\x1b" not in line
    assert len(load_synonyms(tmp_path)) == 1


words = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(head=words, others=st.lists(words, min_size=1, max_size=4))
def test_every_group_accepted_survives_the_editor_and_the_file(
    head: str, others: list[str]
) -> None:
    try:
        [group] = parse_synonyms({head: others}, where="synonyms")
    except KnowledgeBaseError:
        return
    assert len(group) >= 2
    # As the editor shows it and reads it back, and as the file holds it.
    assert parse_synonym_lines(group_line(group)) == ((group,), [])
    assert parse_synonyms(tomllib.loads(synonyms_toml([group])), where="file") == (group,)
