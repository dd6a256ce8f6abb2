"""One history file that cannot be read costs its own version only: `kb history` lists it as
unreadable with its one line, and the other versions show and restore. It failed every history
command ("...000001.json: JSON nested too deeply", exit status 2), and `kb restore` failed on a
passage file broken by hand too, the very thing a restore mends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatbot.knowledge_base.store import PassageStore
from tests.cli_run import run_cli


def five_versions(kb: Path) -> PassageStore:
    store = PassageStore(kb)
    for number in range(1, 6):
        current = store.get("helmet")
        edited = current.passage.model_copy(update={"text": f"Helmets, take {number}."})
        store.save(edited, based_on=current.revision)
    return store


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"[" * 100_000, "JSON nested too deeply"),
        (b'{"version": 1}', "not a history entry"),
        (None, "is a FIFO (named pipe), not a regular file"),
    ],
    ids=["nested", "not-an-entry", "fifo"],
)
def test_one_unreadable_version_leaves_the_others_usable(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, reason: str
) -> None:
    store = five_versions(kb_copy)
    broken = kb_copy / ".history" / "helmet" / "000001.json"
    broken.unlink()
    if content is None:
        os.mkfifo(broken)
    else:
        broken.write_bytes(content)
    kb = ["--kb", str(kb_copy)]
    problem = f"{broken}: {reason}"

    code, out, err = run_cli(capsys, "kb", "history", "helmet", *kb)
    assert code == 0, err
    rows = out.splitlines()
    assert len(rows) == 6 and rows[0].startswith("   1  ")
    assert rows[0].endswith(f"  unreadable: {problem}")
    assert "Helmets, take 4." in rows[4] and rows[-1] == "   -  current"

    code, out, err = run_cli(capsys, "kb", "show", "helmet", "--version", "4", *kb)
    assert code == 0 and "Helmets, take 3." in out, err
    code, out, err = run_cli(capsys, "kb", "show", "helmet", "--version", "1", *kb)
    assert (code, out, err) == (2, "", f"helpdesk: error: {problem}\n")

    code, out, err = run_cli(capsys, "kb", "restore", "helmet", "--version", "5", *kb)
    assert code == 0 and out.startswith("restored helmet"), err
    assert store.get("helmet").passage.text == "Helmets, take 4."
    code, out, err = run_cli(capsys, "kb", "restore", "helmet", *kb)  # The newest: v6.
    assert code == 0 and store.get("helmet").passage.text == "Helmets, take 5.", err
    code, out, err = run_cli(capsys, "kb", "restore", "helmet", "--version", "1", *kb)
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: {problem}; cannot be restored\n"

    [unreadable] = [v for v in store.history("helmet") if v.problem is not None]
    assert (unreadable.number, unreadable.problem) == (1, problem)


def test_a_passage_broken_by_hand_is_listed_and_restored(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = five_versions(kb_copy)
    (kb_copy / "helmet.json").write_text("{broken", encoding="utf-8")
    kb = ["--kb", str(kb_copy)]

    code, out, err = run_cli(capsys, "kb", "history", "helmet", *kb)
    assert code == 0, err
    assert out.splitlines()[-1] == (
        f"   -  current, unreadable: {kb_copy / 'helmet.json'}: malformed JSON at line 1 "
        "column 2: Expecting property name enclosed in double quotes"
    )
    code, out, err = run_cli(capsys, "kb", "restore", "helmet", *kb)
    assert code == 0 and out.startswith("restored helmet"), err
    assert store.get("helmet").passage.text == "Helmets, take 4."
    assert store.history("helmet")[-1].content == "{broken"  # Kept: the restore can be undone.
