"""The editor's synonyms: one group per line (`senior = pensioner, retiree`), each bad line named
under the box as you type, and Save off until there are none."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static, TextArea

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.synonyms import (
    LINE_FORMAT,
    SynonymGroup,
    group_line,
    group_problem,
    parse_synonym_lines,
)
from chatbot.knowledge_base.translated import synonyms_finding_nothing
from chatbot.tui.widgets.plain_text_area import PlainTextArea

HELP = N_(
    "One group a line: {format}. A question with any word of a group also searches for the "
    "others. Lines starting with # are skipped. Ctrl+S saves."
)
"""Shown above the box, `{format}` being `LINE_FORMAT` (the file's syntax, not translated)."""


class SynonymsPanel(Vertical):
    """Edits every synonym group at once; the screen saves them."""

    @dataclass
    class SaveRequested(Message):
        """The lines are valid and the editor asked to save them."""

        groups: tuple[SynonymGroup, ...]
        based_on: str | None
        """The revision of `synonyms.toml` the lines were loaded from (None: there was none)."""

    def __init__(
        self,
        passages: Callable[[], Mapping[Locale, Sequence[Passage]]],
        *,
        locale: Locale = DEFAULT_LOCALE,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        self._passages = passages
        """For each language, the passages its questions are searched in now: a group is judged
        by those of its words' language, as `helpdesk kb check` judges it (the main folder's
        alone would say a Chinese group the zh/ passages have finds nothing)."""
        self.revision: str | None = None
        self.saved_text = ""
        self.groups: tuple[SynonymGroup, ...] = ()
        self.problems: list[str] = []
        self.loaded = False
        """The lines show the groups as stored (`load`): not so for a file that could not be
        read, which a save replaces even with the box as it was."""
        self._unshowable: list[tuple[str, str]] = []
        """Loaded groups the lines cannot hold (`#1 = number one` reads as a comment), each as
        shown and why: a problem while the text still holds it, so a save never drops one."""

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        yield Static(Text(t.gettext(HELP).format(format=LINE_FORMAT)), id="synonyms-help")
        yield PlainTextArea(id="synonyms-text", soft_wrap=True, show_line_numbers=True)
        yield Static(id="synonyms-problem")
        yield Static(id="synonyms-note")
        with Horizontal(id="synonyms-buttons"):
            # A whole button, framed, as the gaps' and Try it's: a compact one was its label row
            # alone, on the footer's edge, and read as a button cut off.
            yield Button(t.gettext("Save"), id="synonyms-save", variant="primary")

    @property
    def text(self) -> str:
        return self.query_one("#synonyms-text", TextArea).text

    @property
    def dirty(self) -> bool:
        return self.text != self.saved_text

    def load(self, groups: Sequence[SynonymGroup], *, revision: str | None) -> None:
        """Show `groups` as saved at `revision`."""
        self.revision = revision
        self.saved_text = "".join(f"{group_line(g)}\n" for g in groups)
        self._unshowable = [
            (group_line(g), problem) for g in groups if (problem := group_problem(g)) is not None
        ]
        self.loaded = True
        box = self.query_one("#synonyms-text", TextArea)
        box.load_text(self.saved_text)
        # On the empty line after the last group: what is typed first is a new group, not
        # letters pushed into the first one.
        box.move_cursor(box.document.end)
        self._check()

    def refuse(self, problem: str) -> None:
        """Say why the synonyms could not be read or saved; what is typed stays."""
        self.query_one("#synonyms-problem", Static).update(Text(problem))

    async def on_key(self, event: events.Key) -> None:
        # The box keeps the characters it takes: one that reaches the panel was typed on Save.
        await self.query_one("#synonyms-text", PlainTextArea).take_typed(event)

    @on(TextArea.Changed, "#synonyms-text")
    def _changed(self) -> None:
        self._check()

    def _check(self) -> None:
        self.groups, self.problems = parse_synonym_lines(self.text)
        self.problems += self._unshowable_problems()
        self.query_one("#synonyms-problem", Static).update(Text("\n".join(self.problems)))
        found = synonyms_finding_nothing(self._passages(), self.groups)
        t = translations(self.locale)
        notes = []
        if nowhere := [group[0] for group, locale in found if locale is None]:
            notes.append(
                t.gettext("Finds nothing (no passage has any of its words): {groups}").format(
                    groups="; ".join(nowhere)
                )
            )
        if elsewhere := [group[0] for group, locale in found if locale is not None]:
            notes.append(
                t.gettext(
                    "Finds nothing (no passage searched for questions in its language has any "
                    "of its words): {groups}"
                ).format(groups="; ".join(elsewhere))
            )
        self.query_one("#synonyms-note", Static).update(Text("\n".join(notes)))
        self.query_one("#synonyms-save", Button).disabled = bool(self.problems)

    def _unshowable_problems(self) -> list[str]:
        """A problem for each loaded group the lines cannot hold that the text still shows as
        loaded (an older helpdesk, or a hand, wrote it): change the word or delete the line."""
        text, problems = self.text, []
        for shown, problem in self._unshowable:
            at = next((i for i in _find_all(text, shown) if i == 0 or text[i - 1] == "\n"), None)
            if at is not None:
                number = text.count("\n", 0, at) + 1
                problems.append(f"line {number}: {problem}; change the word or delete the line")
        return problems

    def request_save(self) -> None:
        """Ask the screen to save, unless a line is bad (its problem is shown already) or
        nothing changed (said: "Saved 5 synonym groups." twice for a file left as it was read
        like two saves of typing that was in fact lost). Judged by what the box holds now:
        the groups and problems follow its `Changed` messages, which come after the keys that
        made them, and a Ctrl+S straight after a burst saved `bike = bicycle, c`, or was
        refused for a problem the line had had two keys earlier."""
        self._check()
        if self.problems:
            return
        if self.loaded and not self.dirty:
            message = translations(self.locale).gettext(
                "Nothing to save: the synonyms are as saved."
            )
            self.notify(message, markup=False)
            return
        self.post_message(self.SaveRequested(self.groups, self.revision))

    @on(Button.Pressed, "#synonyms-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.request_save()


def _find_all(text: str, part: str) -> list[int]:
    """Where `part` starts in `text`, every time."""
    found: list[int] = []
    at = text.find(part)
    while at != -1:
        found.append(at)
        at = text.find(part, at + 1)
    return found
