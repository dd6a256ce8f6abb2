"""The web driver of a browser session's app process.

Textual's web driver stops reading when its input ends, and the app runs on: a session whose
server was killed (`kill -9`, so it could not say "quit") kept its process for good, reading
the database. Its input is the server's pipe, so its end means the server is gone: the app quits
then, as it would on the server's word.
"""

from __future__ import annotations

from textual import messages
from textual.drivers.web_driver import WebDriver


class SessionDriver(WebDriver):
    """`WebDriver` whose app quits when the server's end of its input is gone."""

    def run_input_thread(self) -> None:
        super().run_input_thread()
        # Also after a quit the app asked for: a second ExitApp to an app closing is nothing.
        self._app.post_message(messages.ExitApp())
