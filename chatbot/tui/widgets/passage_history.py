"""A passage's earlier versions, newest first, with a preview and a restore button."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import Version


def version_text(version: Version) -> str:
    """What a version said, or why it cannot be shown (a hand-broken file kept as it was)."""
    try:
        return version.passage().text
    except KnowledgeBaseError as error:
        return str(error)


class PassageHistory(Vertical):
    """Lists versions of one passage; Restore posts `RestoreRequested`."""

    @dataclass
    class RestoreRequested(Message):
        """Make version `version` of `passage_id` current again."""

        passage_id: str
        version: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.passage_id: str | None = None
        self._versions: dict[str, Version] = {}

    def compose(self) -> ComposeResult:
        yield Static("History", classes="section-title")
        yield OptionList(id="history-options", markup=False)
        yield Static("", id="history-preview", markup=False)
        with Horizontal(id="history-buttons"):
            yield Button("Restore this version", id="history-restore", disabled=True)

    def show(self, passage_id: str | None, versions: Sequence[Version]) -> None:
        self.passage_id = passage_id
        self._versions = {str(v.number): v for v in versions}
        options = self.query_one("#history-options", OptionList)
        options.clear_options()
        for version in reversed(versions):
            when = version.archived_at.astimezone().strftime("%Y-%m-%d %H:%M")
            label = f"v{version.number}  {when}  replaced by {version.reason}"
            options.add_option(Option(label, id=str(version.number)))
        if not versions:
            options.add_option(Option("no earlier versions", disabled=True))
        self.query_one("#history-preview", Static).update("")
        self.query_one("#history-restore", Button).disabled = True
        if versions:
            options.highlighted = 0

    @on(OptionList.OptionHighlighted, "#history-options")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        version = self._versions.get(event.option.id or "")
        self.query_one("#history-preview", Static).update(version_text(version) if version else "")
        self.query_one("#history-restore", Button).disabled = version is None

    @on(OptionList.OptionSelected, "#history-options")
    @on(Button.Pressed, "#history-restore")
    def request_restore(self, event: OptionList.OptionSelected | Button.Pressed) -> None:
        event.stop()
        option = self.query_one("#history-options", OptionList).highlighted_option
        if self.passage_id is None or option is None or option.id not in self._versions:
            return
        self.post_message(self.RestoreRequested(self.passage_id, int(option.id)))
