"""`helpdesk conversations list|show|export`: the JSON shapes the README documents, filters,
literal text, and one-line errors."""

from __future__ import annotations

import json
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.desk.models import Feedback
from tests.store.conftest import START, FakeClock, answered, escalated

ESCAPE = "my bike \x1b[31mis red\x1b[0m"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Three conversations: answered and judged helpful; escalated by the bot; claimed by ana."""
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    try:
        first = desk.ask(None, "I was charged twice, can I get my money back?").conversation.id
        [question] = desk.lease("worker-1", limit=1, lease_s=30)
        desk.record_decision("worker-1", question, answered())
        answer = desk.messages(first)[-1]
        desk.feedback(first, entry_id=answer.id, value=Feedback.HELPFUL)

        desk.ask(None, "No free docks, will I pay a late fee?")
        [question] = desk.lease("worker-1", limit=1, lease_s=30)
        desk.record_decision("worker-1", question, escalated())

        third = desk.start_conversation().id
        desk.talk_to_person(third)
        desk.ask(third, ESCAPE)
        desk.claim(third, agent="ana")
        desk.reply(third, agent="ana", text="Let me look.")
        desk.add_note(third, agent="bo", text="Refund approved by [b]finance[/b]")
    finally:
        desk.close()
    return path


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    try:
        code = main(["conversations", *arguments])
    except SystemExit as leaving:  # What argparse does with a command line it refuses.
        code = leaving.code if isinstance(leaving.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_as_json_with_a_state_filter(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--db", str(db), "--json")
    assert code == 0
    listed = json.loads(out)
    assert [(c["id"], c["state"], c["agent"]) for c in listed] == [
        (1, "bot", None), (2, "waiting", None), (3, "claimed", "ana"),
    ]  # fmt: skip
    assert set(listed[0]) == {
        "id", "state", "agent", "reason", "top_probability", "pending_questions", "created_at",
        "updated_at", "waiting_since", "claimed_at", "locale",
    }  # fmt: skip
    assert listed[1]["reason"] == "low-score" and listed[1]["waiting_since"].startswith("2026-")
    _, out, _ = run(capsys, "list", "--db", str(db), "--json", "--state", "waiting")
    assert [c["id"] for c in json.loads(out)] == [2]
    _, out, _ = run(capsys, "list", "--db", str(db), "--json", "--limit", "2")
    assert [c["id"] for c in json.loads(out)] == [1, 2]


def test_show_as_json_has_messages_events_and_decisions(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "show", "1", "--db", str(db), "--json")
    assert code == 0
    shown: dict[str, Any] = json.loads(out)
    assert (shown["id"], shown["state"], shown["agent"]) == (1, "bot", None)
    customer, bot = shown["messages"]
    assert (customer["author"], customer["pending"]) == ("customer", False)
    assert (bot["author"], bot["passage_id"], bot["feedback"]) == (
        "bot", "card-charged-twice", "helpful",
    )  # fmt: skip
    assert bot["text"].startswith("Charged twice for one ride?")
    assert [e["type"] for e in shown["events"]] == ["decided", "feedback"]
    verdict = shown["events"][1]
    assert verdict == {"id": verdict["id"], "at": verdict["at"], "type": "feedback",
                       "entry": bot["id"], "value": "helpful"}  # fmt: skip
    [decision] = shown["decisions"]
    assert (decision["message_id"], decision["worker"]) == (customer["id"], "worker-1")
    assert decision["answer"]["id"] == "card-charged-twice"
    assert [c["id"] for c in decision["candidates"]] == [
        "card-charged-twice", "late-return", "refund-time",
    ]  # fmt: skip
    assert decision["candidates"][2]["error_kind"] == "replay-miss"
    ids = [m["id"] for m in shown["messages"]] + [e["id"] for e in shown["events"]]
    assert len(set(ids)) == len(ids)  # One order for messages and events alike.
    assert shown["notes"] == []


def test_show_marks_notes_as_internal_and_apart_from_messages(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "show", "3", "--db", str(db), "--json")
    shown: dict[str, Any] = json.loads(out)
    [note] = shown["notes"]
    assert (note["agent"], note["text"], note["internal"]) == (
        "bo", "Refund approved by [b]finance[/b]", True,
    )  # fmt: skip
    assert note["id"] > max(m["id"] for m in shown["messages"])
    assert "finance" not in json.dumps(shown["messages"]) + json.dumps(shown["events"])
    _, text, _ = run(capsys, "show", "3", "--db", str(db))
    assert "— Note from bo, for agents only: Refund approved by [b]finance[/b]" in text


def test_show_an_escalated_conversation(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "show", "2", "--db", str(db), "--json")
    shown = json.loads(out)
    escalation = shown["events"][-1]
    assert escalation["type"] == "escalated"
    assert (escalation["reason"], escalation["question_entry"]) == (
        "low-score", shown["messages"][0]["id"],
    )  # fmt: skip
    assert escalation["top_probability"] == pytest.approx(0.644)


def test_export_is_one_show_object_per_line(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "export", "--db", str(db))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 3
    exported = [json.loads(line) for line in lines]
    _, shown, _ = run(capsys, "show", "3", "--db", str(db), "--json")
    assert exported[2] == json.loads(shown)
    assert exported[2]["messages"][0]["text"] == ESCAPE  # JSON keeps the text exactly.
    _, out, _ = run(capsys, "export", "--db", str(db), "--state", "claimed")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [3]


def test_text_output_is_literal(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "list", "--db", str(db))
    assert code == 0 and len(out.splitlines()) == 3 and "3 conversations" in err
    code, out, err = run(capsys, "list", "--db", str(db), "--state", "claimed")
    assert code == 0 and len(out.splitlines()) == 1 and err.strip() == "1 conversation"
    assert "claimed" in out and "ana" in out
    code, out, _ = run(capsys, "show", "3", "--db", str(db))
    assert code == 0
    assert "\x1b" not in out and "my bike \\x1b[31mis red\\x1b[0m" in out
    assert "ana joined the conversation." in out and "The customer asked for a person." in out


def test_an_unknown_conversation_is_one_line(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "99", "--db", str(db))
    assert code == 2 and out == ""
    assert err == "helpdesk: error: conversation 99 not found\n"


def test_show_and_export_carry_ratings_and_person_offers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rated.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    # The answer is made up (`answered`), its passage's text not the shipped one's: the check
    # that the passage is unchanged since would take the repeat to the bot.
    desk.passage_check = None
    try:
        cid = desk.ask(None, "I was charged twice, can I get my money back?").conversation.id
        [question] = desk.lease("worker-1", limit=1, lease_s=30)
        desk.record_decision("worker-1", question, answered())
        answer = desk.messages(cid)[-1].id
        desk.ask(cid, "I was charged twice; can I get my money back")
        desk.talk_to_person(cid)
        desk.claim(cid, agent="ana")
        desk.resolve(cid, agent="ana")
        resolved = desk.entries(cid)[-1].id
        desk.rate(cid, rating=5)
    finally:
        desk.close()
    code, out, _ = run(capsys, "show", str(cid), "--db", str(path), "--json")
    assert code == 0
    events = json.loads(out)["events"]
    assert {"type": "person-offered", "answer_entry": answer, "not_helpful": False} in [
        {k: v for k, v in e.items() if k not in ("id", "at")} for e in events
    ]
    assert {k: v for k, v in events[-1].items() if k not in ("id", "at")} == {
        "type": "rated", "rating": 5, "resolved_entry": resolved, "agent": "ana",
    }  # fmt: skip
    code, out, _ = run(capsys, "export", "--db", str(path))
    assert json.loads(out.splitlines()[0])["events"] == events
    code, out, _ = run(capsys, "show", str(cid), "--db", str(path))
    assert "The customer asked the same question again; the bot offered a person." in out
    assert "The customer rated the conversation 5 out of 5." in out


def test_text_times_say_utc_and_a_new_day_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reader in any time zone can tell the times are UTC, and a conversation followed up the
    next day does not read as one afternoon."""
    path = tmp_path / "days.sqlite3"
    clock = FakeClock()
    desk = open_service(load_settings(store={"db": path}), clock=clock)
    try:
        cid = desk.ask(None, "Where can I park the bike?").conversation.id
        desk.talk_to_person(cid)
        clock.advance(24 * 3600)
        desk.claim(cid, agent="ana")
        desk.reply(cid, agent="ana", text="Any dock will do.")
    finally:
        desk.close()
    day_one = START.astimezone(UTC)
    day_two = day_one + timedelta(days=1)
    _, out, _ = run(capsys, "list", "--db", str(path))
    assert out.split()[-3:] == [f"{day_two:%Y-%m-%d}", f"{day_two:%H:%M}", "UTC"]
    _, out, _ = run(capsys, "show", str(cid), "--db", str(path))
    lines = out.splitlines()
    assert lines[0].endswith(f", started {day_one:%Y-%m-%d %H:%M} UTC")
    turn = lines.index(f"{day_two:%Y-%m-%d} (UTC)")
    assert "Where can I park the bike?" in "\n".join(lines[1:turn])
    assert f"{day_two:%H:%M:%S}  ana (agent): Any dock will do." in lines[turn + 1 :]


def test_show_keeps_each_message_under_its_time(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A message's second line started at column 0, where the next time belongs; on a terminal a
    # long message ran past the edge, broken mid-word.
    reply = (
        "When a station is full, the app gives you 15 extra minutes and shows the nearest station "
        "with free docks.\nSteps:\n  1. open the app"
    )
    desk = open_service(load_settings(store={"db": db}), clock=FakeClock())
    try:
        desk.reply(3, agent="ana", text=reply)
    finally:
        desk.close()
    code, piped, _ = run(capsys, "show", "3", "--db", str(db))
    assert code == 0
    assert "ana (agent): When a station is full" in piped  # A pipe: one line per line written.
    assert "\n          Steps:\n            1. open the app\n" in piped
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(capsys, "show", "3", "--db", str(db))
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 60
    start = next(i for i, line in enumerate(lines) if "ana (agent): When" in line)
    block = lines[start : start + 5]
    assert all(line.startswith(" " * 10) for line in block[1:])
    assert " ".join(line.strip() for line in block[:3]).endswith(reply.split("\n")[0])
    assert block[3:] == [" " * 10 + "Steps:", " " * 12 + "1. open the app"]  # Its indent kept.


# "٣" (an Arabic-Indic three), "1_0", "+3" and "３" (fullwidth): Python's int() takes them all,
# and `show ٣` opened conversation 3.
@pytest.mark.parametrize(
    "given",
    ["99999999999999999999999", "9223372036854775808", "0", "-5", "\u0663", "1_0", "+3", "\uff13"],
)
def test_an_id_no_row_can_have_is_one_line_not_a_traceback(
    db: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    # 10**23 reached SQLite as an OverflowError (a traceback, exit 1) where PostgreSQL said "not
    # found": the command line refuses ids outside 1..2**63-1 before either is asked.
    code, out, err = run(capsys, "show", given, "--db", str(db))
    assert code == 2 and out == ""
    assert err == (
        f"helpdesk conversations show: error: argument ID: invalid id {given!r}: expected a whole"
        " number from 1 to 9223372036854775807\n"
    )
    # The largest id a row can have is asked for, and is not there.
    code, _, err = run(capsys, "show", str(2**63 - 1), "--db", str(db))
    assert (code, err) == (2, "helpdesk: error: conversation 9223372036854775807 not found\n")


def test_the_app_refuses_such_an_id_before_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--conversation", "99999999999999999999999"], ["chat", "--conversation", "0"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.count("\n") == 1
        assert "argument --conversation: invalid id" in err


@pytest.mark.parametrize("limit", ["-1", "0", "1_0", "\u0663"])
def test_a_limit_below_one_is_one_line(
    db: Path, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    # `--limit -1` printed "0 conversations" and exited 0, as if there were none.
    code, out, err = run(capsys, "list", "--db", str(db), "--limit", limit)
    assert code == 2 and out == ""
    assert err == (
        f"helpdesk conversations list: error: argument --limit: invalid value {limit!r}:"
        " expected a whole number, 1 or more\n"
    )


def test_a_decision_kept_silent_is_not_said_to_have_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bot decided to answer while a person took the conversation over: it said nothing,
    # and `show` read "answered from card-charged-twice" all the same.
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    try:
        asked = desk.ask(None, "I was charged twice, can I get my money back?")
        [question] = desk.lease("worker-1", limit=1, lease_s=30)
        desk.talk_to_person(asked.conversation.id)
        assert desk.record_decision("worker-1", question, answered()).outcome == "kept"
    finally:
        desk.close()
    code, out, _ = run(capsys, "show", str(asked.conversation.id), "--db", str(path))
    assert code == 0
    assert (
        "would have answered from card-charged-twice; kept silent as the conversation had gone"
        " to a person" in (" ".join(out.split()))
    )
