"""One conversation as the agent sees it: transcript, the bot's candidates, the agent's moves."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from chatbot.desk.models import Conversation, State
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.models import Passage
from chatbot.text import printable
from chatbot.tui.commands import PaletteCommand
from chatbot.tui.services import Services
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.queue_list import wait_time
from chatbot.tui.widgets.transcript import EARLIER_KEY, PAGE, Transcript


class ConversationView(Vertical):
    """Claim, reply, send a passage, resolve or hand back; everything else is read-only."""

    BINDINGS = [
        Binding("ctrl+l", "claim", "Claim"),
        Binding("ctrl+o", "send_passage", "Send passage"),
        Binding("ctrl+r", "resolve", "Resolve"),
        Binding("ctrl+g", "hand_back", "Hand back to bot"),
        Binding("escape", "close", "Back to queue"),
        Binding(EARLIER_KEY.lower(), "show_earlier", "Earlier messages"),
    ]

    @dataclass
    class Closed(Message):
        """The agent went back to the queue."""

        conversation_id: int

    transcript = getters.query_one(Transcript)
    reply_input = getters.query_one("#reply", Input)
    bars = getters.query_one(CandidateBars)

    def __init__(self, services: Services, conversation_id: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.services = services
        self.conversation_id = conversation_id
        self.conversation: Conversation | None = None
        self._last_entry = 0
        self._decision_id: int | None = None
        self._loading = asyncio.Lock()
        self.loaded = asyncio.Event()
        """Set once the conversation is first shown."""

    def compose(self) -> ComposeResult:
        yield Static(id="conversation-header")
        with Horizontal(id="conversation-body"):
            with Vertical(id="conversation-main"):
                yield Transcript(id="transcript")
                yield Static(id="reply-hint")
                yield Input(placeholder="Reply to the customer and press Enter", id="reply")
            with VerticalScroll(id="conversation-side"):
                yield Static("Passages the bot considered", classes="section-title")
                yield CandidateBars(id="candidates")

    def on_mount(self) -> None:
        self.services.changed.subscribe(self, self._store_changed)
        self.transcript.focus()
        # After the mount: the footer hears of binding changes only from a mounted widget.
        self.call_later(self.reload)
        self.set_interval(1.0, self._show_header)

    # -- reading ----------------------------------------------------------------------------------

    async def _store_changed(self, _version: int) -> None:
        await self.reload()

    async def reload(self) -> None:
        """Pick up whatever changed: state, new entries (appended), a newer decision."""
        async with self._loading:  # One at a time, so each entry is written once, in order.
            desk = self.services.desk
            was_mine = self.is_mine
            try:
                conversation = await desk.conversation(self.conversation_id)
                if self._last_entry == 0:
                    page = await desk.page(self.conversation_id, limit=PAGE)
                    self.transcript.start(page)
                    if page.entries:
                        self._last_entry = page.entries[-1].id
                elif conversation.last_entry > self._last_entry:
                    entries = await desk.entries_after(self.conversation_id, self._last_entry)
                    if entries:
                        self._last_entry = entries[-1].id
                        self.transcript.add(entries)
                latest = await desk.latest_decision(self.conversation_id)
            except HelpdeskError as error:
                self.notify(str(error), severity="error", markup=False)
                self.loaded.set()
                return
            self.conversation = conversation
            if latest is None or latest.id != self._decision_id:
                self._decision_id = None if latest is None else latest.id
                self.bars.show(
                    None if latest is None else latest.decision, timings=self.services.timings
                )
            self._show_header()
            self._show_reply_state()
            if self.is_mine and not was_mine:
                self.reply_input.focus()
            self.refresh_bindings()
            self.loaded.set()

    @property
    def is_mine(self) -> bool:
        conversation = self.conversation
        return (
            conversation is not None
            and conversation.state is State.CLAIMED
            and conversation.agent == self.services.agent
        )

    def _show_header(self) -> None:
        conversation = self.conversation
        if conversation is None:
            return
        header = Text.assemble((f"Conversation #{conversation.id}", "bold"), " · ")
        if conversation.state is State.WAITING and conversation.waiting_since is not None:
            waited = wait_time(conversation.waiting_since, self.services.clock())
            header.append(f"waiting {waited}")
        elif conversation.state is State.CLAIMED:
            header.append(f"claimed by {printable(conversation.agent or '?')}")
        else:
            header.append(conversation.state.value)
        if conversation.reason is not None:
            header.append(f" · {conversation.reason.value}")
        if conversation.top_probability is not None:
            header.append(f" · top {conversation.top_probability:.2f}")
        self.query_one("#conversation-header", Static).update(header)

    def _show_reply_state(self) -> None:
        conversation = self.conversation
        assert conversation is not None
        hint = self.query_one("#reply-hint", Static)
        if self.is_mine:
            hint.update(Text("You own this conversation: the bot is silent.", style="dim"))
        elif conversation.state is State.WAITING:
            hint.update(Text("Claim this conversation (Ctrl+L) to reply.", style="bold"))
        elif conversation.state is State.CLAIMED:
            owner = printable(conversation.agent or "another agent")
            hint.update(Text(f"{owner} owns this conversation.", style="dim"))
        elif conversation.state is State.RESOLVED:
            hint.update(Text("Resolved.", style="dim"))
        else:
            hint.update(Text("The bot is answering this conversation.", style="dim"))
        self.reply_input.disabled = not self.is_mine

    # -- acting -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        state = None if self.conversation is None else self.conversation.state
        if action == "claim":
            return True if state is State.WAITING else None
        if action in ("send_passage", "resolve", "hand_back", "release"):
            return True if self.is_mine else None
        if action == "show_earlier":
            # Hidden, not greyed out, in the footer of the many conversations that show everything.
            return True if self.is_mounted and self.transcript.hidden else False
        return True

    async def _refuse(self, error: HelpdeskError) -> None:
        self.notify(str(error), severity="warning", markup=False)
        await self.reload()

    async def action_claim(self) -> None:
        try:
            result = await self.services.desk.claim(self.conversation_id, agent=self.services.agent)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        if not result.won:
            owner = result.conversation.agent or "someone else"
            self.notify(f"Already claimed by {owner}.", severity="warning", markup=False)
        await self.reload()

    @on(Input.Submitted, "#reply")
    async def _reply(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.notify("Type a reply first.", severity="warning")
            return
        if await self._send(event.value):
            event.input.clear()

    async def _send(self, text: str, passage: Passage | None = None) -> bool:
        try:
            await self.services.desk.reply(
                self.conversation_id, agent=self.services.agent, text=text, passage=passage
            )
        except HelpdeskError as error:
            await self._refuse(error)
            return False
        await self.reload()
        return True

    async def action_send_passage(self) -> None:
        """Pick a knowledge-base passage (the bot's candidates first) and send it as the reply."""
        # Imported on first use, like the editor: not needed to show the first screen.
        from chatbot.tui.screens.passage_picker import PassagePicker, PickerItem

        try:
            latest = await self.services.desk.latest_decision(self.conversation_id)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        scores = {} if latest is None else {
            c.id: c.probability for c in latest.decision.candidates
        }  # fmt: skip
        passages = list(self.services.engine.passages)
        ranked = sorted(passages, key=lambda p: (p.id not in scores, -(scores.get(p.id) or 0.0)))
        items = [PickerItem(passage, scores.get(passage.id)) for passage in ranked]

        async def send(passage: Passage | None) -> None:
            if passage is not None:
                await self._send(passage.text, passage)

        self.app.push_screen(PassagePicker(items), send)

    async def action_resolve(self) -> None:
        try:
            await self.services.desk.resolve(self.conversation_id, agent=self.services.agent)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        await self.reload()

    async def action_hand_back(self) -> None:
        try:
            await self.services.desk.hand_back(self.conversation_id, agent=self.services.agent)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        await self.reload()

    async def action_release(self) -> None:
        try:
            await self.services.desk.release(self.conversation_id, agent=self.services.agent)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        await self.reload()

    async def action_show_earlier(self) -> None:
        first = self.transcript.first_id
        if not self.transcript.hidden or first is None:
            return
        try:
            page = await self.services.desk.page(self.conversation_id, before_id=first, limit=PAGE)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        self.transcript.add_earlier(page)
        self.refresh_bindings()

    def action_close(self) -> None:
        self.post_message(self.Closed(self.conversation_id))

    def palette_commands(self) -> Iterable[PaletteCommand]:
        number = f"#{self.conversation_id}"
        if self.check_action("claim", ()):
            yield PaletteCommand(f"Claim conversation {number}", "Own it: reply as yourself",
                                 self.action_claim)  # fmt: skip
        if self.is_mine:
            yield PaletteCommand(f"Send a passage to {number}", "Reply with a help-center passage",
                                 self.action_send_passage)  # fmt: skip
            yield PaletteCommand(f"Resolve conversation {number}", "Close it",
                                 self.action_resolve)  # fmt: skip
            yield PaletteCommand(f"Hand {number} back to the bot", "The bot answers again",
                                 self.action_hand_back)  # fmt: skip
            yield PaletteCommand(f"Put {number} back in the queue", "Another agent takes it",
                                 self.action_release)  # fmt: skip
        if self.check_action("show_earlier", ()):
            yield PaletteCommand("Show earlier messages", f"{self.transcript.hidden} not shown yet",
                                 self.action_show_earlier)  # fmt: skip
        yield PaletteCommand("Back to the queue", "Close this conversation", self.action_close)
