"""A question or reply box whose Enter sends what it held when Enter reached it: see
`SendGuard` for how Enters pressed in a burst, or while a send waits, are read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events, on
from textual.widgets import Input

from chatbot.tui.send_guard import SendGuard
from chatbot.tui.widgets.plain_input import PlainInput


class SendBox(PlainInput):
    """A `PlainInput` whose Enter sends what it held when the key reached it, with a `SendGuard`:
    its owner reads each `Submitted` with `words`, and changes the box with `take` and `put`."""

    @dataclass
    class Submitted(Input.Submitted, namespace="input"):
        """Enter pressed on a `SendBox`: its words then, and its guard's revision then."""

        revision: int = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = SendGuard()

    async def _on_key(self, event: events.Key) -> None:
        # Enter is `Input`'s binding, and a binding runs once its key has passed every widget up
        # to the app (held up behind a send in progress): keys typed after Enter were in the box
        # by then, and went with it. Here Enter is handled in turn with the keys around it.
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            await self.action_submit()

    async def action_submit(self) -> None:
        validation = self.validate(self.value) if "submitted" in self.validate_on else None
        self.post_message(
            self.Submitted(self, self.value, validation, revision=self.guard.entered())
        )

    @on(Input.Changed)
    def _edited(self, event: Input.Changed) -> None:
        self.guard.edited(event.value)  # Bubbles on: the owner hears of it too.

    def words(self, event: SendBox.Submitted) -> str | None:
        """What `event`'s Enter asks to send now: its words, less those that went out since it
        was pressed; None if it asks for nothing (a repeat, or words since put away)."""
        return self.guard.read(event.value, event.revision)

    def take(self, words: str) -> None:
        """`words` went out: off the front of the box, leaving what was typed after their Enter
        (all of it, if the box no longer starts with them), and out of Enters still to be read."""
        value = self.value
        if value.startswith(words):
            cursor = self.cursor_position
            self.value = value[len(words) :]
            self.cursor_position = max(cursor - len(words), 0)
        self.guard.took(words, emptied=not self.value)

    def put(self, value: str) -> None:
        """Other words in the box, the cursor after them: no Enter pressed on the words it held
        sends them any more."""
        self.value = value
        self.cursor_position = len(self.value)
        self.guard.put()

    def kept(self, words: str) -> None:
        """`words`, read from an Enter, were not sent and stay in the box."""
        if words.strip():  # An empty box refused leaves nothing to be sent twice.
            self.guard.kept()
