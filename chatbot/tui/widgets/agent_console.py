"""The agent's side: the handoff queue, and one conversation opened from it in its place; the team's
claims and a search over every conversation, each a key away."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import Static

from chatbot import drafts
from chatbot.desk.aio import unreachable
from chatbot.desk.models import State
from chatbot.desk.service import PRESENCE_EVERY_S
from chatbot.errors import HelpdeskError
from chatbot.i18n import N_, translations
from chatbot.text import printable
from chatbot.tui.agent_name import named
from chatbot.tui.commands import PaletteCommand
from chatbot.tui.localize import localize_bindings
from chatbot.tui.services import Services
from chatbot.tui.slow import if_longer
from chatbot.tui.state_words import state_word
from chatbot.tui.widgets.chat_log import EDITING_KEYS
from chatbot.tui.widgets.plain_input import joined_lines
from chatbot.tui.widgets.queue_list import DESK_TROUBLE, DeskTrouble, QueueList, desk_error

# The conversation view (its transcript brings rich.pretty and attrs) is imported when the first
# conversation opens, not before the first screen; its messages are handled by name below.
if TYPE_CHECKING:
    from chatbot.tui.app import HelpDeskApp
    from chatbot.tui.screens.find import FindScreen
    from chatbot.tui.widgets.conversation_view import ConversationView

PALETTE_ROWS = 50
"""Queue rows offered in the command palette: the longest waits, not ten thousand entries."""
OPENS_WHEN_BACK = N_("Conversation {number} will open once it is back.")
"""Said after `DESK_TROUBLE`, on the console's line, for a conversation chosen while the
database could not be reached (Enter did nothing and said nothing, and it never opened)."""
TAKEN_FIRST = N_("{owner} claimed conversation {number} first; nobody else is waiting.")
"""F6 lost the race for the conversation the queue showed waiting longest: who took it, as
Ctrl+L's "Ana claimed it first." says (it said "Nobody is waiting.", which the agent had just
seen was not so)."""
TAKEN_FIRST_READS = 3
"""The queue's longest waits read again to find who took one, after F6 found none left."""
NEXT_WAITING = N_("Taking the next conversation: waiting for the desk's database…")
"""Said above the queue (or the conversation) while F6's claim waits on the desk longer than
`NEXT_WAITING_SAID_S`: in a lock, F6 said nothing, then nothing again when it failed."""
NEXT_WAITING_SAID_S = 1.5
"""How long F6's claim waits on the desk before the console says so (as a conversation's moves)."""
NEXT_NOT_DONE = N_(
    "No conversation was taken: the desk's database did not answer. Press F6 again in a moment."
)
"""Said in its place when F6's claim failed on the database: the console's own line goes as soon
as its reads work, which they may while claims cannot (a lock on the conversations)."""


class ConsoleLine(Static):
    """One line above the queue and the conversation, hidden until it has something to say."""

    DEFAULT_CSS = """
    ConsoleLine {
        display: none;
        height: auto;
        padding: 0 1;
        text-style: bold;
    }
    """


class TroubleLine(ConsoleLine):
    """Shown while the database cannot be reached: gone once a read works again."""

    DEFAULT_CSS = """
    TroubleLine {
        background: $error 20%;
        color: $text-error;
    }
    """


class NextLine(ConsoleLine):
    """About the F6 in progress or just failed (`NEXT_WAITING`, `NEXT_NOT_DONE`): gone with the
    next F6, or once a conversation opens."""

    DEFAULT_CSS = """
    NextLine {
        background: $warning 20%;
        color: $text-warning;
    }
    """


class AgentConsole(Vertical):
    """Queue first; opening a conversation shows it here, Escape returns to the queue."""

    BINDINGS = [
        Binding("ctrl+f", "find", N_("Find"), tooltip=N_("Find a conversation, resolved ones too")),
        Binding("f4", "team", N_("Team"), tooltip=N_("Every agent's claims")),
        Binding(
            "f6", "take_next", N_("Next"), tooltip=N_("Claim the longest-waiting conversation")
        ),
    ]

    def __init__(self, services: Services, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.services = services
        localize_bindings(self, services.locale)
        self._typed_search: FindScreen | None = None  # The search the last letters opened.
        self._open_when_back: int | None = None
        """The conversation chosen while the database could not be reached: opened once it
        is back (unless another was opened meanwhile)."""
        self._next_said: str | None = None
        """What the line about F6 says (`NextLine`), if anything."""

    def compose(self) -> ComposeResult:
        t = translations(self.services.locale)
        yield TroubleLine(Text(t.gettext(DESK_TROUBLE)), id="desk-trouble")  # See `_say_trouble`.
        yield NextLine(id="next-line")
        yield QueueList(self.services, id="queue")

    def on_mount(self) -> None:
        # Presence, not the session: closing the tab (or a dead terminal) ends the ticks, and a
        # reload starts them again well within the grace, where releasing claims as a session
        # ends would release them on every reload.
        self.presence_tick()
        self.set_interval(PRESENCE_EVERY_S, self.presence_tick)

    @work(exclusive=True, group="presence")
    async def presence_tick(self) -> None:
        """Say this console's agent is here, and put back in the queue the claims of agents gone
        longer than the grace: every open console does, so it happens with no bot running (two
        racing release each claim once). The queue hears of a release as of any write."""
        desk = self.services.desk
        agent = self.services.agent
        try:
            if agent is not None:
                await desk.agent_seen(agent)
            await desk.release_away_claims(here=agent)
        except HelpdeskError:
            return  # The queue's own reads say when the database cannot be reached.

    def on_desk_trouble(self, event: DeskTrouble) -> None:
        event.stop()
        line = self.query_one(TroubleLine)
        self._say_trouble()
        if line.display == event.trouble:
            return
        line.display = event.trouble
        if not event.trouble:
            # Back: what changed while reads failed is read now (a change notice read then was
            # lost with its read).
            self.run_worker(self._caught_up(), group="desk-back", exclusive=True)

    def _say_trouble(self) -> None:
        """The console's line: the outage, and the conversation that opens once it is over."""
        t = translations(self.services.locale)
        said = t.gettext(DESK_TROUBLE)
        if (waiting := self._open_when_back) is not None:
            said += " " + t.gettext(OPENS_WHEN_BACK).format(number=f"#{waiting}")
        self.query_one(TroubleLine).update(Text(said))

    async def _caught_up(self) -> None:
        await self.queue.caught_up()
        if (view := self.open_view) is not None:
            await view.reload()
        elif (chosen := self._open_when_back) is not None:
            await self._open(chosen)

    @property
    def open_view(self) -> ConversationView | None:
        """The conversation shown, if one is (the view stays mounted, hidden, once closed)."""
        views = self.query("ConversationView")
        view = cast("ConversationView | None", views.first() if views else None)
        return None if view is None or view.closed else view

    @property
    def queue(self) -> QueueList:
        return self.query_one(QueueList)

    async def open_conversation(self, conversation_id: int) -> ConversationView:
        """Show one conversation by id (also the way in for benchmarks and tests)."""
        from chatbot.tui.widgets.conversation_view import ConversationView

        await self.services.desk.conversation(conversation_id)  # Unknown ids fail here.
        self._open_when_back = None  # Another one chosen since, or this one: it is open.
        self._say_next(None)
        self.queue.display = False
        views = self.query(ConversationView)
        if views:
            view = views.first()
            view.display = True
            await view.show(conversation_id)
        else:
            view = ConversationView(
                self.services, conversation_id, id="conversation", drafts=drafts.agent_drafts
            )
            await self.mount(view)
        await view.loaded.wait()
        return view

    async def close_conversation(self) -> None:
        if (current := self.open_view) is not None:
            current.close()
            current.display = False
        queue = self.queue
        queue.display = True
        queue.take_focus()
        # Only what changed meanwhile (the queue was kept all along), in a worker: awaited here,
        # the console took no key until the desk answered, the whole deadline in an outage.
        self.run_worker(self._update_queue(), group="queue-update")

    async def _update_queue(self) -> None:
        try:
            await self.queue.update()
        except NoMatches:
            if self.display and self.is_attached:
                raise
            # Taken down while the desk answered (the app closing): its parts are gone.

    async def _open(self, conversation_id: int | None) -> None:
        if conversation_id is None:
            return
        try:
            await self.open_conversation(conversation_id)
        except HelpdeskError as error:
            if unreachable(error):
                # Said on the console's line, once however often Enter is pressed, and opened
                # once the database is back.
                self._open_when_back = conversation_id
            desk_error(self, error)

    @on(QueueList.Opened)
    async def _opened(self, event: QueueList.Opened) -> None:
        # What is typed after the Enter that chose it is meant for this conversation, however
        # long it takes to open: the queue keeps what reached it, the app what comes from now
        # on. The focus goes into the view as it is shown, before it has read its conversation:
        # a browser sends each key on its own, and Ctrl+L 150 ms after Enter was refused there.
        app = cast("HelpDeskApp", self.app)
        app.hold_input()
        try:
            await self._open(event.conversation_id)
        finally:  # However the opening ended: a queue or an app left holding keys hears no more.
            view = self.open_view
            opened = view is not None and view.conversation_id == event.conversation_id
            # Typed again in the conversation, in order (Ctrl+L claims it, words go to its reply
            # box); nowhere if it did not open.
            app.release_input(self.queue.table.release(), deliver=opened)

    async def on_conversation_view_closed(self, event: ConversationView.Closed) -> None:
        await self.close_conversation()

    async def on_conversation_view_console_action(
        self, event: ConversationView.ConsoleAction
    ) -> None:
        view = self.open_view
        if event.action == "find":
            # Typed after Ctrl+F, in the same burst: the search's words.
            self.action_find("" if view is None else view.reply_input.take_held_text())
        elif event.action == "team":
            self.action_team()
            if view is not None:  # Typed after F4: back in the box, its Enters dropped.
                await view.reply_input.release(made=False)
        elif event.action == "take_next":
            opened = False
            try:
                opened = await self.action_take_next()
            finally:
                # What was typed after F6 was held by the box it opens in: typed there now,
                # in order; not opened (nobody waiting), its Enters are dropped and the words
                # stay, so nothing meant for the next customer reaches this one.
                if view is not None:
                    await view.reply_input.release(made=opened)

    def on_conversation_view_read(self, event: ConversationView.Read) -> None:
        self.queue.mark_read(event.conversation_id, event.entry_id)

    async def action_take_next(self) -> bool:
        """Claim the conversation that has waited longest and open it, the reply box ready: an
        agent working the queue in order need not pick. Asks for the agent's name first, as a
        first claim does. Whether one was opened."""
        if not named(self, self.services, self.action_take_next):
            return False
        agent = self.services.agent
        assert agent is not None
        # As the queue showed them when the key was pressed: the ones a colleague may take first.
        shown = [item.conversation_id for item in self.queue.items if item.state is State.WAITING]
        self._say_next(None)
        try:
            with if_longer(NEXT_WAITING_SAID_S, self._say_next, NEXT_WAITING):
                result = await self.services.desk.take_next(agent=agent)
        except HelpdeskError as error:
            # Said where the agent looks, and for as long as it is true: the console's line goes
            # once a read works, which it may while a claim cannot.
            self._say_next(NEXT_NOT_DONE if unreachable(error) else None)
            desk_error(self, error)
            return False
        finally:
            if self._next_said == NEXT_WAITING:
                self._say_next(None)
        if result is None:
            self.notify(await self._none_left(shown[:TAKEN_FIRST_READS], agent), markup=False)
            return False
        view = await self.open_conversation(result.conversation.id)
        view.reply_input.focus()
        return True

    def _say_next(self, message: str | None) -> None:
        """Say `message` (a message id) on the line about F6, or nothing (None)."""
        self._next_said = message
        if not self.is_attached:
            return
        line = self.query_one(NextLine)
        if message is not None:
            line.update(Text(translations(self.services.locale).gettext(message)))
        line.display = message is not None

    async def _none_left(self, shown: list[int], agent: str) -> str:
        """Why F6 found nobody to take: a colleague took first what the queue showed waiting
        (named), or nobody was waiting."""
        t = translations(self.services.locale)
        for conversation_id in shown:
            try:
                conversation = await self.services.desk.conversation(conversation_id)
            except HelpdeskError:
                break  # Said plainly, as before: the queue's next read tells of the database.
            owner = conversation.agent
            if conversation.state is State.CLAIMED and owner is not None and owner != agent:
                return t.gettext(TAKEN_FIRST).format(
                    owner=printable(owner), number=f"#{conversation_id}"
                )
        return t.gettext("Nobody is waiting.")

    def action_find(self, text: str = "") -> None:
        from chatbot.tui.screens.find import FindScreen

        screen = FindScreen(self.services, text=text)
        self._typed_search = screen if text else None
        self.app.push_screen(screen, self._open)

    def action_team(self) -> None:
        from chatbot.tui.screens.team import TeamScreen

        self.app.push_screen(TeamScreen(self.services), self._open)

    async def on_key(self, event: events.Key) -> None:
        # Letters typed on the queue start a search with them: typing always reaches a text box.
        # A printable key reaches the console only from a part of it that takes no text (a text
        # box keeps the keys it takes, the conversation view sends its own to the reply box).
        # The first letter of a quick burst opens the search before the others arrive: they go
        # into the same search, spaces too (`gift cards`). A space starts no search. Nor does a
        # key that edits text (`EDITING_KEYS`): it acts on the search's words in turn with the
        # letters, and before any letter it has nothing to edit. Left to its binding, it ran in
        # the search box the letters typed after it had opened: Ctrl+U `helmet` searched `elmet`.
        search = self._typed_search
        searching = search is not None and self.app.screen is search
        if event.key in EDITING_KEYS:
            event.stop()
            event.prevent_default()
            if search is not None and searching:
                await search.edit_typed(event.key)
            return
        if not (event.is_printable and event.character) or (
            event.character.isspace() and not searching
        ):
            return
        event.stop()
        event.prevent_default()
        if search is not None and searching:
            search.add_typed(event.character)
        else:
            self.action_find(event.character)

    def on_paste(self, event: events.Paste) -> None:
        # Pasted on the queue: a search for it, as letters typed there start one. (A text box
        # keeps its own pastes; the conversation view sends its own to the reply box.)
        event.stop()
        if text := joined_lines(event.text).strip():
            self.action_find(text)

    def palette_commands(self) -> list[PaletteCommand]:
        t = translations(self.services.locale)
        commands = [
            PaletteCommand(
                t.gettext("Find a conversation"),
                t.gettext("Search what was said, reopen resolved ones"),
                self.action_find,
            ),  # fmt: skip
            PaletteCommand(
                t.gettext("Take the next conversation"),
                t.gettext("Claim the one that has waited longest and open it"),
                self.action_take_next,
            ),  # fmt: skip
            PaletteCommand(
                t.gettext("Team: every agent's claims"),
                t.gettext("Who has which conversation"),
                self.action_team,
            ),  # fmt: skip
        ]
        no_reason = t.gettext("no reason")
        for item in self.queue.items[:PALETTE_ROWS]:  # As last read: the palette opens at once.
            number = item.conversation_id
            # The state in the agent's words, as the header and Find say it; the reason a code.
            reason = item.reason.value if item.reason else no_reason
            state = state_word(item.state, locale=self.services.locale)
            commands.append(
                PaletteCommand(
                    t.gettext("Open conversation #{number}").format(number=number),
                    t.gettext("{state}, {reason}").format(state=state, reason=reason),
                    lambda number=number: self._open(number),  # type: ignore[misc]
                )
            )
        return commands
