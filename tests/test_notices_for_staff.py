"""Events as staff read them: the agent console's transcript and `helpdesk conversations show`
word them for agents, never in the sentences said to the customer.

A tester found a customer-asked escalation shown to the agent as "— A person will reply here."
(the agent should read that the customer asked for a person), and a resolution as "— Ana marked
this resolved. Write again any time." (said to the customer). The bot's escalations ended in
"A person will reply here." for agents too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.desk.models import (
    Claimed,
    EventData,
    Feedback,
    FeedbackGiven,
    HandedBack,
    LocaleSet,
    PersonOffered,
    Rated,
    Released,
    Reopened,
    Resolved,
)
from chatbot.desk.models import Escalated as EscalatedEvent
from chatbot.engine.models import Candidate, Decision, Reason
from chatbot.notices import notice
from tests.store.conftest import FakeClock

# What only a customer is told: a promise of a reply, an invitation to write, thanks.
TO_THE_CUSTOMER = ("reply here", "Write again", "You ", "your ", "Thank you", "随时", "您")

AGENTS_EN = {
    Reason.CUSTOMER_ASKED: "The customer asked for a person.",
    Reason.NOT_HELPFUL: "The answer did not help: the customer asked for a person.",
    Reason.LOW_SCORE: "The bot could not answer this from the help center.",
    Reason.NO_PASSAGES: "The bot could not answer this from the help center.",
    Reason.VALEN_ERROR: "The bot could not check the help center just now.",
    Reason.BOT_FAILED: "The bot could not check the help center just now.",
    Reason.NOT_JUDGED: (
        "The bot could not check every help-center passage for this question (replay mode, no "
        "network: some have no recorded judgment)."
    ),
}
AGENTS_ZH = {
    Reason.CUSTOMER_ASKED: "客户要求转人工。",
    Reason.NOT_HELPFUL: "回答没有帮助：客户要求转人工。",
    Reason.LOW_SCORE: "机器人无法根据帮助中心的内容回答这个问题。",
    Reason.VALEN_ERROR: "机器人暂时无法查阅帮助中心。",
}

EVENTS: list[EventData] = [
    *(EscalatedEvent(reason=reason) for reason in Reason),
    Claimed(agent="Ana"),
    Released(agent="Ana"),
    Released(agent="Ana", away=True),
    Released(agent="Ana", by="Bo"),
    Resolved(agent="Ana"),
    HandedBack(agent="Ana"),
    Reopened(),
    FeedbackGiven(entry=1, value=Feedback.HELPFUL),
    FeedbackGiven(entry=1, value=Feedback.NOT_HELPFUL),
    LocaleSet(locale="zh", chosen_by_customer=True),
    LocaleSet(locale="zh", chosen_by_customer=False),
    PersonOffered(answer_entry=1),
    Rated(rating=4, resolved_entry=2, agent="Ana"),
]


@pytest.mark.parametrize("reason", list(Reason))
def test_an_escalation_is_worded_for_agents(reason: Reason) -> None:
    event = EscalatedEvent(reason=reason)
    assert notice(event, reader="agent") == AGENTS_EN[reason]
    if reason in AGENTS_ZH:
        assert notice(event, reader="agent", locale="zh") == AGENTS_ZH[reason]


def test_an_unjudged_escalation_keeps_its_cause_for_agents() -> None:
    # A live refusal (not a replay miss): the plain not-judged sentence, for agents too.
    refused = Candidate(id="p", text="t", bm25=1.0, error_kind="refused")
    decision = Decision(
        question="q", answer=None, reason=Reason.NOT_JUDGED, candidates=(refused,), threshold=0.7
    )
    event = EscalatedEvent(reason=Reason.NOT_JUDGED, question_entry=7)
    said = notice(event, reader="agent", decisions={7: decision})
    assert said == "The bot could not check every help-center passage for this question."
    assert notice(event, reader="agent", locale="zh", decisions={7: decision}) == (
        "机器人无法查阅这个问题的每一段帮助中心内容。"
    )


def test_a_resolution_is_worded_for_agents_and_the_customer_keeps_theirs() -> None:
    event = Resolved(agent="Ana")
    assert notice(event, reader="agent") == "Ana marked the conversation resolved."
    assert notice(event, reader="agent", locale="zh") == "Ana 已将此对话标记为已解决。"
    assert notice(event, reader="customer") == "Ana marked this resolved. Write again any time."
    assert notice(event, reader="customer", locale="zh") == (
        "Ana 已将此对话标记为已解决。如有需要，随时可以再写信给我们。"
    )


def test_the_customer_keeps_their_escalation_sentences() -> None:
    assert notice(EscalatedEvent(reason=Reason.CUSTOMER_ASKED), reader="customer") == (
        "A person will reply here."
    )
    assert notice(EscalatedEvent(reason=Reason.LOW_SCORE), reader="customer") == (
        "The bot could not answer this from the help center. A person will reply here."
    )
    assert notice(EscalatedEvent(reason=Reason.VALEN_ERROR), reader="customer", locale="zh") == (
        "机器人暂时无法查阅帮助中心。客服人员会在这里回复您。"
    )


@pytest.mark.parametrize("locale", ["en", "zh"])
@pytest.mark.parametrize("event", EVENTS, ids=lambda event: type(event).__name__)
def test_no_event_is_said_to_an_agent_as_to_the_customer(event: EventData, locale: str) -> None:
    said = notice(event, reader="agent", locale=locale)  # type: ignore[arg-type]
    if said is None:
        return
    assert not any(words in said for words in TO_THE_CUSTOMER), said
    customer = notice(event, reader="customer", locale=locale)  # type: ignore[arg-type]
    if isinstance(event, Claimed | HandedBack):
        assert said == customer  # Neutral: a fact either reader reads the same way.
    else:
        assert said != customer


def test_conversations_show_words_events_for_staff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": db}), clock=FakeClock())
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, "My bike will not unlock.")
        desk.claim(conversation, agent="Ana")
        desk.reply(conversation, agent="Ana", text="Try dock 4.")
        desk.resolve(conversation, agent="Ana")
    finally:
        desk.close()
    assert main(["conversations", "show", str(conversation), "--db", str(db)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "— The customer asked for a person." in out
    assert "— Ana marked the conversation resolved." in out
    assert "A person will reply here" not in out and "Write again" not in out
