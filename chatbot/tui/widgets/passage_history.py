"""A passage's earlier versions, newest first, each compared with the current text."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import Version
from chatbot.text import cells, pieces, printable

_CONTEXT = 10
"""Tokens kept either side of a change; the rest of an unchanged stretch is elided."""

_FILE_FIRST = re.compile(r"(?:(?!: ).)*\.json: ", re.DOTALL)
"""The path a file's problem starts with (`kb/.history/helmet/000002.json: `)."""


def without_path(problem: str) -> str:
    """A file's problem (`PATH: not UTF-8 text (byte 20)`) without the path it starts with,
    for a line whose place already says which file it is."""
    match = _FILE_FIRST.match(problem)
    return problem[match.end() :] if match and match.end() < len(problem) else problem


FIRST_CHANGE = {
    "text": N_("Restoring v{number} would change the text: "),
    "title": N_("Restoring v{number} would change the title: "),
    "tags": N_("Restoring v{number} would change the tags: "),
}
"""The lead-in of the first field a restore would change (the text's, most often the only one)."""
CANNOT_RESTORE = N_("v{number} cannot be restored: ")
"""The lead-in of why a version cannot be restored (its history file, or the file it kept, is
unreadable), in place of what restoring it would change."""
ALSO_CHANGES = {
    "title": N_("It would also change the title: "),
    "tags": N_("It would also change the tags: "),
}
"""The lead-in of each further field, on a line of its own."""
REPLACED_BY = {
    "edit": N_("v{number}  {when}  replaced by edit"),
    "restore": N_("v{number}  {when}  replaced by restore"),
    "delete": N_("v{number}  {when}  replaced by delete"),
    "import": N_("v{number}  {when}  replaced by import"),
}
"""A version's row by the change that replaced it, a sentence each (the English says the
change's code): a Chinese editor read `因 edit 被替换`. A change the program does not know
(a history file written by another) is named as written (`REPLACED_BY_OTHER`)."""
REPLACED_BY_OTHER = N_("v{number}  {when}  replaced by {reason}")


def why_not_restorable(version: Version) -> str | None:
    """Why `version` cannot be restored (None: it can): its history file is unreadable (its
    `problem`), or the passage file it kept was broken by hand before it was replaced."""
    if version.problem is not None:
        return version.problem
    try:
        version.passage()
    except KnowledgeBaseError as error:
        return str(error).removesuffix("; cannot be restored")
    return None


def tags_diff(current: Sequence[str], version: Sequence[str]) -> Text:
    """The version's tags with `[-removed-]` and `{+added+}` ones marked, as the text's words."""
    shown = Text()
    items = [(tag, "") for tag in version if tag in current]
    removed = [(tag, "-") for tag in current if tag not in version]
    added = [(tag, "+") for tag in version if tag not in current]
    # The kept tags in the version's order, then what goes, then what comes back.
    for index, (tag, mark) in enumerate([*items, *removed, *added]):
        if index:
            shown.append(", ")
        if mark == "-":
            shown.append(f"[-{printable(tag)}-]", "red strike")
        elif mark == "+":
            shown.append(f"{{+{printable(tag)}+}}", "green bold")
        else:
            shown.append(printable(tag))
    return shown


def passage_diff(
    current: Passage | None, version: Version, *, locale: Locale = DEFAULT_LOCALE
) -> Text:
    """What restoring `version` would change in `current` (None: nothing is current, the
    passage is deleted or new): the text, the title and the tags, each only if it changes. A
    restore brings back all three: a diff of the text alone said "nothing" for a version that
    differed only in its tags."""
    t = translations(locale)
    if (why := why_not_restorable(version)) is not None:
        # Only why: "Restoring v2 would change the text: …; cannot be restored" said both.
        heading = t.gettext(CANNOT_RESTORE).format(number=version.number)
        return Text(heading, "dim") + Text(printable(why))
    old = version.passage()
    title, tags, text = ("", (), "") if current is None else (
        current.title, current.tags, current.text)  # fmt: skip
    changes: list[tuple[str, Text]] = []
    if old.text != text:
        changes.append(("text", word_diff(text, old.text, locale=locale)))
    if old.title != title:
        changes.append(("title", word_diff(title, old.title, locale=locale)))
    if old.tags != tuple(tags):
        changes.append(("tags", tags_diff(tags, old.tags)))
    if not changes:
        same = t.gettext("Restoring v{number} would change nothing: it is the same as the "
                         "current passage.")  # fmt: skip
        return Text(same.format(number=version.number), "dim")
    shown = Text()
    for index, (field, diff) in enumerate(changes):
        if index:
            shown.append("\n")
            shown.append(t.gettext(ALSO_CHANGES[field]), "dim")
        else:
            shown.append(t.gettext(FIRST_CHANGE[field]).format(number=version.number), "dim")
        shown.append_text(diff)
    return shown


def diff_tokens(text: str) -> list[str]:
    """`text` as the word diff compares it: runs of spaces, words, and each wide (CJK) character
    on its own, as lines break (`chatbot.text.pieces`); joined, they are `text` again. Chinese
    has no spaces between words: split on spaces alone, a Chinese passage was one word, and a
    sentence appended to it showed the whole passage removed and the whole passage added."""
    return list(pieces(text))


def word_diff(current: str, version: str, *, locale: Locale = DEFAULT_LOCALE) -> Text:
    """What restoring `version` would change in `current`, word by word: `[-removed-]` in red,
    `{+added+}` in green (the markers keep it readable without colour, as in `git diff
    --word-diff`). Passages are mostly one paragraph, so a line diff would say nothing."""
    old, new = diff_tokens(current), diff_tokens(version)
    shown = Text()
    for tag, i1, i2, j1, j2 in _phrases(old, new):
        if tag == "equal":
            same = old[i1:i2]
            if len(same) > 3 * _CONTEXT:  # Long unchanged stretches shrink to their ends.
                # The end next to a change is kept: a sentence appended (or put first) showed
                # after a bare "…", with none of the text it follows.
                head = same[:_CONTEXT] if i1 or j1 else []
                tail = same[-_CONTEXT:] if i2 < len(old) or j2 < len(new) else []
                same = [*head, "…" if tail and tail[0].isspace() else "… ", *tail]
            shown.append(printable("".join(same)))
            continue
        if i2 > i1:
            shown.append(f"[-{printable(''.join(old[i1:i2]))}-]", "red strike")
        if j2 > j1:
            shown.append(f"{{+{printable(''.join(new[j1:j2]))}+}}", "green bold")
    if current == version:
        t = translations(locale)
        return Text(t.gettext("nothing: it is the same as the current text"), "dim")
    return shown


def _phrases(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The word diff's changes, where two changes apart only by a space, or by one CJK character,
    become one: a rewritten phrase reads as one change, not as a change per word (nor, in
    Chinese, a change around each character it happens to share, `免{+除超时+}费`)."""
    merged: list[tuple[str, int, int, int, int]] = []
    for op in _opcodes(old, new):
        tag, i1, i2, j1, j2 = op
        if tag != "equal" and merged and merged[-1][0] != "equal":
            _, pi1, _, pj1, _ = merged.pop()
            merged.append(("replace", pi1, i2, pj1, j2))
        elif (tag != "equal" and len(merged) >= 2 and merged[-1][0] == "equal"
              and _joins(old[merged[-1][1]:merged[-1][2]])):  # fmt: skip
            merged.pop()
            _, pi1, _, pj1, _ = merged.pop()
            merged.append(("replace", pi1, i2, pj1, j2))
        else:
            merged.append(op)
    return merged


def _joins(same: list[str]) -> bool:
    """Whether an unchanged stretch between two changes is too little to part them: only
    whitespace, or a single CJK character."""
    return "".join(same).isspace() or (len(same) == 1 and cells(same[0]) > 1)


def _opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """`SequenceMatcher.get_opcodes`, with what the two share at both ends of each stretch taken
    as equal before the longest match inside it is looked for. Left to itself, the matcher takes
    the first of equally long matches: in a passage of one sentence repeated, a one-word change
    matched the text after it with the same text a few sentences earlier, and the diff removed and
    added ~1,600 characters around the one word."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    blocks: list[tuple[int, int, int]] = []
    stack = [(0, len(old), 0, len(new))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        head = 0
        while alo + head < ahi and blo + head < bhi and old[alo + head] == new[blo + head]:
            head += 1
        if head:
            blocks.append((alo, blo, head))
            alo, blo = alo + head, blo + head
        tail = 0
        while alo < ahi - tail and blo < bhi - tail and old[ahi - tail - 1] == new[bhi - tail - 1]:
            tail += 1
        if tail:
            blocks.append((ahi - tail, bhi - tail, tail))
            ahi, bhi = ahi - tail, bhi - tail
        if alo == ahi or blo == bhi:
            continue
        i, j, size = matcher.find_longest_match(alo, ahi, blo, bhi)
        if size:
            blocks.append((i, j, size))
            stack.append((alo, i, blo, j))
            stack.append((i + size, ahi, j + size, bhi))
    blocks.sort()
    opcodes: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for ai, bj, size in [*blocks, (len(old), len(new), 0)]:
        tag = ("replace" if i < ai and j < bj else "delete" if i < ai
               else "insert" if j < bj else "")  # fmt: skip
        if tag:
            opcodes.append((tag, i, ai, j, bj))
        if size:
            if opcodes and opcodes[-1][0] == "equal":  # Adjacent matches read as one.
                _, pi1, _, pj1, _ = opcodes.pop()
                opcodes.append(("equal", pi1, ai + size, pj1, bj + size))
            else:
                opcodes.append(("equal", ai, ai + size, bj, bj + size))
        i, j = ai + size, bj + size
    return opcodes


class PassageHistory(Vertical):
    """Lists versions of one passage; Enter or Restore posts `RestoreRequested` (the editor asks
    before it restores)."""

    @dataclass
    class RestoreRequested(Message):
        """Make version `version` of `passage_id` current again."""

        passage_id: str
        version: int

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        self.passage_id: str | None = None
        self.current: Passage | None = None
        """The passage as it is now, which each version is compared with (None when deleted)."""
        self._versions: dict[str, Version] = {}

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        with Horizontal(id="history-head"):
            yield Static(t.gettext("History"), classes="section-title", id="history-title")
            yield Button(t.gettext("Restore"), id="history-restore", disabled=True, compact=True)
        yield OptionList(id="history-options", markup=False, compact=True)
        with VerticalScroll(id="history-diff-scroll"):
            yield Static("", id="history-diff", markup=False)

    def show(
        self, passage_id: str | None, versions: Sequence[Version], *, current: Passage | None
    ) -> None:
        t = translations(self.locale)
        self.passage_id = passage_id
        self.current = current
        self._versions = {str(v.number): v for v in versions}
        options = self.query_one("#history-options", OptionList)
        options.clear_options()
        for version in reversed(versions):
            when = version.archived_at.astimezone().strftime("%Y-%m-%d %H:%M")
            if version.problem is not None:
                # Its history file cannot be read: said so, with why (its row says which file;
                # the list cuts the line to fit), not "replaced by unreadable".
                why = printable(without_path(version.problem)).replace("\n", " ")
                label = t.gettext("v{number}  {when}  unreadable: {problem}").format(
                    number=version.number, when=when, problem=why
                )
            else:
                # The reason comes from a file on disk: printable like any outside text.
                replaced = REPLACED_BY.get(version.reason, REPLACED_BY_OTHER)
                label = t.gettext(replaced).format(
                    number=version.number, when=when, reason=printable(version.reason)
                )
            options.add_option(Option(label, id=str(version.number)))
        if not versions:
            options.add_option(Option(t.gettext("no earlier versions"), disabled=True))
        # With nothing to choose or read, neither is a Tab stop: from the form's buttons Tab
        # went through an empty list and an empty diff, where typed keys were lost.
        options.can_focus = bool(versions)
        self.query_one("#history-diff-scroll", VerticalScroll).can_focus = bool(versions)
        self.query_one("#history-diff", Static).update("")
        self.query_one("#history-restore", Button).disabled = True
        if versions:
            options.highlighted = 0

    def update(self, versions: Sequence[Version], *, current: Passage | None) -> None:
        """The same passage's history as it is now (another process changed it): the version
        highlighted stays highlighted while it is listed; nothing is redrawn if nothing changed."""
        if list(versions) == list(self._versions.values()) and current == self.current:
            return
        highlighted = self.highlighted
        self.show(self.passage_id, versions, current=current)
        if highlighted is not None and str(highlighted.number) in self._versions:
            options = self.query_one("#history-options", OptionList)
            options.highlighted = options.get_option_index(str(highlighted.number))

    @property
    def highlighted(self) -> Version | None:
        option = self.query_one("#history-options", OptionList).highlighted_option
        return None if option is None else self._versions.get(option.id or "")

    @on(OptionList.OptionHighlighted, "#history-options")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        version = self._versions.get(event.option.id or "")
        diff = self.query_one("#history-diff", Static)
        if version is None:
            diff.update("")
        else:
            diff.update(passage_diff(self.current, version, locale=self.locale))
        # Not offered for a version that cannot be restored: it only led to an error.
        restorable = version is not None and why_not_restorable(version) is None
        self.query_one("#history-restore", Button).disabled = not restorable

    @on(OptionList.OptionSelected, "#history-options")
    @on(Button.Pressed, "#history-restore")
    def _restore_pressed(self, event: OptionList.OptionSelected | Button.Pressed) -> None:
        event.stop()
        self.request_restore()

    def request_restore(self) -> None:
        """Ask the editor to restore the highlighted version; one that cannot be restored (Enter
        or a click on its row, the palette's Restore) is refused here, and why is said again,
        marked, where it was said: no dialog asks about a restore that can only fail."""
        version = self.highlighted
        if self.passage_id is None or version is None:
            return
        if (why := why_not_restorable(version)) is not None:
            t = translations(self.locale)
            heading = t.gettext(CANNOT_RESTORE).format(number=version.number)
            refused = Text(heading, "bold red") + Text(printable(why))
            self.query_one("#history-diff", Static).update(refused)
            self.query_one("#history-diff-scroll", VerticalScroll).scroll_home(animate=False)
            self.app.bell()
            return
        self.post_message(self.RestoreRequested(self.passage_id, version.number))
