"""`helpdesk kb ...` as a person runs it: one-line errors, exit codes, files on disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.knowledge_base import load_knowledge_base
from chatbot.text import cells
from tests.conftest import ROOT, SEED_DATA
from tests.kb.helpers import run_cli, snapshot

Q1 = "I was charged twice for the same ride, can I get my money back?"
CHINESE = "退款将在3到5个工作日内退回到您的银行卡。如有疑问，请联系客服。"


def test_import_the_seed_into_an_empty_directory_then_ask(tmp_path: Path) -> None:
    # Run as separate processes, exactly as the README shows it.
    kb = tmp_path / "kb"
    kb.mkdir()
    helpdesk = [sys.executable, "-m", "chatbot"]
    imported = subprocess.run(
        [*helpdesk, "kb", "import", str(SEED_DATA), "--kb", str(kb)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert "10 added" in imported.stdout
    assert len(load_knowledge_base(kb)) == 10

    asked = subprocess.run(
        [*helpdesk, "ask", Q1, "--kb", str(kb), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    decision = json.loads(asked.stdout)
    assert decision["answer"]["id"] == "card-charged-twice"  # From the shipped replay cache.


def test_a_chinese_passage_round_trips_through_add_export_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, exported = tmp_path / "first", tmp_path / "second", tmp_path / "export.json"
    first.mkdir()  # An empty knowledge base (`kb add` makes none: a mistyped --kb made one).
    code, out, err = run_cli(capsys, "kb", "add", "--id", "refund-zh", "--title", "退款时间",
                             "--tag", "付款", "--text", CHINESE, "--kb", str(first))  # fmt: skip
    assert code == 0, err
    code, _, err = run_cli(capsys, "kb", "export", "--output", str(exported), "--kb", str(first))
    assert code == 0, err
    assert CHINESE in exported.read_text(encoding="utf-8")  # Written as text, not \\u escapes.
    code, _, err = run_cli(capsys, "kb", "import", str(exported), "--kb", str(second))
    assert code == 0, err

    [passage] = load_knowledge_base(second)
    assert (passage.text, passage.title, passage.tags) == (CHINESE, "退款时间", ("付款",))
    assert (second / "refund-zh.json").read_bytes() == (first / "refund-zh.json").read_bytes()
    code, out, _ = run_cli(capsys, "kb", "export", "--kb", str(second))
    assert json.loads(out) == json.loads(exported.read_text(encoding="utf-8"))
    code, out, _ = run_cli(capsys, "kb", "show", "refund-zh", "--kb", str(second))
    assert CHINESE in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["add", "--id", "../x", "--text", "hi"], "id '../x' is not a safe slug"),
        (["add", "--id", "a/b", "--text", "hi"], "id 'a/b' is not a safe slug"),
        (["add", "--id", "", "--text", "hi"], "id is empty"),
        (["add", "--id", "x" * 65, "--text", "hi"], "id has 65 characters; the limit is 64"),
        (["add", "--id", "new", "--text", "   "], "passage 'new': text: text is empty"),
        (
            ["add", "--id", "new", "--text", "a" * 4001],
            "text: 4,001 characters; the limit is 4,000",
        ),
        (["add", "--id", "helmet", "--text", "hi"], "passage 'helmet' already exists"),
        (["show", "../../etc/passwd"], "is not a safe slug"),
        (["rm", "a/b"], "is not a safe slug"),
        (["rm", "nope"], "passage 'nope' not found"),
        (["restore", "../helmet"], "is not a safe slug"),
        (["history", "nope"], "passage 'nope' not found"),
        (["edit", "helmet", "--text", ""], "passage 'helmet': text: text is empty"),
        (["restore", "helmet", "--version", "3"], "passage 'helmet' has no earlier versions"),
    ],
)
def test_refusals_are_one_line_and_change_nothing(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    before = snapshot(kb_copy.parent)
    code, out, err = run_cli(capsys, "kb", *argv, "--kb", str(kb_copy))
    assert code == 2
    assert err.startswith("helpdesk: error: ") and err.count("\n") == 1, err
    assert message in err
    assert snapshot(kb_copy.parent) == before


def test_an_invalid_import_file_changes_nothing(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bad passage is last: every passage is validated before the first one is written.
    data = {"passages": [{"id": "fine-one", "text": "ok"}, {"id": "fine-two", "text": "ok"},
                         {"id": "Bad Id", "text": "ok"}]}  # fmt: skip
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    duplicate = tmp_path / "duplicate.json"
    duplicate.write_text(json.dumps({"passages": [{"id": "a", "text": "x"}] * 2}))
    before = snapshot(kb_copy)
    for path, message in [(bad, "passages[2]: passage 'Bad Id': id: id 'Bad Id' is not a safe"),
                          (duplicate, "passage 'a': duplicate id"),
                          (tmp_path / "missing.json", "no such file")]:  # fmt: skip
        code, _, err = run_cli(capsys, "kb", "import", str(path), "--kb", str(kb_copy))
        assert code == 2 and message in err, err
    assert snapshot(kb_copy) == before


def test_edit_rm_history_restore(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = ["--kb", str(kb_copy)]
    code, out, err = run_cli(capsys, "kb", "edit", "helmet", "--text", "Helmets: ask us.", *kb)
    assert code == 0 and "saved helmet" in out, err
    code, out, _ = run_cli(capsys, "kb", "rm", "helmet", *kb)
    assert code == 0 and "kb restore helmet" in out
    code, out, _ = run_cli(capsys, "kb", "history", "helmet", *kb)
    lines = out.splitlines()
    assert "replaced by edit" in lines[0] and "replaced by delete" in lines[1]
    assert "Helmets: ask us." in lines[1] and "deleted" in lines[2]
    # A deleted passage is said to be deleted, with the way back ("not found" alone, before).
    code, out, err = run_cli(capsys, "kb", "show", "helmet", *kb)
    assert (code, out) == (2, "")
    assert (
        err.endswith(": it was deleted; `helpdesk kb restore helmet` brings it back\n")
        and err.count("\n") == 1
    )
    code, out, _ = run_cli(capsys, "kb", "restore", "helmet", *kb)
    assert code == 0
    code, out, _ = run_cli(capsys, "kb", "show", "helmet", *kb)
    assert "Helmets: ask us." in out
    code, out, _ = run_cli(capsys, "kb", "restore", "helmet", "--version", "1", *kb)
    code, out, _ = run_cli(capsys, "kb", "show", "helmet", "--json", *kb)
    assert json.loads(out)["text"].startswith("Helmets are not included")


def test_list_and_check(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "kb", "list", "--kb", str(kb_copy))
    assert code == 0 and len(out.splitlines()) == 10 and "card-charged-twice" in out
    code, out, _ = run_cli(capsys, "kb", "check", "--kb", str(kb_copy))
    assert (code, out.strip()) == (0, "ok: 10 passages")
    (kb_copy / "broken.json").write_text("[]", encoding="utf-8")
    code, out, err = run_cli(capsys, "kb", "check", "--kb", str(kb_copy))
    assert code == 1 and "broken.json: a passage must be a JSON object" in out


def test_helpdesk_kb_env_selects_the_knowledge_base(
    kb_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HELPDESK_KB", str(kb_copy))
    code, _, err = run_cli(capsys, "kb", "add", "--id", "via-env", "--text", "hello")
    assert code == 0, err
    assert (kb_copy / "via-env.json").is_file()


def test_kb_before_the_subcommand_is_kept(
    kb_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # HELPDESK_KB points elsewhere so that, were --kb dropped, nothing lands in the shipped KB.
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("HELPDESK_KB", str(elsewhere))
    code, _, err = run_cli(capsys, "--kb", str(kb_copy), "kb", "add", "--id", "top", "--text", "x")
    assert code == 0, err
    assert (kb_copy / "top.json").is_file() and not elsewhere.exists()


def test_list_show_and_history_fit_the_terminal(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # At 80 columns a long title or a passage's text ran past the edge, broken mid-word; the
    # history's preview was cut at 60 characters, 120 cells of Chinese.
    title = "Charged twice for one ride: what the hold of one euro on your card means, and when"
    kb = ["--kb", str(kb_copy)]
    assert run_cli(capsys, "kb", "edit", "card-charged-twice", "--title", title, *kb)[0] == 0
    assert run_cli(capsys, "kb", "add", "--id", "refund-zh", "--text", CHINESE * 3, *kb)[0] == 0
    assert run_cli(capsys, "kb", "edit", "refund-zh", "--text", CHINESE, *kb)[0] == 0
    _, piped, _ = run_cli(capsys, "kb", "show", "card-charged-twice", *kb)
    assert f"title:    {title}\n" in piped  # A pipe: as stored.
    monkeypatch.setenv("COLUMNS", "60")
    _, listed, _ = run_cli(capsys, "kb", "list", *kb)
    row = next(line for line in listed.splitlines() if line.startswith("card-charged-twice"))
    assert len(row) == 60 and row.endswith("  Charged twice for…")
    _, shown, _ = run_cli(capsys, "kb", "show", "card-charged-twice", *kb)
    lines = shown.splitlines()
    assert max(map(len, lines)) <= 60
    start = lines.index(next(line for line in lines if line.startswith("title:")))
    end = lines.index(next(line for line in lines if line.startswith("tags:")))
    assert [line[:10].strip() for line in lines[start + 1 : end]] == [""] * (end - start - 1)
    assert " ".join(line[10:] for line in lines[start:end]) == title
    text = lines[lines.index("") + 1 :]
    assert len(text) > 1 and " ".join(text).startswith("Charged twice for one ride? The first")
    _, history, _ = run_cli(capsys, "kb", "history", "refund-zh", *kb)
    [version, current] = history.splitlines()
    widths = cells(version)
    assert widths <= 60 and version.endswith("…") and current.strip() == "-  current"
