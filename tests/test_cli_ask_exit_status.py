"""`helpdesk ask` with a replay cache it cannot use, and with a Valen that judges nothing: what
it explains on stdout and the status it exits with (a tester's findings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.desk.models import Escalated
from chatbot.engine.models import Reason
from chatbot.notices import ESCALATED_NOTICE, notice
from tests.cli_run import run_cli
from tests.valen_server import Received, Reply, ValenTestServer, probability_reply, refusal_reply

Q1 = "I was charged twice for the same ride, can I get my money back?"
NONE_RECORDED = "none is recorded for this question and passage"


def live(server: ValenTestServer, tmp_path: Path) -> list[str]:
    return ["--replay", "off", "--base-url", server.base_url, "--cache", str(tmp_path / "c.json")]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VALEN_API_KEY", "sk-test")


def test_a_corrupt_cache_is_said_to_be_why_every_passage_missed(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    # The tester's case: stderr said the cache was ignored, stdout that nothing was recorded for
    # this question, as if the cache had been read.
    cache = tmp_path / "rerank.json"
    cache.write_text("garbage{")
    code, out, _ = run_cli(capsys, "ask", Q1, "--cache", str(cache))
    assert code == 0
    assert "replay cache ignored" in caplog.text and "malformed JSON" in caplog.text
    assert "Escalated to a person: not-judged" in out and "replay-miss" in out
    assert NONE_RECORDED not in out
    note = " ".join(out.split("\n\n")[-1].split())
    assert note.startswith(
        "Every replay-miss here comes from the replay cache, not from this question: it could "
        f"not be read ({cache}: malformed JSON at line 1 column 1), so no recorded judgment was "
        "used. Repair the file or move it aside"
    ), note


def test_a_readable_cache_keeps_the_plain_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "ask", "Do e-bikes come with a helmet?")
    assert code == 0 and err == ""
    assert "replay-miss is not a failure" in out and NONE_RECORDED in " ".join(out.split())


@pytest.mark.parametrize("json_output", [False, True])
def test_ask_exits_1_when_valen_judged_nothing_failing(
    capsys: pytest.CaptureFixture[str],
    valen_server: ValenTestServer,
    tmp_path: Path,
    json_output: bool,
) -> None:
    # As `eval` does: every judgment failed (a rejected key here), so the status says so.
    valen_server.responder = lambda _r, _i: Reply(status=401, body={"error": "who?"})
    extra = ["--json"] if json_output else []
    code, out, err = run_cli(capsys, "ask", Q1, *live(valen_server, tmp_path), *extra)
    assert code == 1
    assert valen_server.received
    if json_output:
        assert json.loads(out)["reason"] == "valen-error"
    else:
        assert "Escalated to a person: valen-error" in out
    assert err == (
        "helpdesk ask: nothing was judged (Valen failed 5 of 5 judgments: auth 5); "
        "`helpdesk valen check` tests the connection and the key\n"
    )


def test_ask_exits_0_when_valen_judged_something(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # Some judgments failing and one judged: a decision was made, as in `eval`.
    def respond(received: Received, index: int) -> Reply:
        if "card-charged-twice" in json.dumps(received.body) or index == 0:
            return probability_reply(received, 0.2)
        return Reply(status=401, body={"error": "who?"})

    valen_server.responder = respond
    code, out, err = run_cli(capsys, "ask", Q1, *live(valen_server, tmp_path))
    assert code == 0, err
    assert "p=0.200" in out and "nothing was judged" not in err


def test_refusals_are_no_failure(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = refusal_reply
    code, out, err = run_cli(capsys, "ask", Q1, *live(valen_server, tmp_path))
    assert code == 0, err
    assert "Escalated to a person: not-judged" in out and "nothing was judged" not in err


def test_replay_misses_are_no_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cache = tmp_path / "rerank.json"
    cache.write_text("garbage{")
    assert main(["ask", Q1, "--cache", str(cache)]) == 0


def test_ask_help_says_its_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "ask", "--help")
    assert code == 0
    assert "1 when Valen was asked and judged nothing" in " ".join(out.split())


@pytest.mark.parametrize("reason", [Reason.VALEN_ERROR, Reason.BOT_FAILED])
def test_a_customer_is_told_the_help_center_was_not_checked(reason: Reason) -> None:
    # "could not answer this from the help center" read as if it had no answer, when Valen (or
    # the bot) failed and the help center was never checked.
    event = Escalated(reason=reason, question_entry=1)
    said = notice(event, reader="customer")
    assert said == "The bot could not check the help center just now. A person will reply here."
    assert notice(event, reader="customer", locale="zh") == (
        "机器人暂时无法查阅帮助中心。客服人员会在这里回复您。"
    )


@pytest.mark.parametrize("reason", [Reason.LOW_SCORE, Reason.NO_PASSAGES])
def test_a_checked_help_center_keeps_its_sentence(reason: Reason) -> None:
    assert notice(Escalated(reason=reason), reader="customer") == ESCALATED_NOTICE
