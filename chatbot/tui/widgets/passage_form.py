"""The passage form: id, title, tags and text, validated as the editor types."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import ValidationError
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, Input, Label, Static, TextArea

from chatbot.drafts import UnsavedPassage
from chatbot.i18n import DEFAULT_LOCALE, Locale, translations
from chatbot.knowledge_base.gaps import Draft
from chatbot.knowledge_base.models import MAX_TEXT_CHARS, Passage
from chatbot.knowledge_base.storage import describe_validation_error
from chatbot.text import printable
from chatbot.tui.widgets.plain_input import PlainInput
from chatbot.tui.widgets.plain_text_area import PlainTextArea


def split_tags(value: str) -> tuple[str, ...]:
    """Comma-separated tags, trimmed, empty ones and repeats dropped, order kept (`check_form`
    refuses an empty one first)."""
    seen: dict[str, None] = {}
    for tag in value.split(","):
        if tag.strip():
            seen.setdefault(tag.strip(), None)
    return tuple(seen)


def check_form(
    *,
    passage_id: str,
    title: str,
    tags: str,
    text: str,
    taken: Iterable[str] = (),
    locale: Locale = DEFAULT_LOCALE,
) -> Passage | str:
    """The passage the form describes, or the first problem with it as one line. `taken` is the
    ids a new passage may not use. The model's own messages stay in English (core errors)."""
    if passage_id in set(taken):
        return (
            translations(locale)
            .gettext("passage {passage} already exists")
            .format(passage=repr(passage_id))
        )
    try:
        passage = Passage(id=passage_id, title=title, tags=split_tags(tags), text=text)
    except ValidationError as error:
        if error.errors()[0]["loc"] == ("id",):  # The message already names the id.
            return str(error.errors()[0]["msg"]).removeprefix("Value error, ")
        return describe_validation_error(error)
    if tags.strip() and any(not tag.strip() for tag in tags.split(",")):
        # Said, as `helpdesk kb` refuses `--tag ""`: dropped silently, `rides, , night` saved
        # as two tags where the editor may have meant to type a third.
        return translations(locale).gettext(
            "a tag is empty: remove the extra comma, or type the tag"
        )
    return passage


def _as_saved(values: tuple[str, ...]) -> tuple[object, ...]:
    """The form's id, title, tags and text as a save would take them (`current`)."""
    passage_id, title, tags, text = values
    return (passage_id.strip(), title.strip(), split_tags(tags), text.strip())


MESSAGE_ROWS = 2
"""The rows a message with a part that can be cut takes at most (`MessageLine`)."""


def fit_rows(message: str, cut: str, width: int, rows: int = MESSAGE_ROWS) -> str:
    """`message`, its part `cut` (if it holds it) shortened with … as little as keeps it to
    `rows` rows of `width` cells, wrapped as a `Static` wraps it: whole if it fits (or there is
    no width yet), down to a bare … where the rest of the message needs the rows."""
    at = message.find(cut) if cut else -1
    if width <= 0 or at < 0 or _rows(message, width) <= rows:
        return message
    head, tail = message[:at], message[at + len(cut) :]

    def shortened(keep: int) -> str:
        return f"{head}{cut[:keep].rstrip(_TRAILING)}…{tail}"

    low, high = 0, len(cut) - 1  # The most kept that fits (or nothing, if none does).
    while low < high:
        middle = (low + high + 1) // 2
        if _rows(shortened(middle), width) <= rows:
            low = middle
        else:
            high = middle - 1
    # Cut between words where a word ends before the cut (`line 1 column…`, not `colu…`).
    space = cut.rfind(" ", 0, low + 1)
    return shortened(space if space > 0 and cut[low] != " " else low)


_TRAILING = " \t,;:"
"""What a cut part does not end in before its …: `column 17:…` read as a colon cut off."""


def _rows(text: str, width: int) -> int:
    return len(Content(text).wrap(width))


class MessageLine(Static):
    """The form's message, under the text: said whole, except a part that may be cut (a file's
    problem, in a parser's words) so that it keeps to two rows at the width it has, as the
    window is resized too. Six rows of one message at 80x24 left the text box one row."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._said = ("", "")

    def say(self, message: str, *, cut: str = "") -> None:
        self._said = (message, cut)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        message, cut = self._said
        self.update(fit_rows(message, cut, self.size.width))


class PassageForm(Vertical):
    """Edits one passage; posts `SaveRequested`, `DeleteRequested` or `NewRequested`."""

    @dataclass
    class SaveRequested(Message):
        """Save this passage; `based_on` is the revision it was opened at (None: a new one)."""

        passage: Passage
        based_on: str | None
        gap_id: int | None

    @dataclass
    class DeleteRequested(Message):
        """Delete the open passage, if it is still at revision `based_on`."""

        passage_id: str
        based_on: str

    @dataclass
    class NewRequested(Message):
        """Start an empty form for a new passage."""

    problem: reactive[str] = reactive("")
    """The first validation problem, shown under the form; empty when the form can be saved."""

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        self.revision: str | None = None
        """The revision the open passage was read at; None while writing a new passage."""
        self.gap_id: int | None = None
        """The content gap a new passage is written for, if any."""
        self.deleted = False
        """Showing a deleted passage's last version: read-only until it is restored."""
        self.taken: frozenset[str] = frozenset()
        self.savable = False
        """Whether Save would write the form as it is (not a deleted passage, nothing invalid);
        a refused save can be tried again."""
        self.generation = 0
        """Counts the openings: a re-read started before the latest one is out of date."""
        self.changed_elsewhere = ""
        """Said under the form while it keeps unsaved changes to a passage someone else has
        changed or deleted since it was opened (empty otherwise); cleared by the next opening."""
        self.elsewhere_revision: str | None = None
        """With `changed_elsewhere`: the revision the passage was found at (None: deleted)."""
        self._elsewhere_cut = ""
        """The part of `changed_elsewhere` that may be cut to keep it to two rows."""
        self.discarded = False
        """The editor said to throw away the unsaved changes shown (leaving, quitting): they are
        not kept when the app ends. Cleared by the next opening or keystroke."""
        self._loading = False
        self._opened: tuple[str, ...] = ("", "", "", "")
        self._fields: tuple[Input, Input, Input, TextArea] | None = None
        """The id, title, tags and text boxes, held: as the app ends they leave the DOM before
        the editor reads what they hold (`unsaved`)."""

    def compose(self) -> ComposeResult:
        t = translations(self.locale)

        def box(placeholder: str, id: str) -> PlainInput:
            # Not selected whole as the focus arrives: a Tab into the title, then a letter, put
            # "Q" in place of "Charged twice for one ride".
            return PlainInput(placeholder=placeholder, id=id, compact=True, select_on_focus=False)

        rows = (
            (t.gettext("Id"), box(t.gettext("a-safe-slug"), "form-id")),
            (t.gettext("Title"), box(t.gettext("shown as the answer's source"), "form-title")),
            (t.gettext("Tags"), box(t.gettext("comma, separated"), "form-tags")),
        )
        text = PlainTextArea(
            id="form-text",
            soft_wrap=True,
            placeholder=t.gettext("What the bot tells the customer"),
            locale=self.locale,
        )
        self._fields = (rows[0][1], rows[1][1], rows[2][1], text)
        for label, field in rows:
            with Horizontal(classes="form-row"):
                yield Label(label, classes="form-label")
                yield field
        yield text
        with Horizontal(id="form-status"):
            yield MessageLine(id="form-problem")
            yield Static("", id="form-count", markup=False)
        with Horizontal(id="form-buttons"):
            yield Button(t.gettext("Save"), variant="primary", id="form-save", compact=True)
            yield Button(t.gettext("New"), id="form-new", compact=True)
            yield Button(t.gettext("Delete"), variant="error", id="form-delete", compact=True)

    @property
    def is_new(self) -> bool:
        return self.revision is None

    @property
    def text_area(self) -> TextArea:
        return self.query_one("#form-text", TextArea)

    def open(
        self,
        passage: Passage | Draft | None,
        *,
        revision: str | None,
        taken: Iterable[str] = (),
        gap_id: int | None = None,
        deleted: bool = False,
        focus: bool = True,
    ) -> None:
        """Show `passage` (stored, with its revision; a draft from a gap; or, with `deleted`, a
        deleted passage's last version, read-only), or an empty form. With `focus`, the cursor
        goes into the form: the editor opened this passage (or a new one) to write in it. It
        goes to Id only while that is to be typed (an empty new form), else to the end of the
        text: a gap's draft comes with its id and title, and its answer is what is left."""
        self._loading = True
        self.generation += 1
        self.changed_elsewhere = ""
        self.elsewhere_revision = None
        self._elsewhere_cut = ""
        self.revision = revision
        self.gap_id = gap_id
        self.deleted = deleted
        self.discarded = False
        self.taken = frozenset(taken) if revision is None else frozenset()
        fields = {
            "#form-id": passage.id if passage else "",
            "#form-title": passage.title if passage else "",
            "#form-tags": ", ".join(passage.tags) if passage else "",
        }
        for selector, value in fields.items():
            field = self.query_one(selector, Input)
            field.value = value
            # At its start: a title longer than the field opened scrolled to its end, its first
            # words out of sight (`ld]Bold[/bold] claims…`).
            field.cursor_position = 0
            field.disabled = deleted
        # A stored passage's id is its file name; renaming is a new passage plus a delete.
        self.query_one("#form-id", Input).disabled = revision is not None or deleted
        text = self.text_area
        text.load_text(passage.text if passage else "")
        text.read_only = deleted
        # Most edits add to the end of a passage: start there, not at its first word.
        text.move_cursor(text.document.end)
        self.query_one("#form-delete", Button).disabled = revision is None
        self.query_one("#form-new", Button).disabled = False
        self._loading = False
        # A draft from a gap counts as unsaved work, so leaving it asks first.
        self._opened = self._values() if gap_id is None else ("", "", "", "")
        self.validate_form()
        self.refresh_bindings()  # The screen greys keys in the footer as their buttons are.
        if focus:
            id_box = self.query_one("#form-id", Input)
            (id_box if not id_box.disabled and not id_box.value else text).focus()

    def _values(self) -> tuple[str, ...]:
        assert self._fields is not None, "the form is not composed yet"
        id_box, title_box, tags_box, text_box = self._fields
        return (id_box.value, title_box.value, tags_box.value, text_box.text)

    def unsaved(self) -> UnsavedPassage | None:
        """What the form holds that Save has not saved and the editor has not thrown away, as
        typed (also once the app has taken the form off the screen); None if nothing."""
        if self._fields is None or not self.dirty or self.discarded:
            return None
        passage_id, title, tags, text = self._values()
        return UnsavedPassage(
            passage_id, title, tags, text, revision=self.revision, gap_id=self.gap_id
        )

    def put_back(self, kept: UnsavedPassage) -> None:
        """Fill the form, opened already as `kept` was (the passage at the revision it was
        opened at, or a new one), with what the editor left unsaved in it when an app of theirs
        ended: unsaved changes again, which only Save saves and leaving asks about."""
        assert self._fields is not None, "the form is not composed yet"
        self._loading = True
        id_box, title_box, tags_box, text = self._fields
        lines = (id_box, title_box, tags_box)
        for line, value in zip(lines, (kept.passage_id, kept.title, kept.tags), strict=True):
            if not line.disabled:  # A stored passage's id stays its own.
                line.value = value
                line.cursor_position = 0
        text.load_text(kept.text)
        text.move_cursor(text.document.end)
        self._loading = False
        self.validate_form()

    @property
    def dirty(self) -> bool:
        """True when the form differs from what was opened: leaving it would lose that. Spaces
        and line breaks around a field, which a save drops, are no difference: an Enter typed at
        the end of the text (after Enter on the list put the cursor there) made Escape ask to
        discard changes that were not there."""
        return not self.deleted and _as_saved(self._values()) != _as_saved(self._opened)

    @property
    def passage_id(self) -> str:
        return self.query_one("#form-id", Input).value.strip()

    def current(self) -> Passage | str:
        """The passage as typed (surrounding spaces dropped), or the first problem with it."""
        if self.deleted:
            return (
                translations(self.locale)
                .gettext("{passage} is deleted: Restore brings back the version highlighted.")
                .format(passage=self.passage_id)
            )
        return check_form(
            passage_id=self.passage_id,
            title=self.query_one("#form-title", Input).value.strip(),
            tags=self.query_one("#form-tags", Input).value,
            text=self.text_area.text.strip(),
            taken=self.taken,
            locale=self.locale,
        )

    def mark_changed_elsewhere(
        self, message: str, *, revision: str | None, show: bool = True, cut: str = ""
    ) -> None:
        """Say `message` under the form until it is opened again: the passage changed (to
        `revision`; None: it was deleted) elsewhere while this form holds unsaved changes, which
        it keeps. Without `show`, the message line keeps what it says until the next change.
        `cut`: a part of `message` shortened where the whole would take more than two rows."""
        self.changed_elsewhere = message
        self.elsewhere_revision = revision
        self._elsewhere_cut = cut
        if show:
            self.validate_form()

    def validate_form(self) -> None:
        result = self.current()
        # A problem with what is typed comes first; with none, the change made elsewhere stays
        # said, however much is typed after it.
        self.problem = result if isinstance(result, str) else self.changed_elsewhere
        savable = not isinstance(result, str)
        self.query_one("#form-save", Button).disabled = not savable
        if savable != self.savable:
            self.savable = savable
            self.refresh_bindings()  # The screen greys Ctrl+S in the footer as Save is.
        length = len(self.text_area.text.strip())
        count = self.query_one("#form-count", Static)
        count.update(f"{length:,} / {MAX_TEXT_CHARS:,}")
        count.set_class(length > MAX_TEXT_CHARS, "over")
        self._show_count()

    def watch_problem(self, problem: str) -> None:
        # Messages quote what was typed (an id, a title): shown with control characters spelled out.
        cut = self._elsewhere_cut if problem == self.changed_elsewhere else ""
        self.query_one("#form-problem", MessageLine).say(printable(problem), cut=printable(cut))
        self._show_count()

    def _show_count(self) -> None:
        """The character count, beside the message line: gone while a message shows (wrapped,
        "was changed by 164 / 4,000 someone else" read it as part of the sentence), unless the
        text is too long, which is what the message then says."""
        count = self.query_one("#form-count", Static)
        count.display = not self.problem or count.has_class("over")
        # The editor's column gives the form a row more while it says something of what is typed
        # (app.tcss): at 60x20 two rows of message left the text box one line. Not a deleted
        # passage's: nothing is typed there, and the history (Restore) is what matters.
        if self.parent is not None:
            self.parent.set_class(bool(self.problem) and not self.deleted, "-form-message")

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _changed(self, event: Input.Changed | TextArea.Changed) -> None:
        event.stop()
        if not self._loading:
            self.discarded = False  # Typed after a discard that left them on screen: theirs.
            self.validate_form()

    async def on_key(self, event: events.Key) -> None:
        # The boxes keep the characters they take: one that reaches the form was typed on Save,
        # New or Delete, and goes into the text.
        await self.query_one("#form-text", PlainTextArea).take_typed(event)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.request_save()

    @on(Button.Pressed, "#form-save")
    def request_save(self) -> None:
        result = self.current()
        if isinstance(result, str):
            self.problem = result
            self.app.bell()
            return
        if self.revision is not None and not self.dirty:
            # Nothing changed since it was opened: a save would write no version, yet it said
            # "Saved" and put the cursor at the end of the text, where the next Enter (meant for
            # the title) added a line break.
            message = translations(self.locale).gettext("Nothing to save: {passage} is unchanged.")
            self.notify(message.format(passage=self.passage_id), markup=False)
            return
        self.post_message(self.SaveRequested(result, self.revision, self.gap_id))

    @on(Button.Pressed, "#form-delete")
    def request_delete(self) -> None:
        if self.revision is not None:
            self.post_message(self.DeleteRequested(self.passage_id, self.revision))

    @on(Button.Pressed, "#form-new")
    def _new(self) -> None:
        self.post_message(self.NewRequested())
