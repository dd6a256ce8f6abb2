"""The base of the app's dialogs: a modal screen that closes once."""

from __future__ import annotations

from typing import TypeVar

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen

ResultT = TypeVar("ResultT")


class Dialog(ModalScreen[ResultT]):
    """A modal screen whose second dismiss does nothing. Two presses of Enter (or y) in quick
    succession both reach the dialog before it has gone: the second dismiss ran the caller's
    callback again (a second claim, a second restore) and popped the screen beneath, which
    crashed the app when that was its last."""

    def dismiss(self, result: ResultT | None = None) -> AwaitComplete:
        if not self.is_active:
            return AwaitComplete()  # Already complete: there is nothing to wait for.
        return super().dismiss(result)
