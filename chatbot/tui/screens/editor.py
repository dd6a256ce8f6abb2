"""The knowledge-base editor: passages, their history, Try it, and content gaps.

Every write goes through the knowledge-base store (files or PostgreSQL: revision-checked, kept in
history). After each one `KnowledgeBaseIndex` rebuilds the BM25 index in a thread and replaces the
app's engine, so the next customer question uses the new content without a restart and without
freezing the UI. Where the knowledge base has a translation folder (`zh/`), F9 edits its passages
instead of the main folder's: a conversation in that language is answered from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import (
    Button,
    Input,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)
from textual.worker import get_current_worker

from chatbot import drafts
from chatbot.desk.aio import unreachable
from chatbot.drafts import UnsavedPassage, save_unsaved_passage, take_unsaved_passage
from chatbot.engine.engine import Engine
from chatbot.engine.live import POLL_S
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, LANGUAGE_NAMES, LOCALES, N_, Locale, translations
from chatbot.knowledge_base.errors import KnowledgeBaseUnreachable
from chatbot.knowledge_base.gaps import Draft, draft_from_gap
from chatbot.knowledge_base.interface import (
    ConflictError,
    DuplicatePassageError,
    KnowledgeBaseStore,
    PassageNotFoundError,
    StoredPassage,
    UnreadableConflictError,
)
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import PassageStore, Version
from chatbot.knowledge_base.translated import translation_stores
from chatbot.text import printable
from chatbot.tui.commands import PaletteCommand
from chatbot.tui.kb_index import KnowledgeBaseIndex
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.editor_home import EditorHomeScreen
from chatbot.tui.screens.modal import Dialog, DialogButton
from chatbot.tui.services import Services
from chatbot.tui.widgets.button_row import ButtonRow
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.gap_list import GapList
from chatbot.tui.widgets.header import Header
from chatbot.tui.widgets.passage_form import PassageForm
from chatbot.tui.widgets.passage_history import PassageHistory, without_path
from chatbot.tui.widgets.passage_list import PassageList
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from chatbot.tui.widgets.try_it import TryItPanel

log = logging.getLogger(__name__)

EDITOR_TITLE = N_("Knowledge base")

# Said in place of the driver's error (the database's address, FATAL and all) while a knowledge
# base on a server cannot be reached, then, once it can be, in place of that (`_check_back`).
KB_AWAY_SAVE = N_(
    "Not saved: the knowledge base cannot be reached. Your changes stay here: press Ctrl+S again "
    "in a moment."
)
KB_BACK_SAVE = N_(
    "The knowledge base can be reached again, but your changes are not saved yet: press Ctrl+S "
    "to save them."
)
KB_AWAY_DONE = N_("Not done: the knowledge base cannot be reached. Try again in a moment.")
KB_BACK_DONE = N_(
    "The knowledge base can be reached again, but that was not done: try it again now."
)

FOCUS_ON_TAB = {
    "passages": "#passage-search",
    "try": "#try-question",
    "gaps": "#gap-table",
    "synonyms": "#synonyms-text",
}


class Confirm(Dialog[bool]):
    """Asks before something is thrown away or overwritten; answers True to go ahead. Cancel has
    the focus, and Enter pressed on it by habit, Escape, or typing cancel: only the yes button
    (Tab to it, then Enter, or a click) goes ahead.

    It opens on keys pressed mid-sentence (Ctrl+S over a version someone saved meanwhile, Ctrl+N,
    F8, F9): its `y` answered yes, and "Replace their version?" took the `y` of "my" and saved
    over the other editor's text, the words typed on lost. A character typed (or a paste) on it
    now cancels and goes on to the field it was typed in, in turn (`Dialog.hand_on_typed`). Not
    the opening key again either: Ctrl+S is the key pressed twice by habit."""

    BINDINGS = [Binding("escape", "answer(False)", N_("Cancel"))]

    def __init__(self, question: str, *, yes: str, locale: Locale = DEFAULT_LOCALE) -> None:
        """`question` and `yes` are already in the reader's language; `locale` is for the rest."""
        super().__init__()
        self.question = question
        self.yes = yes
        self.locale: Locale = locale
        localize_bindings(self, locale)

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(printable(self.question), id="confirm-text", markup=False)
            # Wrapped to the next row in a narrow window, where one row cut Cancel off.
            with ButtonRow():
                yield DialogButton(self.yes, variant="error", id="confirm-yes")
                yield DialogButton(translations(self.locale).gettext("Cancel"), id="confirm-no")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def answer_typing(self) -> bool:
        self.dismiss(False)  # Cancelled: off the stack at once, the words go on to the field.
        return True


class EditorScreen(Screen[None]):
    """Edit passages while the desk runs; reachable from the customer app and the agent console."""

    TITLE = EDITOR_TITLE
    # The search: not the passage shown on opening, whose text took the keys of an editor who
    # opened the editor to search (and Tab, Enter saved them); nor the list, from which Tab went
    # on into the form, where the README's "Tab then Enter opens the first match" is kept
    # whether or not a search is typed: Tab goes to the list, Enter opens its highlighted row.
    AUTO_FOCUS = FOCUS_ON_TAB["passages"]

    BINDINGS = [
        Binding("ctrl+s", "save", N_("Save"), priority=True),
        Binding("ctrl+n", "new", N_("New")),
        Binding("f8", "delete", N_("Delete")),
        # Which language's passages are edited, where the knowledge base has translations (`zh/`):
        # named by the language it switches to, in that language's own words, as the chat's F9.
        Binding(
            "f9",
            "switch_language",
            "Language",
            tooltip=N_("Edit the passages of another language"),
        ),
        Binding("ctrl+f", "search", N_("Search"), show=False),
        # The same key on the other tabs, where it is their way back (New, which took them
        # there, is the passages' only).
        Binding("ctrl+f", "tab('passages')", N_("Passages")),
        Binding("ctrl+t", "tab('try')", N_("Try it")),
        Binding("ctrl+g", "tab('gaps')", N_("Gaps")),
        Binding("ctrl+o", "tab('synonyms')", N_("Synonyms")),
        # Shown only while the form keeps unsaved changes to a passage changed elsewhere.
        Binding("ctrl+r", "reload", N_("Reload")),
        Binding("escape", "close", N_("Back")),
    ]

    def __init__(self, services: Services, *, index: KnowledgeBaseIndex) -> None:
        super().__init__()
        self.services = services
        self.index = index
        self.languages: dict[Locale, KnowledgeBaseStore] = {
            DEFAULT_LOCALE: index.passages,
            **translation_stores(index.passages),
        }
        """The passages of each language the editor offers: the knowledge base's own, and each
        translation folder's (`zh/`: a Chinese conversation is answered from it)."""
        self.edited: Locale = self._first_language()
        """Whose passages the list and the form show, and saves go to (F9 switches)."""
        self.passages: KnowledgeBaseStore = self.languages[self.edited]
        self._translation_stamp: int | None = None
        """The edited translation folder's stamp as last seen (`_poll_translation`)."""
        localize_bindings(self, services.locale, **self._language_key())
        self._known_ids: frozenset[str] = frozenset()
        self._form: PassageForm | None = None
        """The passage form, once composed (by this screen's unmount it is gone from the DOM)."""
        # Held, not queried: `check_action` runs for every key of the footer on each binding
        # change, and a query walks the whole screen (a tenth of the editor tests' CPU).
        self._tabs: TabbedContent | None = None
        self._synonyms_panel: SynonymsPanel | None = None
        self._away: tuple[str, str] | None = None
        """While a write failed because the knowledge base could not be reached: the line said,
        and the one that replaces it once the knowledge base answers again (`_check_back`)."""
        self._back_timer: Timer | None = None

    def gettext(self, message: str) -> str:
        """`message` in the editor's language (`--locale`)."""
        return translations(self.services.locale).gettext(message)

    def confirm(self, question: str, *, yes: str) -> Confirm:
        """A confirmation in the editor's language; `question` and `yes` are translated already."""
        return Confirm(question, yes=yes, locale=self.services.locale)

    def compose(self) -> ComposeResult:
        locale = self.services.locale
        t = translations(locale)
        self.title = self._title()
        yield Header()
        with TabbedContent(id="editor-tabs", initial="passages") as self._tabs:
            with TabPane(t.gettext("Passages"), id="passages"), Horizontal(id="editor-body"):
                yield PassageList(locale=locale, id="passage-list")
                with Vertical(id="editor-main"):
                    self._form = PassageForm(locale=locale, id="passage-form")
                    yield self._form
                    yield PassageHistory(locale=locale, id="passage-history")
            # Built when first shown (`_build_tab`): a fifth of the editor's widgets, and most
            # editors open it for the passages.
            yield TabPane(t.gettext("Try it"), id="try")
            yield TabPane(t.gettext("Content gaps"), id="gaps")
            yield TabPane(t.gettext("Synonyms"), id="synonyms")
        yield Footer()

    async def _build_tab(self, tab: str) -> None:
        """Mount a tab's content the first time the tab is shown, and fill it."""
        pane = self.query_one(f"#{tab}", TabPane)
        if tab == "passages" or pane.children:
            return
        locale = self.services.locale
        if tab == "try":
            await pane.mount(
                TryItPanel(
                    engine=self._engine, timings=self.services.timings, locale=locale, id="try-it"
                )
            )
        elif tab == "gaps":
            await pane.mount(GapList(locale=locale, id="gap-list"))
        else:
            panel = SynonymsPanel(self._searched_passages, locale=locale, id="synonyms-panel")
            await pane.mount(panel)
            self._synonyms_panel = panel
            self.load_synonyms()

    def _engine(self, question: str | None = None) -> Engine:
        """The engine of this moment; for a question, the one the bot would use for it: a
        Chinese question is answered from the Chinese passages, where Try it searched the English
        ones and said no passage shares a word with it."""
        if question is not None:
            from chatbot.i18n import detect_locale

            translated = self.services.translated
            if (live := translated.get(detect_locale(question))) is not None:
                return live.engine
        return self.services.engine

    def _searched_passages(self) -> dict[Locale, Sequence[Passage]]:
        """For each language, the passages its questions are searched in now: its translation's
        engine's, or the configured knowledge base's for a language without one."""
        translated = self.services.translated
        return {
            locale: (
                live.engine.passages
                if (live := translated.get(locale)) is not None
                else self.services.engine.passages
            )
            for locale in LOCALES
        }

    @property
    def form(self) -> PassageForm:
        # The one held since compose (`check_action` reads it too), not a second way to it.
        if self._form is None:
            raise NoMatches("the passage form is not composed yet")
        return self._form

    @property
    def history(self) -> PassageHistory:
        return self.query_one(PassageHistory)

    def on_mount(self) -> None:
        self.services.changed.subscribe(self, self._store_changed)
        # Another process's edits show up in the list once the app has reloaded them.
        self.index.rebuilt.subscribe(self, self._rebuilt)
        if len(self.languages) > 1:
            self._translation_stamp = self.passages.stamp()
            self.set_interval(POLL_S, self._poll_translation)
        self.refresh_list(open_first=True)

    # Languages ----------------------------------------------------------------------------------

    def _first_language(self) -> Locale:
        """The language the editor opens on: the knowledge base's own, unless this editor left
        unsaved changes only to a translation's passage when an app of theirs ended (they are
        put back as the editor opens, as any other language's)."""
        for locale in self.languages:
            if self._latest_unsaved(locale) is not None:
                return locale
        return DEFAULT_LOCALE

    def _next_language(self) -> Locale:
        offered = list(self.languages)
        return offered[(offered.index(self.edited) + 1) % len(offered)]

    @staticmethod
    def language_name(locale: Locale) -> str:
        """A language's passages as the editor names them: in the language's own words, and a
        translation's with its folder ("中文 (zh/)")."""
        name = LANGUAGE_NAMES[locale]
        return name if locale == DEFAULT_LOCALE else f"{name} ({locale}/)"

    def _language_key(self) -> dict[str, str]:
        """F9's label: the language it switches to, in its own words."""
        return {"switch_language": LANGUAGE_NAMES[self._next_language()]}

    def _title(self) -> str:
        """The heading: which language's passages are edited, where there is a choice."""
        if len(self.languages) < 2:
            return self.gettext(EDITOR_TITLE)
        template = self.gettext("Knowledge base: {language}")
        return template.format(language=self.language_name(self.edited))

    def action_switch_language(self, locale: str = "") -> None:
        """Edit another language's passages (the next one, or `locale`), asking first whether to
        throw away unsaved changes in the form, as opening another passage does."""
        if len(self.languages) < 2:
            return
        target = next((each for each in self.languages if each == locale), None)
        target = self._next_language() if target is None else target
        if target == self.edited:
            return
        self._activate("passages")
        self.leave_form(lambda: self.edit_language(target))

    def edit_language(self, locale: Locale) -> None:
        """Show `locale`'s passages: the list, the first passage (or the form this editor left
        unsaved in them), and every save, delete and restore from now on goes there."""
        self.edited = locale
        self.passages = self.languages[locale]
        self._known_ids = frozenset()
        # Nothing of the other language's stays open meanwhile: a save in its form would go to
        # this language's passages, and its history's re-reading would read this language's.
        self.form.open(None, revision=None, focus=False)
        self.history.show(None, [], current=None)
        self._translation_stamp = self.passages.stamp()
        self.title = self._title()
        localize_bindings(self, self.services.locale, **self._language_key())
        self.refresh_list(open_first=True)
        message = self.gettext("Editing the {language} passages.")
        self.notify(message.format(language=self.language_name(locale)), markup=False)

    async def _poll_translation(self) -> None:
        """Another process's change to the translation being edited: the main knowledge base's
        show once the app's index has reloaded them (`_rebuilt`); a translation folder's are
        noticed here, by its stamp, as the engines answering from it notice them."""
        store = self.passages
        if store is self.index.passages:
            return
        stamp = await asyncio.to_thread(store.stamp)
        if store is self.passages and stamp != self._translation_stamp:
            self._translation_stamp = stamp
            self._rebuilt(0)

    def _rebuilt(self, _count: int) -> None:
        self.refresh_list()
        # Another process may have saved, deleted or restored the open passage: its history
        # follows, and so does the form unless it holds unsaved changes (`_follow`).
        self._reload_history()
        # Someone else's save shows, unless it would drop typing.
        if self._synonyms_panel is not None and not self._synonyms_panel.dirty:
            self.load_synonyms()

    # Loading ------------------------------------------------------------------------------------

    @dataclass
    class Scanned(Message):
        """The passage files were read (in a thread): what the list shows."""

        passages: list[Passage]
        deleted: list[Passage | str]
        """Each deleted passage's last readable version, or its id where none can be read."""
        problems: list[str]
        select: str | None
        open_first: bool
        source: KnowledgeBaseStore
        """The store read: a list of another language's, read before a switch, is not shown."""

    def _ids(self) -> list[str]:
        """The ids of the last scan: a new passage may not take them (the store checks again)."""
        return list(self._known_ids)

    def refresh_list(self, select: str | None = None, *, open_first: bool = False) -> None:
        """Re-read the passage files in a thread: at 100,000 passages that takes seconds."""
        self._scan(self.passages, select, open_first)

    @work(thread=True, exclusive=True, group="editor-scan", exit_on_error=False)
    def _scan(self, source: KnowledgeBaseStore, select: str | None, open_first: bool) -> None:
        deleted: list[Passage | str]
        try:
            scan = source.scan()
            stored, problems = scan.passages, scan.problems + scan.skipped
            # What each deleted passage last said: it is found by its title and text, as it was
            # before the delete, not only by an id the editor may not remember.
            deleted = [self._last_said(source, passage_id) for passage_id in source.deleted()]
        except Exception as error:  # noqa: BLE001 - a thread that dies would leave the list stale.
            stored, deleted, problems = [], [], [str(error)]
        passages = [item.passage for item in stored]
        self.post_message(self.Scanned(passages, deleted, problems, select, open_first, source))

    @staticmethod
    def _last_said(source: KnowledgeBaseStore, passage_id: str) -> Passage | str:
        """A deleted passage's last readable version, or its id when there is none."""
        try:
            last = _last_readable(source.history(passage_id))
        except KnowledgeBaseError:
            return passage_id
        return passage_id if last is None else last

    @on(Scanned)
    def _scanned(self, event: Scanned) -> None:
        if event.source is not self.passages:
            return  # Another language's, read before the editor switched from it.
        problems = event.problems
        # Each problem is said once while it lasts, not at every refresh nor at every opening of
        # the editor (a new screen each time, which said them all again); one fixed and broken
        # again, or a file broken another way, is a new problem.
        said, self.index.problems_said = self.index.problems_said, frozenset(problems)
        if new := [problem for problem in problems if problem not in said]:
            # The problems themselves are the knowledge base's (English, as core errors are).
            extra = len(new) - 1
            if extra:
                template = self.gettext(
                    "Not listed: {problem} (and {extra} more; see `helpdesk kb check`)"
                )
            else:
                template = self.gettext("Not listed: {problem}")
            message = template.format(problem=new[0], extra=f"{extra:,}")
            self.notify(message, severity="error", markup=False)
        self._known_ids = frozenset(p.id for p in event.passages)
        first = min(self._known_ids, default=None)
        # What this editor left unsaved when an app of theirs last ended is shown first.
        kept = self._latest_unsaved() if event.open_first else None
        if kept is not None and kept.revision is not None:
            first = kept.passage_id
        select = first if event.open_first else event.select
        self.query_one(PassageList).show(event.passages, deleted=event.deleted, select=select)
        if event.open_first:
            # Shown, not opened for writing: the focus stays where it was (the list).
            if first is None or (kept is not None and kept.revision is None):
                self.open_new(focus=False)
            elif first in self._known_ids:
                self.open_passage(first, focus=False)
            else:  # Deleted since that app ended.
                self.open_deleted(first, focus=False)

    def refresh_gaps(self) -> None:
        self._load_gaps()

    @work(exclusive=True, group="editor-gaps", exit_on_error=False)
    async def _load_gaps(self) -> None:
        try:
            gaps = await self.services.desk.content_gaps(include_handled=False)
        except HelpdeskError as error:
            # An outage is said in the tab, which would otherwise read "No open content gaps.";
            # the feed's change on the database's return reads them again (`_store_changed`).
            if unreachable(error):
                self.query_one(GapList).cannot_read()
            else:
                self.notify(str(error), severity="error", markup=False)
            return
        self.query_one(GapList).show(gaps)  # Read only once the tab is built (`_tab_shown`).

    def _store_changed(self, _version: int) -> None:
        # Read while they are on screen; showing the tab reads them again.
        if self.query_one(TabbedContent).active == "gaps":
            self.refresh_gaps()

    @dataclass
    class HistoryRead(Message):
        """The open passage's history and its stored state (None when deleted), re-read in a
        thread while the form was at opening `generation`."""

        passage_id: str
        versions: list[Version]
        stored: StoredPassage | None
        generation: int

        @property
        def current(self) -> Passage | None:
            """What each version is compared with: nothing when deleted, as on opening."""
            return None if self.stored is None else self.stored.passage

    def _reload_history(self) -> None:
        if self.history.passage_id is not None:
            self._read_history(self.history.passage_id, self.form.generation)

    @work(thread=True, exclusive=True, group="editor-history", exit_on_error=False)
    def _read_history(self, passage_id: str, generation: int) -> None:
        stored: StoredPassage | None
        try:
            versions = self.passages.history(passage_id)
            try:
                stored = self.passages.get(passage_id)
            except PassageNotFoundError:
                stored = None
        except (HelpdeskError, OSError):  # The history shown stays; the next change reads again.
            log.exception("re-reading the history of %s failed", passage_id)
            return
        if not get_current_worker().is_cancelled:  # A newer read is on its way.
            self.post_message(self.HistoryRead(passage_id, versions, stored, generation))

    @on(HistoryRead)
    def _history_read(self, event: HistoryRead) -> None:
        if self.history.passage_id != event.passage_id:  # Another passage opened meanwhile.
            return
        if event.generation != self.form.generation:
            # The form was opened again (a save, a restore) after this read began: what it and
            # the history show was read since, and this older state would undo it.
            return
        self.history.update(event.versions, current=event.current)
        self._follow(event.passage_id, event.stored, event.versions)

    def _follow(
        self, passage_id: str, stored: StoredPassage | None, versions: list[Version]
    ) -> None:
        """The open passage as someone else left it: shown in the form, which says so briefly,
        unless the form holds unsaved changes; those stay, and the form says the passage changed
        meanwhile (Ctrl+R shows the other version), rather than leaving it to a refused save. The
        History panel below already compares each version with the other version."""
        form = self.form
        if form.deleted:
            if stored is not None:  # Restored elsewhere (a deleted passage's form holds nothing).
                form.open(stored.passage, revision=stored.revision, focus=False)
                message = self.gettext("{passage} was restored by someone else.")
                self.notify(message.format(passage=passage_id), markup=False)
            return
        if form.revision is None:
            return
        if stored is not None and stored.revision == form.revision:
            if form.changed_elsewhere:  # Changed back to what the form was opened at.
                form.mark_changed_elsewhere("", revision=None)
                self.refresh_bindings()
            return
        if not form.dirty:
            if stored is None:
                last = _last_readable(versions) or Draft(id=passage_id, title="", text="", tags=())
                form.open(last, revision=None, deleted=True, focus=False)
                message = self.gettext("{passage} was deleted by someone else.")
            else:
                form.open(stored.passage, revision=stored.revision, focus=False)
                message = self.gettext(
                    "{passage} was changed by someone else: the form shows their version."
                )
            self.notify(message.format(passage=passage_id), markup=False)
            self.refresh_bindings()
            return
        now = None if stored is None else stored.revision
        if form.changed_elsewhere and form.elsewhere_revision == now:
            return  # Said already (a refused save may have said it first: that stays).
        if stored is None:
            message = self.gettext(
                "{passage} was deleted by someone else meanwhile: your changes are not saved. "
                "Ctrl+R shows it as deleted, Ctrl+S saves yours as it again (both ask first)."
            )
        else:
            message = self.gettext(
                "{passage} was changed by someone else meanwhile: your changes are not saved. "
                "History compares with their text; Ctrl+R shows it, Ctrl+S saves yours over it "
                "(both ask first)."
            )
        form.mark_changed_elsewhere(message.format(passage=passage_id), revision=now)
        self.notify(form.changed_elsewhere, severity="warning", markup=False)
        self.refresh_bindings()  # Ctrl+R (Reload) is offered.

    def open_passage(self, passage_id: str, *, focus: bool = True, kept: bool = True) -> None:
        """Show a stored passage; with `kept`, with what this editor left unsaved in it when an
        app of theirs ended, if anything (`_put_back`)."""
        try:
            stored = self.passages.get(passage_id)
            versions = self.passages.history(passage_id)
        except KnowledgeBaseError as error:
            self._read_failed(error)
            return
        unsaved = self._take_unsaved(passage_id) if kept else None
        revision = stored.revision if unsaved is None else unsaved.revision
        self.form.open(stored.passage, revision=revision, focus=focus)
        self.history.show(passage_id, versions, current=stored.passage)
        if unsaved is not None:
            self._put_back(unsaved, now=stored.revision)

    def open_deleted(self, passage_id: str, *, focus: bool = True, kept: bool = True) -> None:
        """A deleted passage: what it last said, read-only, and its history, where Restore brings
        it back. Unless this editor left unsaved changes to it when an app of theirs ended (it
        was deleted since): those are shown, as when it is deleted while the form holds them."""
        try:
            versions = self.passages.history(passage_id)
        except KnowledgeBaseError as error:
            self._read_failed(error)
            return
        last = _last_readable(versions) or Draft(id=passage_id, title="", text="", tags=())
        unsaved = self._take_unsaved(passage_id) if kept else None
        if unsaved is None:
            self.form.open(last, revision=None, deleted=True, focus=focus)
        else:
            self.form.open(last, revision=unsaved.revision, focus=focus)
        self.history.show(passage_id, versions, current=None)
        if unsaved is not None:
            self._put_back(unsaved, now=None)

    def open_new(self, *, focus: bool = True) -> None:
        """An empty form, or the new passage this editor left unsaved when an app of theirs
        ended."""
        unsaved = self._take_unsaved(None)
        gap_id = None if unsaved is None else unsaved.gap_id
        self.form.open(None, revision=None, taken=self._ids(), gap_id=gap_id, focus=focus)
        self.history.show(None, [], current=None)
        if unsaved is not None:
            self._put_back(unsaved, now=None)

    # Unsaved work kept when the app ends ---------------------------------------------------------

    @property
    def _editor(self) -> str:
        """Whose unsaved forms these are: in a browser, the signed-in account's (their folder is
        theirs alone, whatever their display name); in a terminal, the agent name if one is set
        (the state directory is the user's anyway)."""
        folder = drafts.editor_drafts
        name = self.services.agent or ""
        return name if folder is None else drafts.draft_owner(folder, name)

    def _drafts_folder(self, locale: Locale | None = None) -> Path | None:
        """Where this editor's unsaved forms of a language's passages (by default the edited
        one's) are kept: a translation's apart, as its passages share their ids with the
        knowledge base's own (a Chinese text put back into the English passage of its id would
        be saved there). None: this app keeps nothing."""
        folder = drafts.editor_drafts
        locale = self.edited if locale is None else locale
        return folder if folder is None or locale == DEFAULT_LOCALE else folder / locale

    def _take_unsaved(self, passage_id: str | None) -> UnsavedPassage | None:
        """What this editor left unsaved in the passage's form (None: a new passage's) when an
        app of theirs ended, once; None if nothing (or this app keeps nothing)."""
        folder = self._drafts_folder()
        if folder is None:
            return None
        try:
            return take_unsaved_passage(folder, editor=self._editor, passage_id=passage_id)
        except OSError:  # An unreadable folder: nothing to put back, as before.
            return None

    def _latest_unsaved(self, locale: Locale | None = None) -> UnsavedPassage | None:
        """The form this editor left unsaved most recently in a language's passages (by default
        the edited one's), left in place for its opening."""
        folder = self._drafts_folder(locale)
        if folder is None:
            return None
        try:
            kept = drafts.unsaved_passages(folder, editor=self._editor)
        except OSError:
            return None
        return kept[0] if kept else None

    def _put_back(self, unsaved: UnsavedPassage, *, now: str | None) -> None:
        """Fill the form, just opened as `unsaved` was, with it, and say so. A passage someone
        else changed (to revision `now`) or deleted since is said too, as when that happens while
        the form is open: the form keeps the revision it was opened at, so Save is refused (the
        store checks it) rather than writing over their version."""
        self.form.put_back(unsaved)
        if unsaved.revision is None:
            message = self.gettext(
                "Your unsaved new passage from your last session was put back: Save saves it."
            )
        elif now == unsaved.revision:
            message = self.gettext(
                "Your unsaved changes to {passage} from your last session were put back: Save "
                "saves them."
            )
        else:
            if now is None:
                changed = self.gettext(
                    "Your unsaved changes to {passage} from your last session were put back, "
                    "but someone else deleted it since: they are not saved. Ctrl+R shows it as "
                    "deleted, Ctrl+S saves yours as it again (both ask first)."
                )
            else:
                changed = self.gettext(
                    "Your unsaved changes to {passage} from your last session were put back, "
                    "but someone else changed it since: they are not saved. History compares "
                    "with their text; Ctrl+R shows it, Ctrl+S saves yours over it (both ask "
                    "first)."
                )
            changed = changed.format(passage=unsaved.passage_id)
            self.form.mark_changed_elsewhere(changed, revision=now)
            self.notify(changed, severity="warning", markup=False)
            self.refresh_bindings()  # Ctrl+R (Reload) is offered.
            return
        self.notify(message.format(passage=unsaved.passage_id), markup=False)

    def on_unmount(self) -> None:
        # The app ends (a page closed, `serve` stopping, a terminal's input gone) with changes in
        # the form the editor did not save nor throw away: they wait for their next opening.
        folder, form = self._drafts_folder(), self._form
        if folder is None or form is None or (unsaved := form.unsaved()) is None:
            return
        with contextlib.suppress(OSError):  # A full disk: the changes are lost, as before.
            save_unsaved_passage(folder, editor=self._editor, form=unsaved)

    def _show_history(self, passage_id: str, *, current: Passage) -> None:
        try:
            versions = self.passages.history(passage_id)
        except KnowledgeBaseError as error:
            message = self.gettext("History not shown: {error}").format(error=error)
            self.notify(message, severity="error", markup=False)
            versions = []
        self.history.show(passage_id, versions, current=current)

    # Leaving and quitting -----------------------------------------------------------------------

    def has_unsaved_work(self) -> bool:
        return self.form.dirty or self.synonyms_dirty

    def confirm_quit(self) -> None:
        """Ctrl+Q with unsaved changes: ask, as leaving the form does."""

        def answered(discard: bool | None) -> None:
            if discard:
                self.form.discarded = True  # Not kept for a next session either.
                self.app.exit()

        if not self.form.dirty:
            question = self.gettext("Quit and discard your unsaved changes to the synonyms?")
        elif self.form.passage_id:
            question = self.gettext("Quit and discard your unsaved changes to {name}?").format(
                name=self.form.passage_id
            )
        else:
            question = self.gettext("Quit and discard your unsaved changes to the new passage?")
        self.app.push_screen(self.confirm(question, yes=self.gettext("Quit")), answered)

    # Events from the widgets --------------------------------------------------------------------

    def leave_form(self, then: Callable[[], object]) -> None:
        """Run `then`, first asking whether to throw away unsaved changes in the form."""
        if not self.form.dirty:
            then()
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.form.discarded = True  # Not kept when the app ends (Escape closes it).
                then()

        if self.form.passage_id:
            question = self.gettext("Discard your unsaved changes to {name}?").format(
                name=self.form.passage_id
            )
        else:
            question = self.gettext("Discard your unsaved changes to the new passage?")
        self.app.push_screen(self.confirm(question, yes=self.gettext("Discard")), answered)

    @on(PassageList.Chosen)
    def _chosen(self, event: PassageList.Chosen) -> None:
        if event.deleted:
            self.leave_form(lambda: self.open_deleted(event.passage_id))
        else:
            self.leave_form(lambda: self.open_passage(event.passage_id))

    @on(PassageForm.NewRequested)
    def _new_requested(self) -> None:
        self.leave_form(self.open_new)

    @on(PassageForm.SaveRequested)
    async def _save_requested(self, event: PassageForm.SaveRequested) -> None:
        if event.based_on != self.form.revision:
            # Asked before the form was opened again: Ctrl+S twice in one burst, the first save
            # reopening the form before the second request arrived. Saved as it was asked, it
            # was refused as "changed by someone else" (or, new, as already existing): the
            # form as it is now is judged instead ("Nothing to save", or the keys typed since).
            self.form.request_save()
            return
        if event.based_on is not None and self.form.changed_elsewhere:
            # Saved against the revision it was opened at, it would only be refused again: the
            # editor's way to keep their work is to save it over the other version, on asking.
            self._ask_to_replace(event)
            return
        await self._save_or_refuse(event)

    def _ask_to_replace(self, event: PassageForm.SaveRequested) -> None:
        """Ask whether the form's passage replaces the version someone else saved meanwhile (or
        comes back, when they deleted it); theirs stays in its history either way."""
        form, passage = self.form, event.passage
        now, generation = form.elsewhere_revision, form.generation

        async def answered(replace: bool | None) -> None:
            # Not if the form was opened again meanwhile (Reload, someone's restore).
            if replace and form.generation == generation:
                replacing = PassageForm.SaveRequested(passage, now, None)
                await self._save_or_refuse(replacing, replacing=True)

        if now is None:
            question = self.gettext(
                "{passage} was deleted by someone else. Save yours as {passage} again?"
            )
            then = self.gettext("The deleted version stays in its history.")
        else:
            question = self.gettext("Replace their version of {passage} with yours?")
            then = self.gettext("Theirs stays in its history: Restore brings it back.")
        question = f"{question.format(passage=repr(passage.id))}\n\n{then}"
        yes = self.gettext("Save") if now is None else self.gettext("Replace")
        self.app.push_screen(self.confirm(question, yes=yes), answered)

    async def _save_or_refuse(
        self, event: PassageForm.SaveRequested, *, replacing: bool = False
    ) -> None:
        try:
            await self.save(event, replacing=replacing)
        except Exception as error:  # noqa: BLE001 - whatever failed, the typed text stays.
            log.exception("saving a passage failed")
            self._refused(
                self.gettext("not saved: unexpected {kind}: {error}").format(
                    kind=type(error).__name__, error=error
                )
            )

    async def save(self, event: PassageForm.SaveRequested, *, replacing: bool = False) -> None:
        """Save the form's passage; `replacing`: over a version someone else saved meanwhile (or
        in place of one they deleted), which the editor agreed to."""
        passage = event.passage
        try:
            if event.based_on is not None:
                stored = self.passages.save(passage, based_on=event.based_on)
            elif event.gap_id is not None:
                # The passage first, then the gap (as `fill_gap` does): were marking to fail, the
                # gap stays listed, which is safer than a gap marked handled with no passage.
                stored = self.passages.add(passage)
                await self.services.desk.mark_gap_handled(event.gap_id, passage_id=passage.id)
                self.refresh_gaps()
            else:
                stored = self.passages.add(passage)
        except UnreadableConflictError as error:
            # Said once, in the form (a toast of the same words covered the form at 80x24).
            self._conflict_found(passage.id, error)
            return
        except ConflictError as error:
            self._refused(str(error))
            if event.based_on is not None:
                self._conflict_found(passage.id, error)
            return
        except KnowledgeBaseError as error:
            self._refused(await self._failure(error, saving=True))
            return
        except HelpdeskError as error:  # The passage is saved; only marking the gap failed.
            message = self.gettext("Saved {passage}, but the gap is still listed: {error}")
            self.notify(message.format(passage=passage.id, error=error),
                        severity="warning", markup=False)  # fmt: skip
            self.refresh_list(select=passage.id)
            self.open_passage(passage.id)
            self.rebuild_index()
            return
        if replacing:
            saved = self.gettext("Saved {passage}; the version it replaced stays in its history.")
        else:
            saved = self.gettext("Saved {passage}.")
        self.notify(saved.format(passage=passage.id), markup=False)
        self.refresh_list(select=passage.id)
        self.form.open(stored.passage, revision=stored.revision)
        self._show_history(passage.id, current=stored.passage)
        self.rebuild_index()

    def _conflict_found(self, passage_id: str, error: ConflictError) -> None:
        """A save found the passage changed elsewhere (before the app noticed, or again since it
        did): the refusal stays said, the typing stays, and the ways on are offered, as when the
        change is noticed first (which then says nothing more about the same change): Ctrl+R
        shows the other version, Ctrl+S saves over it (`_ask_to_replace`)."""
        try:
            now: str | None = self.passages.get(passage_id).revision
        except PassageNotFoundError:
            now = None
        except KnowledgeBaseError as broken:
            if isinstance(error, UnreadableConflictError):
                self._broken_found(passage_id, error, broken)
            return
        if now is None:
            message = self.gettext(
                "{error}: Ctrl+R shows it as it is now, Ctrl+S saves yours as it again (both "
                "ask first)."
            )
        else:
            message = self.gettext(
                "{error}: Ctrl+R shows it as it is now, Ctrl+S saves yours over it (both ask "
                "first)."
            )
        self.form.mark_changed_elsewhere(message.format(error=error), revision=now)
        self.refresh_bindings()

    def _broken_found(
        self, passage_id: str, error: UnreadableConflictError, broken: KnowledgeBaseError
    ) -> None:
        """A save found the passage's file broken by hand since the form was opened: said in at
        most two rows under the form (the file by its name, why cut to fit), where at 80x24 the
        path and the parser's words took six and left the text box one. Ctrl+S replaces the
        file, asking first (`_ask_to_replace`), with `error.revision` as the file is now."""
        why = without_path(str(broken))
        message = self.gettext(
            "{file} is unreadable now ({why}): Ctrl+S saves yours over it."
        ).format(file=f"{passage_id}.json", why=why)
        self.form.mark_changed_elsewhere(message, revision=error.revision, cut=why)
        self.refresh_bindings()

    def _refused(self, message: str) -> None:
        # Kept in the form so the editor's text is not lost; they can copy it before reopening.
        self.form.problem = message
        self.notify(message, severity="error", markup=False)

    async def _failure(
        self, error: KnowledgeBaseError, *, saving: bool, store: KnowledgeBaseStore | None = None
    ) -> str:
        """What to say of a write `store` (the edited passages') did not make: its own words,
        unless it is a server that cannot be reached (its stamp cannot be read), said plainly in
        the editor's language. A folder's errors stay as they are: they name what to mend."""
        store = self.passages if store is None else store
        refusal = ConflictError | PassageNotFoundError | DuplicatePassageError
        if isinstance(store, PassageStore) or isinstance(error, refusal):
            return str(error)
        if await asyncio.to_thread(store.stamp) is not None:
            return str(error)  # It answers: the error is about this write, in its words.
        away, back = (KB_AWAY_SAVE, KB_BACK_SAVE) if saving else (KB_AWAY_DONE, KB_BACK_DONE)
        return self._say_away(away, back)

    def _say_away(self, away: str, back: str) -> str:
        """`away` translated, with `back` to be said once the knowledge base answers again."""
        self._away = (self.gettext(away), self.gettext(back))
        if self._back_timer is None:
            self._back_timer = self.set_interval(POLL_S, self._check_back)
        return self._away[0]

    def _read_failed(self, error: KnowledgeBaseError) -> None:
        """A passage not opened: an unreachable server said plainly (the driver's error named the
        database, FATAL and all), other errors (a broken file, one not found) in their words."""
        if not isinstance(error, KnowledgeBaseUnreachable):
            self.notify(str(error), severity="error", markup=False)
        elif self._away is None:
            self.notify(self._say_away(KB_AWAY_DONE, KB_BACK_DONE), severity="error", markup=False)
        else:  # A failed save's line and its "back" stay: they say more.
            self.notify(self.gettext(KB_AWAY_DONE), severity="error", markup=False)

    @work(group="editor-write-failed", exit_on_error=False)
    async def _write_failed(self, error: KnowledgeBaseError) -> None:
        """A delete or a restore the store did not make, said as `_failure` says it."""
        self._refused(await self._failure(error, saving=False))

    async def _check_back(self) -> None:
        """Once the knowledge base answers again, the line that said it could not be reached
        (unless typing replaced it) says so, as the console's does for the desk; before, it
        stayed until the next save."""
        if self._away is None or await asyncio.to_thread(self.passages.stamp) is None:
            return
        (away, back), self._away = self._away, None
        if self._back_timer is not None:
            self._back_timer.stop()
            self._back_timer = None
        if self._form is not None and self._form.problem == away:
            self._form.problem = back
        if self._synonyms_panel is not None:
            shown = self._synonyms_panel.query_one("#synonyms-problem", Static)
            if str(shown.render()) == away:
                self._synonyms_panel.refuse(back)
        self.notify(back, markup=False)

    @on(PassageForm.DeleteRequested)
    def _delete_requested(self, event: PassageForm.DeleteRequested) -> None:
        def confirmed(answer: bool | None) -> None:
            if not answer:
                return
            try:
                version = self.passages.delete(event.passage_id, based_on=event.based_on)
            except KnowledgeBaseError as error:
                self._write_failed(error)
                return
            message = self.gettext(
                "Deleted {passage} (kept as version {version}; restore it from its history)."
            ).format(passage=event.passage_id, version=version.number)
            self.notify(message, markup=False)
            self.refresh_list(select=event.passage_id)
            self.open_deleted(event.passage_id)
            self.rebuild_index()

        question = "\n\n".join((
            self.gettext("Delete passage {passage}?").format(passage=repr(event.passage_id)),
            self.gettext(
                "The bot stops answering from it at once. You can restore it from its history."
            ),
        ))  # fmt: skip
        self.app.push_screen(self.confirm(question, yes=self.gettext("Delete")), confirmed)

    @on(PassageHistory.RestoreRequested)
    def _restore_requested(self, event: PassageHistory.RestoreRequested) -> None:
        """Always ask: a restore replaces the current text (kept in history, but still a change
        the bot answers from at once). Unsaved edits are named in the same question."""

        def answered(restore: bool | None) -> None:
            if restore:
                self.restore(event.passage_id, event.version)

        question = self.gettext("Restore version {version} of {passage}?").format(
            version=event.version, passage=event.passage_id
        )
        if self.form.deleted:  # There is no current text: the passage comes back.
            then = self.gettext(
                "The passage comes back with that version's text, and the bot answers from it "
                "at once."
            )
        elif not self.form.dirty:
            then = self.gettext("The current text is kept in its history.")
        elif self.form.passage_id:
            then = self.gettext("Your unsaved changes to {name} will be discarded.").format(
                name=self.form.passage_id
            )
        else:
            then = self.gettext("Your unsaved changes to the new passage will be discarded.")
        question += f"\n\n{then}"
        self.app.push_screen(self.confirm(question, yes=self.gettext("Restore")), answered)

    def restore(self, passage_id: str, version: int) -> None:
        based_on = self.form.revision if self.form.passage_id == passage_id else None
        try:
            self.passages.restore(passage_id, version=version, based_on=based_on)
        except KnowledgeBaseError as error:
            self._write_failed(error)
            return
        message = self.gettext("Restored version {version} of {passage}.")
        self.notify(message.format(version=version, passage=passage_id), markup=False)
        self.refresh_list(select=passage_id)
        self.open_passage(passage_id, kept=False)
        self.rebuild_index()

    @on(GapList.WritePassage)
    def _write_from_gap(self, event: GapList.WritePassage) -> None:
        def write() -> None:
            draft = draft_from_gap(event.gap, taken=set(self._ids()))
            self._activate("passages")
            self.form.open(draft, revision=None, taken=self._ids(), gap_id=event.gap.id)
            self.history.show(None, [], current=None)

        self.leave_form(write)

    def rebuild_index(self) -> None:
        """Rebuild the engine that answers from the passages edited, at once (each engine also
        notices the change within a second): the app's own, or its translation's (`zh/`)."""
        if self.passages is self.index.passages:
            self.index.rebuild()
            return
        translated = self.services.translated
        if (live := translated.get(self.edited)) is not None:
            self.app.run_worker(
                live.rebuild(), group=f"knowledge-base-index-{self.edited}", name="rebuild an index"
            )

    # Synonyms -----------------------------------------------------------------------------------

    @property
    def synonyms(self) -> SynonymsPanel:
        if self._synonyms_panel is None:  # Built when the tab is first shown.
            raise NoMatches("the synonyms tab has not been shown yet")
        return self._synonyms_panel

    @property
    def synonyms_dirty(self) -> bool:
        """Typed synonyms not saved yet (none before the tab was first shown)."""
        return self._synonyms_panel is not None and self._synonyms_panel.dirty

    def load_synonyms(self) -> None:
        """Show the synonyms as stored; a broken file is said under the box (saving replaces
        it with what is typed)."""
        revision = None
        try:
            # The knowledge base's own, whichever language's passages are edited: its groups
            # apply to the questions of every language.
            revision = self.index.passages.synonyms_revision()
            groups = self.index.passages.synonyms()
        except KnowledgeBaseError as error:
            # Saved against the broken file's revision, so Save replaces it as promised (without
            # one, the save read as a conflict: "changed by someone else").
            self.synonyms.revision = revision
            self.synonyms.refuse(
                self.gettext("{error} (saving replaces the file)").format(error=error)
            )
            return
        self.synonyms.load(groups, revision=revision)
        self.refresh_bindings()

    @on(SynonymsPanel.SaveRequested)
    async def _save_synonyms(self, event: SynonymsPanel.SaveRequested) -> None:
        if event.based_on != self.synonyms.revision:
            # Asked before the last save reloaded them (Ctrl+S twice in a burst): as the
            # passages' (`_save_requested`), judged as they are now, not refused as changed by
            # someone else.
            self.synonyms.request_save()
            return
        try:
            revision = self.index.passages.save_synonyms(event.groups, based_on=event.based_on)
        except KnowledgeBaseError as error:
            message = await self._failure(error, saving=True, store=self.index.passages)
            self.synonyms.refuse(message)
            self.notify(message, severity="error", markup=False)
            return
        self.synonyms.load(event.groups, revision=revision)
        count = len(event.groups)
        message = translations(self.services.locale).ngettext(
            "Saved {count} synonym group.", "Saved {count} synonym groups.", count
        )
        self.notify(message.format(count=count), markup=False)
        self.index.rebuild()  # A translation's engine reads them too, and notices the change.

    # Actions ------------------------------------------------------------------------------------

    def _activate(self, tab: str) -> None:
        """Show a tab whose content is built (the passages' always is)."""
        tabs = self.query_one(TabbedContent)
        if tabs.active == tab:
            return
        tabs.active = tab
        # TabbedContent follows the focus: were it left on a widget of the old tab, the focus
        # would move to a sibling there and switch the tab straight back. Moved at once: left
        # to the next idle, `_tab_shown` found it still on the old tab and sent it to the search
        # after the gap's draft had put it in its text (the draft opened after Discard).
        self.set_focus(self.query_one(FOCUS_ON_TAB[tab]))

    @on(TabbedContent.TabActivated)
    async def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        # A click on a tab shows it before anything is built there.
        tab = event.pane.id or ""
        await self._build_tab(tab)
        focused = self.focused
        if focused is None or not (focused is event.pane or event.pane in focused.ancestors):
            # Where typing goes on that tab (the synonyms' box, the question), not a widget of
            # another tab; but not away from the tab strip, whose arrow keys go through the tabs.
            if not isinstance(focused, Tabs):
                self.query_one(FOCUS_ON_TAB[tab]).focus()
        if tab == "gaps":
            self.refresh_gaps()
        self.refresh_bindings()  # Ctrl+S saves the synonyms on their tab, the passage elsewhere.

    @on(TextArea.Changed, "#synonyms-text")
    def _synonyms_typed(self) -> None:
        self.refresh_bindings()  # A bad line greys Save; fixing it brings Save back.

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None greys a key in the footer, as its button is greyed: a key that looks ready but
        # does nothing also says nothing. False leaves out a key of another tab: Save, New and
        # Delete on Try it pushed Back out of an 80-column footer, and read as acting there.
        active = self._active_tab()
        form = self._form
        if action == "save":
            # Try it and the gaps have nothing to save: Ctrl+S there saved the passage form
            # behind them, out of sight.
            if active not in ("passages", "synonyms"):
                return False
            if active == "passages" and form is not None and form.deleted:
                # Nothing to save until Restore brings it back, as the note under the form says:
                # greyed, the key (and F8's) still read as offered, and did nothing.
                return False
            return True if self._can_save() else None
        if action in ("new", "search"):
            return active == "passages"
        if action == "switch_language":
            # Only where the knowledge base has translations (a folder with `zh/`; never on
            # PostgreSQL); the passages' key, as New is (the palette offers it everywhere).
            return active == "passages" and len(self.languages) > 1
        if action == "tab":
            return parameters != (active,)  # The tab shown: its own key does nothing.
        if action == "close":
            return self._back_offered()
        if action == "reload":
            # Hidden unless the form keeps unsaved changes to a passage changed elsewhere.
            return active == "passages" and form is not None and bool(form.changed_elsewhere)
        if action == "delete":
            # Only the passage on screen, and only one that is there to delete: F8 on Try it
            # asked to delete the passage last opened, and a deleted one offered it again. One
            # changed elsewhere is refused (Reload first), and its Reload needs the room.
            if active != "passages" or (form is not None and form.changed_elsewhere):
                return False
            if form is not None and form.deleted:
                return False  # Left out, as Ctrl+S is (above).
            return None if form is not None and form.is_new else True
        return True

    def _back_offered(self) -> bool:
        """Whether Escape (Back) closes the editor: not where the editor is all the session
        offers (the browser's editor account, `helpdesk editor`). There it left the screen
        behind it, which only says that the editor is closed, and one stray Escape or click on
        `esc Back` took an editor there. (A dialog's Escape is the dialog's, and still cancels.)"""
        return not any(isinstance(screen, EditorHomeScreen) for screen in self.app.screen_stack)

    def _can_save(self) -> bool:
        """Whether Ctrl+S would save: the Save button of what it saves is enabled."""
        if self._active_tab() == "synonyms":
            panel = self._synonyms_panel
            return panel is None or not panel.problems
        return self._form is None or self._form.savable

    def _active_tab(self) -> str:
        """The tab shown ("passages" before the tabs are mounted)."""
        tabs = self._tabs
        return tabs.active if tabs is not None and tabs.is_attached else "passages"

    def action_save(self) -> None:
        # Ctrl+S is the app's key (priority): it runs as it arrives, while the keys typed just
        # before it, handed to the focused box, may still wait there. Read then, the box missed
        # them: a burst (the browser, `tmux send-keys`) saved `bike = bicycle, c`, or nothing.
        after_keys_so_far(self.focused, self._save_now)

    def _save_now(self) -> None:
        if not self.is_attached:  # The editor closed while the keys were handled.
            return
        if self.query_one(TabbedContent).active == "synonyms":
            self.synonyms.request_save()
            return
        self._activate("passages")
        self.form.request_save()

    def action_new(self) -> None:
        self._activate("passages")
        self.leave_form(self.open_new)

    def action_delete(self) -> None:
        self._activate("passages")
        self.form.request_delete()

    def action_restore(self) -> None:
        self._activate("passages")
        self.history.request_restore()

    def action_reload(self) -> None:
        """Show the open passage as it is stored now, asking before unsaved changes go."""
        passage_id = self.history.passage_id
        if passage_id is not None:
            self._activate("passages")
            self.leave_form(lambda: self._reopen(passage_id))

    def _reopen(self, passage_id: str) -> None:
        try:
            exists = self.passages.exists(passage_id)
        except KnowledgeBaseError as error:
            self._read_failed(error)
            return
        # Shown as stored, what Reload promises (not as an earlier session left it).
        if exists:
            self.open_passage(passage_id, kept=False)
        else:
            self.open_deleted(passage_id, kept=False)
        self.refresh_bindings()

    def action_search(self) -> None:
        self._activate("passages")
        self.query_one("#passage-search", Input).focus()

    async def action_tab(self, tab: str) -> None:
        await self._build_tab(tab)
        self._activate(tab)

    def action_close(self) -> None:
        if not self.synonyms_dirty:
            self.leave_form(lambda: self.dismiss(None))
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.leave_form(lambda: self.dismiss(None))

        question = self.gettext("Discard your unsaved changes to the synonyms?")
        self.app.push_screen(self.confirm(question, yes=self.gettext("Discard")), answered)

    def palette_commands(self) -> Iterable[PaletteCommand]:
        t = translations(self.services.locale)
        yield PaletteCommand(
            t.gettext("Knowledge base: save passage"),
            t.gettext("Save the open passage"),
            self.action_save,
        )
        yield PaletteCommand(
            t.gettext("Knowledge base: new passage"),
            t.gettext("Start an empty passage"),
            self.action_new,
        )
        yield PaletteCommand(
            t.gettext("Knowledge base: delete passage"),
            t.gettext("Delete the open passage"),
            self.action_delete,
        )
        yield PaletteCommand(
            t.gettext("Knowledge base: restore version"),
            t.gettext("Restore the version highlighted under History (asks first)"),
            self.action_restore,
        )
        yield PaletteCommand(
            t.gettext("Knowledge base: reload passage"),
            t.gettext("Show the open passage as stored now (asks before dropping your changes)"),
            self.action_reload,
        )
        for locale in self.languages:
            if locale != self.edited:
                yield PaletteCommand(
                    t.gettext("Knowledge base: {language} passages").format(
                        language=self.language_name(locale)
                    ),
                    t.gettext("Edit that language's passages (asks before dropping your changes)"),
                    lambda locale=locale: self.action_switch_language(locale),  # type: ignore[misc]
                )
        yield PaletteCommand(
            t.gettext("Knowledge base: try a question"),
            t.gettext("See what the bot would do with a question"),
            lambda: self.action_tab("try"),
        )
        yield PaletteCommand(
            t.gettext("Knowledge base: content gaps"),
            t.gettext("Questions the bot escalated, to write passages from"),
            lambda: self.action_tab("gaps"),
        )
        yield PaletteCommand(
            t.gettext("Knowledge base: synonyms"),
            t.gettext("Words customers use for the same thing, one group a line"),
            lambda: self.action_tab("synonyms"),
        )


def after_keys_so_far(widget: Widget | None, then: Callable[[], object]) -> None:
    """Run `then` once `widget` (the one focused) has handled every message already sent to it,
    and each of its containers every message already sent to them, in turn: the keys typed
    before a key the app runs itself (a priority binding) are in the box by then, and a key the
    box passed on (typed on a button, taken by the form for its text) is where it went. Without
    a widget, at once."""
    chain = [] if widget is None else [
        node for node in widget.ancestors_with_self if isinstance(node, Widget)
    ]  # fmt: skip

    def step(index: int) -> None:
        # A widget gone meanwhile handles nothing more: the next one is waited for.
        while index < len(chain):
            if chain[index].call_later(step, index + 1):
                return
            index += 1
        then()

    step(0)


def _last_readable(versions: list[Version]) -> Passage | None:
    """The newest version that is a valid passage: what a deleted passage last said."""
    for version in reversed(versions):
        try:
            return version.passage()
        except KnowledgeBaseError:
            continue
    return None
