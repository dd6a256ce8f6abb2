"""Content gaps as a tester on PostgreSQL found them, on every backend:

- a question asked again in other words' case, spacing or punctuation is the same question (as
  the desk compares repeats): answered once, it is no gap, even when the customer then asks for
  a person from the repeat ("You asked this before…");
- a gap's count is how many times customers asked it (customer messages), not how many times it
  escalated: an agent's hand-back makes the bot judge the same message again.

Checked where gaps are shown: the figures (`helpdesk stats`) and the editor's list."""

from __future__ import annotations

import json

import psycopg
import pytest

from chatbot.cli.main import main
from chatbot.desk.models import ChatEvent, PersonOffered, State
from chatbot.desk.service import DeskService, question_key
from chatbot.engine.models import Reason
from chatbot.store import stats_sql
from chatbot.store.stats_sql import PostgresDialect
from tests.backends import Backend, postgres_server
from tests.store.conftest import FakeClock, answered, escalated

WORKER = "worker-1"
CHARGED = "I was charged twice for the same ride, can I get my money back?"
CHARGED_AGAIN = "i was charged twice for the same ride can I get my money back"
WEATHER = "What's the weather going to be like in Paris tomorrow?"


def decide_answered(desk: DeskService, question: str) -> str:
    [taken] = desk.lease(WORKER, limit=1, lease_s=30)
    return desk.record_decision(WORKER, taken, answered(question)).outcome


def decide_escalated(desk: DeskService, question: str) -> str:
    [taken] = desk.lease(WORKER, limit=1, lease_s=30)
    return desk.record_decision(WORKER, taken, escalated(question)).outcome


def gaps(desk: DeskService) -> tuple[list[str], list[str]]:
    """The gaps the editor lists, and those the figures count."""
    listed = [gap.question for gap in desk.content_gaps()]
    counted = [gap.question for gap in desk.stats().content_gaps]
    return listed, counted


def test_a_repeat_in_other_punctuation_then_a_person_is_no_gap(desk: DeskService) -> None:
    """The tester's case: answered from card-charged-twice; asked again without the comma and
    question mark ("You asked this before…"); then Ctrl+T."""
    assert question_key(CHARGED) == question_key(CHARGED_AGAIN)  # The desk's "same question".
    conversation = desk.ask(None, CHARGED).conversation.id
    assert decide_answered(desk, CHARGED) == "answered"
    again = desk.ask(conversation, CHARGED_AGAIN)
    assert not again.message.pending
    [*_, last] = desk.entries(conversation)
    assert isinstance(last, ChatEvent) and isinstance(last.event, PersonOffered)
    assert desk.talk_to_person(conversation).escalated
    [item] = desk.queue()
    assert (item.question, item.reason) == (CHARGED_AGAIN, Reason.CUSTOMER_ASKED)
    assert gaps(desk) == ([], [])
    assert desk.stats().escalations == 1  # Still an escalation: only the gaps leave it out.


def test_a_repeat_the_desk_recognised_is_no_gap_whatever_its_characters(
    desk: DeskService,
) -> None:
    """The desk compares a repeat's words (`question_key`: an emoji or full-width letters are
    no words of it); its "You asked this before" is what the figures go by then."""
    conversation = desk.ask(None, CHARGED).conversation.id
    assert decide_answered(desk, CHARGED) == "answered"
    full_width = "\uff4d\uff4f\uff4e\uff45\uff59"  # "money"
    again = "\u2192 " + CHARGED_AGAIN.replace("money", full_width) + " \U0001f64f"
    assert question_key(again) == question_key(CHARGED)
    assert not desk.ask(conversation, again).message.pending
    assert desk.talk_to_person(conversation).escalated
    assert gaps(desk) == ([], [])


def test_a_repeat_asked_while_the_bot_judged_then_a_person_is_no_gap(
    desk: DeskService,
) -> None:
    """Asked again in other punctuation while the bot still judged the first: one answer served
    both (the repeat is never judged), and the customer then asked for a person."""
    conversation = desk.ask(None, CHARGED).conversation.id
    assert not desk.ask(conversation, f"  {CHARGED_AGAIN.upper()}!! ").message.pending
    assert decide_answered(desk, CHARGED) == "answered"
    assert desk.talk_to_person(conversation).escalated
    assert gaps(desk) == ([], [])


def test_other_words_answered_in_the_conversation_leave_a_gap(desk: DeskService) -> None:
    """Only the same words count as the same question: a question merely near an answered one
    stays a gap."""
    conversation = desk.ask(None, CHARGED).conversation.id
    assert decide_answered(desk, CHARGED) == "answered"
    other = "I was charged twice for the same ride, can I get my money back today?"
    desk.ask(conversation, other)
    assert decide_escalated(desk, other) == "escalated"
    assert gaps(desk) == ([other], [other])


def test_a_gap_counts_askings_not_escalations(desk: DeskService, clock: FakeClock) -> None:
    """Asked once, escalated, handed back by an agent (Ctrl+G): the bot judges the same message
    again and escalates again. One asking; a second customer asking it makes two."""
    conversation = desk.ask(None, WEATHER).conversation.id
    assert decide_escalated(desk, WEATHER) == "escalated"
    clock.advance(60)
    assert desk.claim(conversation, agent="ana").won
    desk.hand_back(conversation, agent="ana")
    assert desk.conversation(conversation).pending == 1  # The bot judges it again.
    clock.advance(1)
    assert decide_escalated(desk, WEATHER) == "escalated"
    assert desk.conversation(conversation).state is State.WAITING
    figures = desk.stats()
    assert figures.escalations == 2
    [gap] = figures.content_gaps
    assert (gap.question, gap.count) == (WEATHER, 1)
    # Another customer, in other case: the same question, asked twice now.
    clock.advance(60)
    elsewhere = f" {WEATHER.lower()}"
    desk.ask(None, elsewhere)
    assert decide_escalated(desk, elsewhere) == "escalated"
    [gap] = desk.stats().content_gaps
    assert gap.count == 2


def test_a_question_asked_again_after_escalating_counts_twice(desk: DeskService) -> None:
    """The same customer asking it again (the bot had not answered it) is a second asking."""
    conversation = desk.ask(None, WEATHER).conversation.id
    assert decide_escalated(desk, WEATHER) == "escalated"
    assert desk.claim(conversation, agent="ana").won
    desk.hand_back(conversation, agent="ana")
    assert decide_escalated(desk, WEATHER) == "escalated"  # The hand-back's judgment.
    assert desk.claim(conversation, agent="ana").won
    desk.reply(conversation, agent="ana", text="I cannot tell, sorry.")
    desk.hand_back(conversation, agent="ana")
    assert desk.conversation(conversation).pending == 0  # Replied to: nothing to judge.
    desk.ask(conversation, WEATHER)
    assert decide_escalated(desk, WEATHER) == "escalated"  # Asked again: judged again.
    figures = desk.stats()
    assert figures.escalations == 3
    [gap] = figures.content_gaps
    assert (gap.question, gap.count) == (WEATHER, 2)


def test_helpdesk_stats_shows_the_count_of_askings_and_no_answered_repeat(
    backend: Backend, desk: DeskService, capsys: pytest.CaptureFixture[str]
) -> None:
    charged = desk.ask(None, CHARGED).conversation.id
    decide_answered(desk, CHARGED)
    desk.ask(charged, CHARGED_AGAIN)
    desk.talk_to_person(charged)
    weather = desk.ask(None, WEATHER).conversation.id
    decide_escalated(desk, WEATHER)
    assert desk.claim(weather, agent="ana").won
    desk.hand_back(weather, agent="ana")
    decide_escalated(desk, WEATHER)
    assert main(["stats", "--db", str(backend.location), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert [(g["question"], g["count"]) for g in figures["content_gaps"]] == [(WEATHER, 1)]


KEYED = [
    CHARGED,
    CHARGED_AGAIN,
    "  50% off?\t[yes]\\no ^caret~ a_b {x} |y| <z> = 1 + 2 * 3 / 4; 'q' \"r\" `s` @t #u $v &w\n",
    "\u2192 It\u2019s \u201cquoted\u201d \u2014 a dash\u2026 \u00bfqu\u00e9? \u00a1s\u00ed! \u00b7",
    "我被扣了两次钱，能退款吗？。、《》「」！（）：；\u3000",
    "",
]


def test_postgresql_keys_questions_as_sqlite_does() -> None:
    """SQLite compares questions with a function of ours (`stats_sql.question_key`), PostgreSQL
    with a regular expression: every character either leaves out, literally (`%` and quotes
    included, through the driver's parameters)."""
    server = postgres_server()
    with psycopg.connect(server.admin, autocommit=True) as conn:
        for text in KEYED:
            sql = f"SELECT {PostgresDialect().question_key('%(text)s')}"
            [(keyed,)] = conn.execute(sql.encode(), {"text": text}).fetchall()
            assert keyed == stats_sql.question_key(text), text
    assert stats_sql.question_key(CHARGED) == stats_sql.question_key(CHARGED_AGAIN)
    assert stats_sql.question_key(KEYED[4]) == "我被扣了两次钱能退款吗"
    assert stats_sql.question_key(KEYED[2]) == "50offyesnocareta_bxyz1234qrstuvw"
