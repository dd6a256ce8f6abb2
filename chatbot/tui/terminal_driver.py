"""The terminal driver, with pastes cleaned before Textual's parser reads them.

A terminal sends a paste between bracketed-paste markers as copied, escape characters included,
as xterm.js does in a browser (see `chatbot.paste`): a paste of "abc \\e[1mdef\\e[0m ghi" reached
the question box as "^[1mdef^[0m ghiabc", its words out of order and its codes as text. Textual
makes its parser by name inside `LinuxDriver`'s input thread, and takes no other parser: the
driver here points that name at one that cleans each paste first.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._xterm_parser import XTermParser
from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from chatbot.paste import PasteFilter


class PasteCleaningParser(XTermParser):
    """Textual's parser, fed the keys with the inside of each bracketed paste cleaned."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._pastes = PasteFilter()

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # The end of the input: the parser's own signal.
            return super().feed(data)
        cleaned = self._pastes.feed(data)
        # All held back (a paste's end marker cut in two): nothing to parse yet, and an empty
        # feed would end the input.
        return super().feed(cleaned) if cleaned else ()


class TerminalDriver(LinuxDriver):
    """`LinuxDriver` reading the terminal through `PasteCleaningParser`."""

    def run_input_thread(self) -> None:
        linux_driver.XTermParser = PasteCleaningParser  # type: ignore[attr-defined]
        super().run_input_thread()
