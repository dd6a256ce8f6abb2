"""The customer's side: ask a question, watch the bot work, read the answer or a person's reply."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from chatbot.engine.engine import check_question
from chatbot.engine.models import Decision, Reason
from chatbot.errors import HelpdeskError
from chatbot.store import Conversation, Feedback, State
from chatbot.text import printable
from chatbot.tui.commands import PaletteCommand
from chatbot.tui.messages import StoreWritten
from chatbot.tui.services import Services
from chatbot.tui.widgets.bot_working import BotWorking
from chatbot.tui.widgets.message_bubble import MessageBubble

WELCOME = (
    "Hi! Ask anything about renting, riding, returning or paying for a bike. "
    "The bot answers from the help center; a person takes over when it cannot."
)
REPLAY_NOTE = (
    "Replay mode, no network: the bot has recorded answers for these questions only (anything "
    "else goes to a person). Type one, or pick it with Ctrl+P → Ask:"
)
JUDGE = "judge"


def status_line(conversation: Conversation | None) -> Text:
    """Who is answering, in words a customer understands."""
    state = State.BOT if conversation is None else conversation.state
    if state is State.WAITING:
        return Text("Waiting for a person: they will reply here.")
    if state is State.CLAIMED and conversation is not None:
        agent = printable(conversation.agent or "A person")
        return Text(f"{agent} (support agent) is helping you.")
    if state is State.RESOLVED:
        return Text("Resolved. Write again if you need anything else.")
    return Text("You are talking to the help-desk bot.")


class ChatPanel(Vertical):
    """One customer conversation: transcript, working indicator, inline errors and the input."""

    BINDINGS = [
        Binding("ctrl+t", "talk_to_person", "Talk to a person"),
        Binding("ctrl+y", "feedback('helpful')", "Helpful"),
        Binding("ctrl+n", "feedback('not-helpful')", "Not helpful"),
    ]

    working: reactive[bool] = reactive(False)
    """True while the engine judges the latest question."""

    @dataclass
    class Judged(Message):
        """The engine decided on a customer's question."""

        conversation_id: int
        message_id: int
        decision: Decision

    log_view = getters.query_one("#chat-log", VerticalScroll)
    question = getters.query_one("#question", Input)
    error = getters.query_one("#chat-error", Static)

    def __init__(
        self, services: Services, *, conversation_id: int | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.services = services
        self.conversation_id = conversation_id
        """Created with the first message, so opening the app leaves no empty conversations."""
        self._last_message_id = 0
        self._latest_question_id = 0
        self._conversation: Conversation | None = None

    def compose(self) -> ComposeResult:
        yield Static(status_line(None), id="chat-status")
        with VerticalScroll(id="chat-log"):
            yield Static(Text(WELCOME), classes="welcome")
            if self.services.suggestions:
                yield Static(self._suggestions(), classes="welcome")
        yield BotWorking(id="bot-working")
        yield Static(id="chat-error")
        yield Input(placeholder="Type your question and press Enter", id="question")

    async def on_mount(self) -> None:
        self.query_one(BotWorking).display = False
        self.error.display = False
        self.services.changed.subscribe(self, self._store_changed)
        await self._load_new()

    def watch_working(self, working: bool) -> None:
        if self.is_mounted:
            self.query_one(BotWorking).display = working

    # -- reading the store ------------------------------------------------------------------------

    async def _store_changed(self, _version: int) -> None:
        await self._load_new()

    async def _load_new(self) -> None:
        """Append what is new in the conversation (anyone's writes) and refresh the status."""
        if self.conversation_id is None:
            return
        store = self.services.store
        self._conversation = store.conversation(self.conversation_id)
        self.query_one("#chat-status", Static).update(status_line(self._conversation))
        messages = store.messages(self.conversation_id, after_id=self._last_message_id)
        if messages:
            # Claim the ids before awaiting the mount so an overlapping refresh cannot add them too.
            self._last_message_id = messages[-1].id
            await self.log_view.mount_all(MessageBubble(message) for message in messages)
            self.log_view.scroll_end(animate=False)
        self.refresh_bindings()

    def _suggestions(self) -> Text:
        text = Text(REPLAY_NOTE)
        for question in self.services.suggestions:
            text.append(f"\n  • {printable(question)}")
        return text

    def _show_error(self, text: str) -> None:
        self.error.update(Text(text))
        self.error.display = True

    # -- asking -----------------------------------------------------------------------------------

    @on(Input.Submitted, "#question")
    async def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        await self.ask(event.value)

    async def ask(self, text: str) -> None:
        """Store the customer's message, then have the bot judge it if the bot has the turn."""
        try:
            if not text.strip():
                raise HelpdeskError("Please type a question first.")
            check_question(text)
            conversation_id = self._ensure_conversation()
            message = self.services.store.add_customer_message(conversation_id, text)
        except HelpdeskError as error:
            self._show_error(str(error))
            return
        self.error.display = False
        self.question.clear()
        self.post_message(StoreWritten())
        await self._load_new()
        # The bot answers only while it owns the conversation; otherwise the person reads it.
        if self._conversation is not None and self._conversation.state is State.BOT:
            self._latest_question_id = message.id
            self.working = True
            self.judge(conversation_id, message.id, text)

    def _ensure_conversation(self) -> int:
        if self.conversation_id is None:
            self.conversation_id = self.services.store.start_conversation().id
        return self.conversation_id

    # Not exclusive: a customer who sends a second question before the first is answered still
    # deserves an answer to the first; cancelling it would leave a stored question unanswered.
    @work(group=JUDGE, exit_on_error=False)
    async def judge(self, conversation_id: int, message_id: int, question: str) -> None:
        """Ask the engine and post the decision for the UI thread to store and show."""
        decision = await self.services.engine.answer(question)
        self.post_message(self.Judged(conversation_id, message_id, decision))

    @on(Judged)
    async def _judged(self, event: Judged) -> None:
        if event.message_id == self._latest_question_id:
            self.working = False
        try:
            self.services.store.record_decision(
                event.conversation_id, message_id=event.message_id, decision=event.decision
            )
        except HelpdeskError as error:  # A database busy beyond its timeout, say.
            self._show_error(f"The answer could not be saved: {error}")
            return
        self.post_message(StoreWritten())
        await self._load_new()

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != JUDGE or event.state is not WorkerState.ERROR:
            return
        # The engine turns Valen failures into unjudged passages, so an error here is unexpected:
        # hand the customer to a person rather than leave them waiting on nothing.
        self.working = False
        self.log.error(f"judging failed: {event.worker.error!r}")
        if self.conversation_id is not None:
            try:
                self.services.store.escalate(self.conversation_id, reason=Reason.VALEN_ERROR)
            except HelpdeskError as error:
                self._show_error(str(error))
                return
            self.post_message(StoreWritten())
            await self._load_new()

    # -- actions ----------------------------------------------------------------------------------

    async def action_talk_to_person(self) -> None:
        """Escalate with reason `customer-asked`, whatever the bot is doing."""
        try:
            conversation_id = self._ensure_conversation()
            asked = self.services.store.escalate(conversation_id, reason=Reason.CUSTOMER_ASKED)
        except HelpdeskError as error:
            self._show_error(str(error))
            return
        if not asked:
            self.notify("A person already has this conversation.")
        self.post_message(StoreWritten())
        await self._load_new()

    def _awaiting_feedback(self) -> MessageBubble | None:
        """The latest bot answer the customer has not judged yet."""
        bubbles = [b for b in self.query(MessageBubble) if b.asks_for_feedback]
        return bubbles[-1] if bubbles else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "feedback" and self.is_mounted and self._awaiting_feedback() is None:
            return None  # Shown greyed out in the footer until there is an answer to judge.
        return True

    async def action_feedback(self, value: str) -> None:
        bubble = self._awaiting_feedback()
        if bubble is not None:
            await self._give_feedback(bubble, Feedback(value))

    @on(MessageBubble.FeedbackGiven)
    async def _feedback_given(self, event: MessageBubble.FeedbackGiven) -> None:
        bubble = next(b for b in self.query(MessageBubble) if b.message.id == event.message_id)
        await self._give_feedback(bubble, event.feedback)

    async def _give_feedback(self, bubble: MessageBubble, feedback: Feedback) -> None:
        try:
            self.services.store.set_feedback(bubble.message.id, feedback)
        except HelpdeskError as error:
            self._show_error(str(error))
            return
        await bubble.show_feedback(feedback)
        self.post_message(StoreWritten())
        await self._load_new()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand(
            "Talk to a person", "Hand this conversation to a support agent",
            self.action_talk_to_person,
        )  # fmt: skip
        # Palette titles are read as markup, so a question with brackets is left to typing.
        for question in (q for q in self.services.suggestions if "[" not in q):
            yield PaletteCommand(
                f"Ask: {question}", "A question with recorded answers",
                lambda question=question: self.ask(question),  # type: ignore[misc]
            )  # fmt: skip
        if self._awaiting_feedback() is not None:
            yield PaletteCommand(
                "Mark the last answer helpful", "Tell us the bot's answer helped",
                lambda: self.action_feedback(Feedback.HELPFUL.value),
            )  # fmt: skip
            yield PaletteCommand(
                "Mark the last answer not helpful", "Ask a person to take a look",
                lambda: self.action_feedback(Feedback.NOT_HELPFUL.value),
            )  # fmt: skip
