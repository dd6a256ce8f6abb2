"""The terminal driver: pastes cleaned before Textual's parser reads them, and the app ended in
order when its terminal goes away or it is told to stop.

A terminal sends a paste between bracketed-paste markers as copied, escape characters included,
as xterm.js does in a browser (see `chatbot.paste`): a paste of "abc \\e[1mdef\\e[0m ghi" reached
the question box as "^[1mdef^[0m ghiabc", its words out of order and its codes as text. Textual
makes its parser by name inside `LinuxDriver`'s input thread, and takes no other parser: the
driver here points that name at one that cleans each paste first.

SIGHUP (the terminal closed: tmux's kill-session, an ssh connection dropped) and SIGTERM (`kill`,
a shutdown) killed the process where it stood, exit status 129 or 143: the app never unmounted,
so what was typed and not sent or saved (an agent's reply or note, an editor's passage) was lost.
Each now ends the app as a quit does, without the quit question: every screen unmounts (keeping
its drafts), claims stay as a quit keeping them leaves them, the agent's console counts as closed
at once (the app's unmount says so, as a quit does: the agent's next console no longer says, for
a minute, that this one is still open), and the exit status is still the shell's for that signal,
128 + its number (129, 143), so scripts and supervisors see what they saw before. A second signal
while the app ends kills it at once, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Iterable
from typing import IO, Any

from textual._xterm_parser import XTermParser
from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from chatbot.paste import PasteFilter

ENDING_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
"""The signals that end the app in order (each with the exit status 128 + its number)."""


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


class TerminalOutput:
    """The terminal as the driver's writer thread writes to it, once it may be gone: a write
    that fails (EIO from a terminal hung up) is dropped. Textual's writer thread died on the
    first such error, and the app then stopped for good on its next writes, waiting for room in
    the thread's queue: it never got as far as saving what was typed."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file

    def write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._file.write(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._file.flush()

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class TerminalDriver(LinuxDriver):
    """`LinuxDriver` reading the terminal through `PasteCleaningParser`, and ending the app in
    order on SIGHUP and SIGTERM."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._file is not None:
            self._file = TerminalOutput(self._file)  # type: ignore[assignment]
        self._signal_loop: asyncio.AbstractEventLoop | None = None
        self._ending = False

    def start_application_mode(self) -> None:
        super().start_application_mode()  # type: ignore[no-untyped-call]
        loop = asyncio.get_running_loop()
        # The loop's handlers, not `signal.signal`'s: the app is ended from the loop, in turn.
        # (Only the main thread may set them: an app run in another thread is not ended so.)
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            for signum in ENDING_SIGNALS:
                loop.add_signal_handler(signum, self._end, signum)
            self._signal_loop = loop

    def stop_application_mode(self) -> None:
        self._stop_handling_signals()
        super().stop_application_mode()

    def _stop_handling_signals(self) -> None:
        loop, self._signal_loop = self._signal_loop, None
        if loop is not None:
            for signum in ENDING_SIGNALS:
                with contextlib.suppress(ValueError, RuntimeError):
                    loop.remove_signal_handler(signum)

    def _end(self, signum: int) -> None:
        """End the app as a quit does, without asking (the terminal is gone, or the process
        was told to stop): its screens unmount, keeping what was typed."""
        # A second signal meanwhile takes the default action: it kills the process at once.
        self._stop_handling_signals()
        if signum == signal.SIGHUP:
            _terminal_gone()
        if not self._ending:
            self._ending = True
            self._app.exit(return_code=128 + signum)

    def run_input_thread(self) -> None:
        linux_driver.XTermParser = PasteCleaningParser  # type: ignore[attr-defined]
        try:
            super().run_input_thread()
        except OSError:
            # The terminal hung up under the input thread (EIO): ended as on SIGHUP, which a
            # terminal that was not this process's own never sends. (Textual's own handling
            # "panicked": a traceback, and the app gone without unmounting.)
            loop = self._signal_loop
            if loop is not None and not loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._end, signal.SIGHUP)


def _terminal_gone() -> None:
    """Standard output and error to /dev/null: the terminal is gone, and a line written there as
    the process ends (Python's own last flush) would fail and change its exit status."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            for stream in (sys.__stdout__, sys.__stderr__):
                if stream is not None:
                    with contextlib.suppress(OSError, ValueError):
                        os.dup2(null, stream.fileno())
        finally:
            os.close(null)
