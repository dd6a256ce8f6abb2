"""One bad passage file stops nothing and freezes nothing: every command and every reload skips it
with one warning naming it (a file that was good keeps its last good version in a running app),
while `kb check` still lists each one and exits 1."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from chatbot.assembly import build_engine
from chatbot.config import load_settings
from chatbot.engine.live import LiveEngine
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import KnowledgeBaseError, decode_json, parse_passage
from chatbot.knowledge_base.store import PassageStore
from tests.cli_run import run_cli

Q1 = "I was charged twice for the same ride, can I get my money back?"
BAD = {
    "typo": '{"id": "typo", "text": "oops",}',
    "named-otherwise": '{"id": "other", "text": "a passage under another name"}',
    "escape": '{"id": "escape", "text": "clears \\u001b[2J the screen"}',
    "no-text": '{"id": "no-text", "title": "Nothing to say"}',
    "unknown-field": '{"id": "unknown-field", "text": "hello", "colour": "red"}',
    "tags-string": '{"id": "tags-string", "text": "hello", "tags": "rides"}',
}


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    caplog.clear()
    return lines


def test_every_command_skips_each_bad_file_with_one_warning_and_check_lists_them(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    for name, content in BAD.items():
        (kb_copy / f"{name}.json").write_text(content, encoding="utf-8")
    kb = ["--kb", str(kb_copy)]
    caplog.set_level(logging.WARNING)

    code, out, err = run_cli(capsys, "ask", Q1, *kb)
    assert code == 0, err
    assert "Answer from card-charged-twice" in out
    said = warnings(caplog)
    assert len(said) == len(BAD)
    for name in BAD:
        [line] = [w for w in said if f"{kb_copy / name}.json: " in w]
        assert line.endswith(" (skipped)")

    code, out, err = run_cli(capsys, "kb", "list", *kb)
    assert code == 0 and len(out.splitlines()) == 10
    assert err.count("helpdesk: warning: ") == len(BAD) and "(skipped)" in err

    code, out, _ = run_cli(capsys, "kb", "export", *kb)
    assert code == 0 and len(json.loads(out)["passages"]) == 10
    assert len(warnings(caplog)) == len(BAD)

    code, out, _ = run_cli(capsys, "kb", "check", *kb)
    assert code == 1
    for name in BAD:
        assert f"problem: {kb_copy / name}.json: " in out

    # An import still refuses the folder: nothing of a bad copy is written anywhere.
    code, _, err = run_cli(capsys, "kb", "import", str(kb_copy), "--kb", str(kb_copy.parent / "x"))
    assert code == 2 and "(skipped)" not in err
    assert not (kb_copy.parent / "x").exists()


def test_the_messages_say_what_is_wrong_in_whole_sentences() -> None:
    def problem(content: str) -> str:
        with pytest.raises(KnowledgeBaseError) as caught:
            parse_passage(decode_json(content.encode(), where="p.json"), where="p.json")
        return str(caught.value)

    assert problem('{"id": "p", "text": "one\ntwo"}') == (
        "p.json: malformed JSON at line 1 column 25: a control character (a line break or tab, "
        "say) inside a string; write it as \\n or \\t"
    )
    assert problem(BAD["typo"]).endswith(
        "a ',' before a closing bracket (JSON allows no comma after the last item)"
    )
    assert problem(BAD["tags-string"]) == (
        "p.json: passage 'tags-string': tags: expected a list of strings, such as "
        '["rides", "night"]'
    )
    # JSON keeps the last of a key given twice: which text the writer meant is not known.
    assert problem('{"id": "p", "text": "one", "text": "two"}') == (
        "p.json: malformed JSON: the key 'text' is given twice in one object"
    )


async def test_a_reload_skips_a_new_bad_file_and_keeps_a_broken_ones_last_good_version(
    kb_copy: Path,
) -> None:
    told: list[str] = []
    store = PassageStore(kb_copy)
    settings = load_settings(knowledge_base={"path": kb_copy})
    live = LiveEngine(build_engine(settings, None, store), store, on_problem=told.append)
    helmet = {p.id: p for p in live.engine.passages}["helmet"]

    # A malformed file dropped in: skipped, said once, and every later change still loads.
    (kb_copy / "typo.json").write_text(BAD["typo"], encoding="utf-8")
    assert await live.rebuild() is not None
    assert len(told) == 1 and "typo.json: malformed JSON" in told[0]
    assert told[0].endswith("(skipped)")
    store.add(Passage(id="lost-item", text="Lost items are kept for 30 days."))
    store.add(Passage(id="lost-phone", text="Phones are kept at the depot."))
    rebuilt = await live.rebuild()
    assert rebuilt is not None and {"lost-item", "lost-phone"} <= {p.id for p in rebuilt.passages}
    assert len(told) == 1  # Not again at every reload.

    # A passage a hand edit broke keeps answering as it last was; the rest still follows.
    (kb_copy / "helmet.json").write_text('{"id": "helmet", "text": "Helm', encoding="utf-8")
    store.save(
        Passage(id="lost-item", text="Lost items are kept for 60 days."),
        based_on=store.get("lost-item").revision,
    )
    rebuilt = await live.rebuild()
    assert rebuilt is not None
    passages = {p.id: p for p in rebuilt.passages}
    assert passages["helmet"] == helmet
    assert passages["lost-item"].text == "Lost items are kept for 60 days."
    assert "typo" not in passages
    [kept] = [line for line in told[1:] if "helmet.json" in line]
    assert kept.endswith("(its last good version is still used)")

    # Mended: the file as it is now.
    (kb_copy / "helmet.json").write_text('{"id": "helmet", "text": "Helmets."}', encoding="utf-8")
    (kb_copy / "typo.json").unlink()
    rebuilt = await live.rebuild()
    assert rebuilt is not None and {p.id: p for p in rebuilt.passages}["helmet"].text == "Helmets."
