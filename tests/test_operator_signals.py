"""What live mode says when Valen will not judge: the customer's notice names replay mode only
for replay misses; `helpdesk bot` and `helpdesk serve` say at start whether they replay or ask
Valen live (and where, never with the key); `bot -v` says why each question escalated and how
Valen failed, a rejected key is one warning; `eval` counts Valen's failures and exits 1 when it
judged nothing.

Real parts throughout: SQLite files, the loopback Valen of `tests/valen_server.py`, `helpdesk`
run as a process where its start lines are the point. Waits are on conditions, never fixed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from chatbot.assembly import make_http_client, make_judge, open_service
from chatbot.config import load_settings
from chatbot.desk.models import ChatEvent, Escalated
from chatbot.engine.engine import Engine
from chatbot.engine.models import Reason
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.notices import notice
from chatbot.retrieval.retrievers import BM25Retriever
from tests.cli_run import run_cli
from tests.conftest import SEED_DATA, SHIPPED_KB
from tests.helpdesk_processes import processes, start, stop, until
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    fixed,
    probability_reply,
    refusal_reply,
)

__all__ = ["processes"]  # A fixture.

Q1 = "I was charged twice for the same ride, can I get my money back?"
Q2 = "I crashed and the bike is damaged. What happens now?"
Q3 = "There were no free docks at the station so I kept riding. Will I pay a late fee?"
KEY = "sk-test-operator-signals-0123456789"
REJECTED = Reply(status=401, body={"error": {"message": "invalid API key"}})


# -- 1. the not-judged notice ---------------------------------------------------------------------


async def escalated_notices(
    db: Path, server: ValenTestServer | None, question: str, kb: Path = SHIPPED_KB
) -> list[str]:
    """Ask `question` in a new conversation, judge it live against `server` (replaying the
    shipped answers when None), store the decision in the SQLite file `db`, and say the
    escalation to the customer in English and Chinese as the stored conversation reads."""
    valen = {"replay": "on"} if server is None else {
        "replay": "off", "base_url": server.base_url, "api_key": KEY, "max_attempts": 1,
    }  # fmt: skip
    settings = load_settings(store={"db": db}, valen=valen)
    desk = open_service(settings)
    try:
        asked = desk.ask(None, question)
        [pending] = desk.lease("bot", limit=1, lease_s=60)
        async with make_http_client(settings) as http:
            retriever = BM25Retriever(load_knowledge_base(kb))
            decision = await Engine(retriever=retriever, judge=make_judge(settings, http)).answer(
                question
            )
        assert desk.record_decision("bot", pending, decision).outcome == "escalated"
        conversation = asked.conversation.id
        # As a front end has them: the log and the decisions, both read back from the file.
        decisions = {d.message_id: d.decision for d in desk.decisions(conversation)}
        [event] = [
            e.event
            for e in desk.entries(conversation)
            if isinstance(e, ChatEvent) and isinstance(e.event, Escalated)
        ]
    finally:
        desk.close()
    assert event.reason is Reason.NOT_JUDGED
    said = [
        notice(event, reader=reader, locale=locale, decisions=decisions)
        for reader in ("customer", "agent")
        for locale in ("en", "zh")
    ]
    return [text or "" for text in said]


async def test_a_live_refusal_is_not_said_as_a_replay_miss(
    tmp_path: Path, valen_server: ValenTestServer
) -> None:
    # Valen declined every predicate: the customer was told of "replay mode, no network".
    valen_server.responder = refusal_reply
    english, chinese, *for_agents = await escalated_notices(
        tmp_path / "desk.sqlite3", valen_server, Q1
    )
    assert english == (
        "The bot could not check every help-center passage for this question. A person will "
        "reply here."
    )
    assert chinese == "机器人无法查阅这个问题的每一段帮助中心内容。客服人员会在这里回复您。"
    # Agents read the cause alone: "A person will reply here" is said to the customer.
    assert for_agents == [
        "The bot could not check every help-center passage for this question.",
        "机器人无法查阅这个问题的每一段帮助中心内容。",
    ]
    for text in (english, chinese):
        assert "replay" not in text and "recorded" not in text and "回放" not in text


async def test_one_refusal_among_low_scores_is_not_said_as_a_replay_miss(
    tmp_path: Path, valen_server: ValenTestServer
) -> None:
    # One passage refused, the others judged too low: `not-judged` still, and still no replay.
    def respond(received: Received, index: int) -> Reply:
        return refusal_reply(received) if index == 0 else probability_reply(received, 0.1)

    valen_server.responder = respond
    english, *_ = await escalated_notices(tmp_path / "desk.sqlite3", valen_server, Q3)
    assert "replay mode" not in english


async def test_a_replay_miss_is_still_said_as_one(tmp_path: Path) -> None:
    # No Valen answer is recorded for a Chinese question: replay mode is the reason, and said.
    english, chinese, *_ = await escalated_notices(
        tmp_path / "desk.sqlite3", None, "我被重复扣款了，可以退款吗？", SHIPPED_KB / "zh"
    )
    assert "(replay mode, no network: some have no recorded judgment)" in english
    assert "有些内容没有录制好的判断" in chinese


# -- 2. helpdesk bot and helpdesk serve -----------------------------------------------------------


def ask(db: Path, *questions: str) -> None:
    desk = open_service(load_settings(store={"db": db}))
    try:
        for question in questions:
            desk.ask(None, question)
    finally:
        desk.close()


def test_a_bot_with_a_rejected_key_says_so_once_and_why_each_question_escalated(
    tmp_path: Path, valen_server: ValenTestServer, processes: list[subprocess.Popen[bytes]]
) -> None:
    valen_server.responder = fixed(REJECTED)
    db = tmp_path / "desk.sqlite3"
    ask(db, Q1, Q2, Q3)
    log = tmp_path / "bot.log"
    url = valen_server.base_url + "?token=in-the-url"
    bot = start(processes, log, "bot", "-v", "--db", str(db), "--replay", "off",
                "--base-url", url, env={"VALEN_API_KEY": KEY})  # fmt: skip

    def settled() -> list[str]:
        return [line for line in log.read_text().splitlines() if "): escalated" in line]

    until(lambda: len(settled()) == 3)
    assert stop(bot) == 0
    lines = log.read_text().splitlines()
    [started] = [line for line in lines if ": answering questions from " in line]
    port = valen_server.base_url.split(":")[2].split("/")[0]
    assert f"(Valen: live, http://127.0.0.1:{port}/v1?token=[redacted]), 8 at once" in started
    # Each question: the reason and how many passages Valen failed to judge, by kind.
    for line in settled():
        assert line.startswith("helpdesk bot: question ")
        reason = line.split("): ", 1)[1]
        assert reason.startswith("escalated: valen-error (auth ×"), line
    failed = sum(int(line.rsplit("×", 1)[1].rstrip(")")) for line in settled())
    assert failed == len(valen_server.received)  # Every request is counted, and only once.
    # The rejected key: one warning for the three questions, naming no secret.
    warnings = [line for line in lines if "rejected the API key" in line]
    assert len(warnings) == 1, lines
    assert "Valen rejected the API key: auth (HTTP 401): " in warnings[0]
    assert "VALEN_API_KEY" in warnings[0]
    output = log.read_text()
    assert KEY not in output and "in-the-url" not in output


def test_a_replaying_bot_says_it_replays(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    log = tmp_path / "bot.log"
    bot = start(processes, log, "bot", "--db", str(tmp_path / "desk.sqlite3"), env={})
    until(lambda: "answering questions" in log.read_text())
    assert stop(bot) == 0
    [started] = [line for line in log.read_text().splitlines() if "answering questions" in line]
    assert "(Valen: replay), 8 at once; Ctrl+C to stop" in started


def answers(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_serve_says_how_it_reaches_valen(
    tmp_path: Path, valen_server: ValenTestServer, processes: list[subprocess.Popen[bytes]]
) -> None:
    db = tmp_path / "desk.sqlite3"
    for replay, said in (("on", "  Valen: replay"), ("record", "  Valen: live, recording, ")):
        log = tmp_path / f"serve-{replay}.log"
        server = start(processes, log, "serve", "--port", "0", "--bots", "0", "--db", str(db),
                       "--replay", replay, "--base-url", valen_server.base_url,
                       env={"VALEN_API_KEY": KEY})  # fmt: skip
        until(lambda: "  Valen: " in log.read_text())  # noqa: B023 (used before the next)
        # Serving (its loop runs, so SIGTERM is its own to handle) once it answers.
        url = log.read_text().split("listening on ", 1)[1].split()[0]
        until(lambda: answers(url))  # noqa: B023
        assert stop(server) == 0
        lines = log.read_text().splitlines()
        [line] = [line for line in lines if line.startswith("  Valen: ")]
        assert line.startswith(said)
        if replay == "record":
            assert line == said + valen_server.base_url
        assert KEY not in log.read_text()


# -- 3. helpdesk eval -----------------------------------------------------------------------------


def test_eval_says_valen_judged_nothing_and_exits_1(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    # A refusal of the input, not of the key: a rejected key stops the run at its first question.
    valen_server.responder = fixed(Reply(status=400, body={"error": {"message": "bad input"}}))
    live = ["--replay", "off", "--base-url", valen_server.base_url, "--retriever", "overlap"]
    code, out, err = run_cli(capsys, "eval", str(SEED_DATA), "--sweep", *live)
    asked = len(valen_server.received)  # 3 questions, 5 passages each.
    assert code == 1 and asked == 15
    lines = out.rstrip().splitlines()
    assert "No threshold here answers anything with every answer correct." in lines[-3]
    assert lines[-1] == "Valen failed 15 of 15 judgments: bad-request 15."
    assert "nothing was judged (Valen failed 15 of 15 judgments: bad-request 15)" in err
    code, out, _ = run_cli(capsys, "eval", str(SEED_DATA), "--json", *live)
    assert code == 1
    assert json.loads(out)["judgments"] == {
        "asked": 15, "judged": 0, "not_judged": {"bad-request": 15},
    }  # fmt: skip


def test_eval_counts_failures_but_exits_0_when_some_were_judged(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    def respond(received: Received, index: int) -> Reply:
        return REJECTED if index % 3 == 0 else probability_reply(received, 0.9)

    valen_server.responder = respond
    code, out, err = run_cli(capsys, "eval", str(SEED_DATA), "--retriever", "overlap",
                             "--replay", "off", "--base-url", valen_server.base_url)  # fmt: skip
    assert code == 0, err
    assert out.rstrip().splitlines()[-1] == "Valen failed 5 of 15 judgments: auth 5."


def test_eval_says_valen_declined_but_exits_0_when_it_refused_everything(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    """A refusal is the model's verdict, not a failure to reach Valen: eval exited 1 and sent
    the operator to check a key and a connection that both worked."""
    valen_server.responder = refusal_reply
    code, out, err = run_cli(capsys, "eval", str(SEED_DATA), "--retriever", "overlap",
                             "--replay", "off", "--base-url", valen_server.base_url)  # fmt: skip
    assert code == 0, err
    assert out.rstrip().splitlines()[-1] == "Valen declined to judge 15 of 15 judgments (refused)."
    assert "Valen failed" not in out and "nothing was judged" not in err


def test_eval_replaying_names_no_valen_failure(capsys: pytest.CaptureFixture[str]) -> None:
    # Replay misses are no failure of Valen's: a wording with nothing recorded is no error.
    argv = ["eval", str(SEED_DATA), "--retriever", "overlap", "--predicate", "Relevant?"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "Valen failed" not in out
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    assert json.loads(out)["judgments"] == {
        "asked": 15, "judged": 0, "not_judged": {"replay-miss": 15},
    }  # fmt: skip


def test_eval_help_documents_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "eval", "--help")
    assert "1 when Valen was asked and judged nothing" in " ".join(out.split())
