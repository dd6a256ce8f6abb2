"""The desk as another process changes it while the app runs (the `other` fixture's
service): customers waiting for a person, conversations claimed, replied to, resolved,
and what agents and customers wrote, read back."""

from __future__ import annotations

from textual.pilot import Pilot

from chatbot.desk.models import Author, ChatEvent, Note, State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Candidate, Decision, Reason
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.helpers import burst, wait_until


def waiting(desk: DeskService, question: str = "Where is my helmet?") -> int:
    """A customer in another process who asked for a person, then asked `question`."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    return conversation


def asked_for_a_person(other: DeskService) -> int:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    return conversation


async def claim(pilot: Pilot[None], other: DeskService, conversation: int) -> ConversationView:
    """Open `conversation` in the console and claim it, the reply box ready."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    view = await app.open_conversation(conversation)
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: other.conversation(conversation).agent == "ana")
    return view


def replies(desk: DeskService, conversation: int) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.AGENT]


def notes(desk: DeskService, conversation: int) -> list[str]:
    return [e.event.text for e in desk.entries(conversation)
            if isinstance(e, ChatEvent) and isinstance(e.event, Note)]  # fmt: skip


async def claimed(
    app: HelpDeskApp, pilot: Pilot[None], desk: DeskService
) -> tuple[int, ConversationView]:
    conversation = waiting(desk)
    view = await app.open_conversation(conversation)
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: view.is_mine and view.reply_input.has_focus)
    return conversation, view


def agent_words(desk: DeskService, conversation: int) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.AGENT]


async def resolved_by_another_agent(
    pilot: Pilot[None], panel: ChatPanel, other: DeskService
) -> int:
    """The customer asks, hands the question to a person (Ctrl+T), and another agent claims,
    replies and resolves it: the chat asks for a rating."""
    panel.question.focus()
    await burst(pilot, *"Where is my bike?", "enter")
    await wait_until(pilot, lambda: panel.conversation_id is not None)
    await pilot.press("ctrl+t")
    cid = panel.conversation_id
    assert cid is not None
    await wait_until(pilot, lambda: other.conversation(cid).state is State.WAITING)
    other.claim(cid, agent="ben")
    other.reply(cid, agent="ben", text="It is at the station you left it at.")
    other.resolve(cid, agent="ben")
    await wait_until(pilot, lambda: panel.rating.display)
    return cid


def customer_words(other: DeskService, cid: int) -> list[str]:
    return [m.text for m in other.messages(cid) if m.author is Author.CUSTOMER]


def long_conversation(desk: DeskService, entries: int) -> int:
    """A conversation ana has claimed, `entries` long, each message naming its number."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "Message 1: my bike will not unlock.")
    desk.claim(conversation, agent="ana")
    for number in range(len(desk.entries(conversation)) + 1, entries + 1):
        if number % 2:
            desk.ask(conversation, f"Message {number}: still locked.")
        else:
            desk.reply(conversation, agent="ana", text=f"Message {number}: try dock 4.")
    return conversation


def unjudged(question: str, kind: str) -> Decision:
    error = f"{kind}: no judgment"
    return Decision(
        question=question,
        answer=None,
        reason=Reason.NOT_JUDGED,
        candidates=(
            Candidate(id="refund-time", text="…", bm25=9.0, error=error, error_kind=kind),
            Candidate(id="refund-request", text="…", bm25=4.0, probability=0.1),
        ),
        threshold=0.7,
    )
