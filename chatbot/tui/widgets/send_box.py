"""A question or reply box whose Enter sends what it held when Enter reached it: see
`SendGuard` for how Enters pressed in a burst, or while a send waits, are read."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from textual import events, on
from textual.message import Message
from textual.widgets import Input

from chatbot.text import is_blank
from chatbot.tui.send_guard import SendGuard
from chatbot.tui.widgets.plain_input import PlainInput


class SendBox(PlainInput):
    """A `PlainInput` whose Enter sends what it held when the key reached it, with a `SendGuard`:
    its owner reads each `Submitted` with `words`, and changes the box with `take` and `put`."""

    @dataclass
    class Submitted(Input.Submitted, namespace="input"):
        """Enter pressed on a `SendBox`: its words then, and its guard's revision then."""

        revision: int = 0

    @dataclass
    class Switch(Message):
        """A key that changes what the box writes (a note or a reply) was pressed on it: the
        owner makes the change (or declines it), then calls `release`."""

        box: SendBox
        key: str

        @property
        def control(self) -> SendBox:
            """The box, for `@on(SendBox.Switch, selector)`."""
            return self.box

    def __init__(
        self,
        *args: Any,
        switch_keys: Collection[str] = (),
        hold_keys: Collection[str] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.guard = SendGuard()
        self._switch_keys = frozenset(switch_keys)
        self._hold_keys = frozenset(hold_keys)
        """Keys that go on to their owner's binding as usual, the keys after them held until the
        owner calls `release` (F6: the next conversation opens in this box)."""
        self._held: list[events.Key | events.Paste] | None = None
        """Keys and pastes that came after a switch key, kept until the switch is made: typed
        in a burst, a note's words reached the reply box before Ctrl+N (a binding, run behind a
        send in progress) made it a note box, and went to the customer with its Enter."""

    async def _on_key(self, event: events.Key) -> None:
        # Enter is `Input`'s binding, and a binding runs once its key has passed every widget up
        # to the app (held up behind a send in progress): keys typed after Enter were in the box
        # by then, and went with it. Here Enter is handled in turn with the keys around it.
        if event.key in self._hold_keys and self._held is None:
            self.hold()  # The key itself goes on: its binding is the owner's.
            return
        # Ctrl+J is Enter (`PlainInput`'s binding says why), handled here in turn as Enter is.
        key = "enter" if event.key == "ctrl+j" else event.key
        if self._held is not None or key in self._switch_keys or key == "enter":
            event.prevent_default()
            event.stop()
            await self._handle(events.Key(key, "\r" if key == "enter" else event.character))

    def _on_paste(self, event: events.Paste) -> None:
        if self._held is not None:  # Else `PlainInput`'s handler pastes it.
            event.prevent_default()
            event.stop()
            self._held.append(events.Paste(event.text))

    async def _handle(self, event: events.Key) -> None:
        if self._held is not None:
            self._held.append(event)
        elif event.key in self._switch_keys:
            self._held = []
            self.post_message(self.Switch(self, event.key))
        elif event.key == "enter":
            await self.action_submit()
        elif event.is_printable and event.character:
            self._put(event.character)
        else:  # The box's own keys (Backspace, arrows, …), as their bindings would run them.
            await self.press_key(event.key)

    async def press_key(self, key: str) -> None:
        """Run the box's own binding for `key` (Backspace, Ctrl+U, …) at once: for a key pressed
        on a part of the screen that takes no text and meant for this box, in turn with the
        characters typed around it."""
        for binding in self._bindings.key_to_bindings.get(key, []):
            await self.run_action(binding.action)
            break

    def hold(self) -> None:
        """Keep the keys and pastes typed from now on until `release`, as after a switch key:
        for a key whose move opens another conversation in this box (F6), which the keys typed
        behind it would otherwise reach first, a reply going to the customer being left."""
        if self._held is None:
            self._held = []

    def hold_paste(self, text: str) -> bool:
        """`text` typed elsewhere for this box, kept with the held keys; False: none are held."""
        if self._held is None:
            return False
        self._held.append(events.Paste(text))
        return True

    def hold_key(self, key: str) -> bool:
        """`key`, one of the box's own (Backspace, Ctrl+U, …), pressed elsewhere for this box,
        kept with the held keys; False: none are held."""
        if self._held is None:
            return False
        self._held.append(events.Key(key, None))
        return True

    def take_held_text(self) -> str:
        """What the held keys and pastes typed, as text, and no more holding: for a dialog the
        key that started holding opened (Ctrl+F's search). Other keys (Enter) are dropped."""
        held, self._held = self._held or [], None
        return "".join(
            event.text if isinstance(event, events.Paste)
            else event.character if event.is_printable and event.character else ""
            for event in held
        )  # fmt: skip

    async def release(self, *, made: bool = True) -> None:
        """The switch is made (`made`) or declined: what was typed after it, in order, into the
        box as it is now. Declined, its Enters are dropped: words meant for a note must not go
        out as a reply. A second switch among them holds the rest again."""
        held, self._held = self._held or [], None
        for n, event in enumerate(held):
            if self._held is not None:
                self._held.extend(held[n:])
                return
            if isinstance(event, events.Paste):
                self.paste(event.text)
            elif made or event.key != "enter":
                await self._handle(event)

    async def action_submit(self) -> None:
        # Keys typed after this Enter go after the words it sends, wherever the cursor was: in
        # a burst they reach the box before the words are taken off its front, and typed inside
        # them ("brakes wo|rn", Enter, "next") they left "brakes wonextrn", sent again by the
        # next Enter.
        self.cursor_position = len(self.value)
        validation = self.validate(self.value) if "submitted" in self.validate_on else None
        revision = self.guard.entered()
        self.post_message(self.Submitted(self, self.value, validation, revision))

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
        if not is_blank(words):  # A blank box refused leaves nothing to be sent twice.
            self.guard.kept()
