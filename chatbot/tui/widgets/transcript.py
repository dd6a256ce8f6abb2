"""The agent's transcript: a log widget that writes only the newest messages when it opens, so a
long conversation opens as fast as a short one; earlier ones are written on request."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Self

from rich.console import Console, ConsoleOptions, RenderResult
from rich.containers import Lines
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import RichLog

from chatbot.desk.models import Author, ChatEvent, ChatMessage, Escalated, EventData, Note, Page
from chatbot.engine.models import Decision
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.notices import note_heading, notice, opening_notice
from chatbot.text import clip, printable
from chatbot.tui.moments import moment

Entry = ChatMessage | ChatEvent

STYLES = {
    Author.CUSTOMER: "bold cyan",
    Author.BOT: "bold magenta",
    Author.AGENT: "bold green",
}
NOTICE_STYLE = "dim italic"
NOTE_STYLE = "bold yellow"
NOTE_BAR = "▌ "
"""Before every row of an internal note, the rows its lines wrap to included."""

AUTHOR_NAMES = {Author.CUSTOMER: N_("Customer"), Author.BOT: N_("Bot")}

PAGE = 100
"""Entries written when a conversation opens, and how many more each request shows. The log
wraps and renders every line it is given up front (~0.3 s for 1,000 messages); 100 take ~20 ms."""

EARLIER_KEY = "F3"
"""The key the earlier-messages line names; `ConversationView` binds it."""

ABOUT_QUESTION = N_("About “{question}”: {notice}")
"""An escalation's notice that names the question it is about (see `about_question`)."""
ABOUT_CELLS = 50
"""The question's words quoted in `ABOUT_QUESTION` are cut to this."""


def about_question(
    event: EventData,
    sentence: str,
    *,
    asked: Mapping[int, str],
    last_asked: int | None,
    locale: Locale = DEFAULT_LOCALE,
) -> str:
    """`sentence`, said for `event`, naming the question it is about when `event` is an
    escalation whose question is not the customer's message just before it (`last_asked`), and
    its words are known (`asked`: the customer's messages by id). The bot decides a question
    late when it was down or busy, after the customer wrote again, and its escalation is logged
    then: "The bot could not answer this from the help center" sat under "hello? anyone?", and
    read as about it, in the agent's transcript and the customer's chat alike. It stays where it
    came (moved up to its question, the customer would not see "a person will reply here"
    arrive, and the agent would read it before a hand-back that came first), and says which."""
    if not isinstance(event, Escalated):
        return sentence
    question = event.question_entry
    if question is None or question == last_asked or question not in asked:
        return sentence
    words = clip(" ".join(printable(asked[question]).split()), ABOUT_CELLS)
    return translations(locale).gettext(ABOUT_QUESTION).format(question=words, notice=sentence)


@dataclass(frozen=True)
class TranscriptText:
    """Entries as the transcript writes them: one Text (one render for the whole batch), and
    which of its lines are an internal note's. Each row of those begins with the note's bar, a
    row the width wraps the line to as well: wrapped as any other line, a long note's second row
    lost the bar that says only agents see it."""

    text: Text
    notes: frozenset[int] = field(default_factory=frozenset)
    """The numbers of the note's lines in `text` (0: its first), each beginning with `NOTE_BAR`."""

    @property
    def plain(self) -> str:
        return self.text.plain

    def __str__(self) -> str:
        return self.text.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # As `Text.__rich_console__`, a note's rows aside.
        text, width = self.text, options.max_width
        justify = text.justify or options.justify or "default"
        overflow = text.overflow or options.overflow or "fold"
        tab_size = (console.tab_size if text.tab_size is None else text.tab_size) or 8

        def wrapped(line: Text, width: int) -> Lines:
            return line.wrap(console, width, justify=justify, overflow=overflow, tab_size=tab_size)

        lines = Lines()
        for number, line in enumerate(text.split(allow_blank=True)):
            if number not in self.notes:
                lines.extend(wrapped(line, width))
                continue
            bar, body = line[: len(NOTE_BAR)], line[len(NOTE_BAR) :]
            lines.extend(bar + row for row in wrapped(body, max(width - bar.cell_len, 1)))
        yield from Text("\n").join(lines).render(console, end=text.end)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)


def transcript_text(
    entries: Sequence[Entry],
    *,
    locale: Locale = DEFAULT_LOCALE,
    now: datetime | None = None,
    decisions: Mapping[int, Decision] | None = None,
    asked: dict[int, str] | None = None,
    last_asked: int | None = None,
    opens: bool = False,
) -> TranscriptText:
    """Entries as the transcript writes them, every word shown literally. Given `now`, each
    message and note says when it was written (an agent picking up a conversation needs to know
    whether the customer wrote a minute or a day ago). `asked`: the customer's messages written
    so far, by id (those among `entries` are added to it), and `last_asked` the newest of them
    before `entries`, for `about_question`. `opens`: `entries` begin the conversation, above
    which an agent is told it is in English when that is not their language (`opening_notice`)."""
    t = translations(locale)
    text = Text()
    notes: set[int] = set()
    asked = {} if asked is None else asked
    if opens and entries and (opening := opening_notice(entries[0], locale=locale)) is not None:
        text.append(dashed(opening), NOTICE_STYLE)

    def when(entry: Entry) -> None:
        if now is not None:
            text.append(f"  {moment(entry.created_at, now=now)}", "dim")

    for index, entry in enumerate(entries):
        if isinstance(entry, ChatEvent) and isinstance(entry.event, Note):
            # An internal note reads like a message, marked as one only agents see.
            if text:
                text.append("\n")
            first = text.plain.count("\n")
            heading = printable(note_heading(entry.event.agent, locale=locale))
            text.append(f"{NOTE_BAR}{heading}", NOTE_STYLE)
            when(entry)
            text.append("\n")
            lines = printable(entry.event.text).splitlines() or [""]
            for line in lines:
                text.append(f"{NOTE_BAR}{line}\n", "yellow")
            notes.update(range(first, first + 1 + len(lines)))
            continue
        if isinstance(entry, ChatEvent):
            # Only the conversation's first entry sets the language it began in; any later
            # `locale-set` changes it, which the agent is told whatever their own language.
            switched = not (opens and index == 0)
            sentence = notice(
                entry.event, reader="agent", locale=locale, decisions=decisions, switched=switched
            )
            if sentence is not None:
                sentence = about_question(
                    entry.event, sentence, asked=asked, last_asked=last_asked, locale=locale
                )
                if text:
                    text.append("\n")
                text.append(dashed(printable(sentence)), NOTICE_STYLE)
            continue
        if text:
            text.append("\n")
        if entry.author is Author.CUSTOMER:
            asked[entry.id], last_asked = entry.text, entry.id
        if entry.author is Author.AGENT:
            agent = printable(entry.agent) if entry.agent else t.gettext("Agent")
            who = t.gettext("{agent} (agent)").format(agent=agent)
        else:
            who = t.gettext(AUTHOR_NAMES[entry.author])
        text.append(who, STYLES[entry.author])
        when(entry)
        if entry.source is not None:
            source = t.gettext("from {source}").format(source=printable(entry.source))
            text.append(f"  {source}", "dim")
        if entry.feedback is not None:
            text.append(f"  [{entry.feedback.value}]", "yellow")
        text.append("\n")
        text.append(printable(entry.text))
        text.append("\n")
    return TranscriptText(text, frozenset(notes))


def _begins(page: Page) -> bool:
    """Whether `page` (of at most `PAGE` entries, as the view reads them) surely begins its
    conversation. `earlier` leaves out `locale-set` events, so a full page with none earlier may
    still follow the event a Chinese conversation begins with: taken not to begin it, an English
    conversation of just that length goes without its line, where a Chinese one would have been
    called English."""
    return page.earlier == 0 and len(page.entries) < PAGE


def dashed(sentence: str) -> str:
    """A notice as the transcript shows it, after a dash and a space, whatever it starts with.
    The dash stays on its first line: Chinese breaks between characters (`cjk_wrap`), so a
    Chinese sentence no longer goes whole to the next line. (A dash with no space before a wide
    character made an agent's Chinese name read `—王小明 joined the conversation.`)"""
    return f"— {sentence}"


def earlier_line(hidden: int, *, exact: bool = True, locale: Locale = DEFAULT_LOCALE) -> str:
    """The first line of a transcript that does not show its `hidden` oldest messages (over
    `hidden` when not `exact`)."""
    t = translations(locale)
    if not exact:
        line = t.gettext("over {count} earlier messages — press {key} to show {page} more")
        return "— " + line.format(count=f"{hidden:,}", key=EARLIER_KEY, page=PAGE)
    if hidden > PAGE:
        line = t.gettext("{count} earlier messages — press {key} to show {page} more")
        return "— " + line.format(count=hidden, key=EARLIER_KEY, page=PAGE)
    line = t.ngettext(
        "{count} earlier message — press {key} to show them",
        "{count} earlier messages — press {key} to show them",
        hidden,
    )
    return "— " + line.format(count=hidden, key=EARLIER_KEY)


class Transcript(RichLog):
    """Shows a page of the newest entries, appends new ones as they arrive, and earlier pages on
    request; never parses markup. It holds only what it shows: earlier pages come from the desk.

    Each batch of entries is rendered once, when it is written (at the bottom as it arrives, at
    the top for an earlier page), and again only when the width changes: an earlier page used to
    render everything shown again, so each F3 froze the console longer than the last (~1.3 s
    with 3,000 messages shown; `bench/transcript_f3.py`)."""

    def __init__(
        self,
        *,
        clock: Callable[[], datetime],
        locale: Locale = DEFAULT_LOCALE,
        id: str | None = None,
    ) -> None:
        super().__init__(
            id=id, wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20
        )
        self.clock = clock
        """The desk's clock: a message's time leaves out its date when it is today."""
        self.locale: Locale = locale
        """The agent's language: events are said in it, messages shown as written."""
        self._entries: list[Entry] = []
        self._texts: list[TranscriptText] = []
        """What is shown, as written (each message's time as of then), oldest batch first, under
        `_header`: a log wraps its lines when they are written, so a new width writes them all
        again (`_wrap`)."""
        self._header: TranscriptText | None = None
        """The earlier-messages line and the blank line under it (None: nothing is hidden)."""
        self._header_rows = 0
        """The lines `_header` is wrapped to at the top of `lines` (0: not written)."""
        self._wrapped_at = 0
        """The width the lines shown are wrapped to (0: not laid out, or hidden)."""
        self._rows = 0
        """The lines the view showed at its last resize: was the end in view before this one?"""
        self._hidden = 0
        self._exact = True
        self.decisions: Mapping[int, Decision] = {}
        """The conversation's decisions by question, which a `not-judged` escalation is said
        from (a replay miss, or Valen declining): set by the view before it writes one."""
        self._asked: dict[int, str] = {}
        """The customer's messages written, by id: an escalation logged after the customer wrote
        again names the one it is about (`about_question`)."""
        self._last_asked: int | None = None
        """The newest of them."""
        self._opens = False
        """The next entries written at the top begin the conversation (`transcript_text`'s
        `opens`): the page it opened with held none, and nothing lies before it."""

    @property
    def hidden(self) -> int:
        """How many of the earliest entries are not written (0: the whole conversation is)."""
        return self._hidden

    @property
    def first_id(self) -> int | None:
        """The earliest entry written: the next earlier page ends before it."""
        return self._entries[0].id if self._entries else None

    def start(self, page: Page) -> None:
        """The conversation's newest page, as it opens."""
        self._entries = list(page.entries)
        self._hidden, self._exact = page.earlier, page.earlier_exact
        self.clear()
        self._header = self._earlier_text()
        self._opens = _begins(page)
        self._texts = [self._text(page.entries, opens=self._opens)]
        self._opens = self._opens and not page.entries
        if self._wrap():
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def add(self, entries: Sequence[Entry]) -> None:
        """Entries newer than any written."""
        if not entries:
            return
        self._entries.extend(entries)
        opens, self._opens = self._opens, False
        self._write(self._text(entries, opens=opens))

    def add_earlier(self, page: Page) -> None:
        """Write an earlier page above the entries shown, keeping the entry at the top of the
        view where it was. Only the page (and the earlier-messages line) is rendered: the lines
        below it are the same at the same width."""
        lines_before, scroll_y = len(self.lines), self.scroll_y
        self._entries[:0] = page.entries
        self._hidden, self._exact = page.earlier, page.earlier_exact
        self._header = self._earlier_text()
        opens = _begins(page)
        text = self._text(page.entries, newer=False, opens=opens) if page.entries else None
        if text is not None:
            self._texts.insert(0, text)
        width = self._width()
        if not width:
            return  # Not laid out: wrapped, at the top, once it is.
        if width != self._wrapped_at:
            self._wrap()  # A new width: every line is new anyway.
        else:
            top = [] if self._header is None else self._strips(self._header, width)
            rows = len(top)
            if text is not None:
                top += self._strips(text, width)
            self._put(0, self._header_rows, top)  # The earlier line's old rows go.
            self._header_rows = rows
        # Everything below the newly shown entries wraps as before, so the added lines are all
        # above the view: scroll down by as many.
        self.scroll_to(y=scroll_y + len(self.lines) - lines_before, animate=False)

    def clear(self) -> Self:
        self._texts = []
        self._asked, self._last_asked = {}, None
        self._header, self._header_rows = None, 0
        super().clear()
        self._wrapped_at = self._width()  # No lines: as good as wrapped to the width there is.
        return self

    def on_resize(self, _event: events.Resize) -> None:
        # Shown again after being hidden counts as a resize too (Textual sends one). A new height
        # alone changes no line: nothing to write again.
        rows, self._rows = self._rows, self.scrollable_content_region.height
        lines_before, scroll_y = len(self.lines), self.scroll_y
        if self._width() == self._wrapped_at:
            # Shorter only (the reply hint or typing line shown as the conversation opens): the
            # lines are the same, but the last ones went below the view, which stopped two
            # lines short of the end in about half the openings.
            if 0 < self._rows < rows and scroll_y + rows >= lines_before:
                self.scroll_end(animate=False, immediate=False, x_axis=False)
            return
        if not self._wrap():
            return
        if scroll_y + rows >= lines_before:  # The newest lines were in view: they stay.
            self.scroll_end(animate=False, immediate=False, x_axis=False)
        else:  # About the same place in the conversation: wrapping changed every line count.
            self.scroll_to(y=scroll_y * len(self.lines) // lines_before, animate=False)

    def _width(self) -> int:
        """The columns a line has now (0: not laid out, or hidden)."""
        return self.scrollable_content_region.width

    def _write(self, text: TranscriptText) -> None:
        """Keep `text` to wrap again when the width changes, and show it now if the lines shown
        are wrapped to the current width, with them all otherwise (hidden, the resize that shows it
        again wraps them)."""
        self._texts.append(text)
        width = self._width()
        if width and width == self._wrapped_at:
            end = len(self.lines)
            self._put(end, end, self._strips(text, width))
        elif width:
            self._wrap()
        if width:
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def _wrap(self) -> bool:
        """Write every text kept again, wrapped to the current width (False: there is none yet).
        Only when the width changed: it costs a render of every line."""
        width = self._width()
        if not width:
            return False
        lines = [] if self._header is None else self._strips(self._header, width)
        self._header_rows = len(lines)
        for text in self._texts:
            lines += self._strips(text, width)
        self._widest_line_width = 0
        self._put(0, len(self.lines), lines)
        self._wrapped_at = width
        return True

    def _strips(self, text: TranscriptText, width: int) -> list[Strip]:
        """`text` as lines `width` wide, rendered as `RichLog.write` renders it. The transcript
        puts its lines in place itself: `write` only appends, and until the log's first resize
        it defers what it is given (the earlier-messages line's rows could not be counted)."""
        console = self.app.console
        lines = list(Segment.split_lines(console.render(text, console.options.update_width(width))))
        return Strip.from_lines(lines) if lines else [Strip.blank(width)]

    def _put(self, start: int, stop: int, strips: list[Strip]) -> None:
        """Put `strips` in place of lines `start` to `stop` (an append when both are the end);
        the lines around them stay as they are."""
        moved = stop != len(self.lines) or start != stop
        self.lines[start:stop] = strips
        widest = max((strip.cell_length for strip in strips), default=0)
        self._widest_line_width = max(self._widest_line_width, widest)
        if moved:
            self._line_cache.clear()  # Keyed by line number: the lines after `start` moved.
        self.virtual_size = Size(self._widest_line_width, len(self.lines))
        self.refresh()

    def _text(
        self, entries: Sequence[Entry], *, newer: bool = True, opens: bool = False
    ) -> TranscriptText:
        """`entries` as written: `newer` than any written so far, or (False) an earlier page;
        `opens`: they begin the conversation."""
        text = transcript_text(
            entries,
            locale=self.locale,
            now=self.clock(),
            decisions=self.decisions,
            asked=self._asked,
            last_asked=self._last_asked if newer else None,
            opens=opens,
        )
        if newer:
            for entry in entries:
                if isinstance(entry, ChatMessage) and entry.author is Author.CUSTOMER:
                    self._last_asked = entry.id
        return text

    def _earlier_text(self) -> TranscriptText | None:
        """The line above the entries shown that says how many are not, with a blank line under
        it (None: every entry is shown)."""
        if not self._hidden:
            return None
        line = earlier_line(self._hidden, exact=self._exact, locale=self.locale)
        return TranscriptText(Text.assemble((line, NOTICE_STYLE), "\n"))
