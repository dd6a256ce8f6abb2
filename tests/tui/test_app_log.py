"""While the app draws on the terminal, nothing logged writes to it: `helpdesk` logs warnings to
stderr, and a database outage wrote one a second over the agent console's header."""

from __future__ import annotations

import logging
import sys

import pytest

from tests.tui.conftest import SIZE, MakeApp


async def test_warnings_stay_off_the_terminal_while_the_app_runs(
    make_app: MakeApp, capsys: pytest.CaptureFixture[str]
) -> None:
    root = logging.getLogger()
    terminal = logging.StreamHandler(sys.stderr)  # What `helpdesk` sets up before the app.
    root.addHandler(terminal)
    try:
        app = make_app("agent", bot=False)
        async with app.run_test(size=SIZE) as pilot:
            assert terminal not in root.handlers
            logging.getLogger("helpdesk.desk").warning("change feed: the database is away")
            await pilot.pause()
        assert terminal in root.handlers  # Given back once the terminal is the shell's again.
        logging.getLogger("helpdesk.desk").warning("after the app")
    finally:
        root.removeHandler(terminal)
    err = capsys.readouterr().err
    assert "the database is away" not in err
    assert "after the app" in err
