"""A customer's page opened while the database is out says "The help desk cannot open now" (its
session's process could not start). It stayed so after the database was back, until the visitor
knew to reload: it now tries again by itself a minute later, as a full server's page does,
asking the server first (`/healthz`) and waiting, saying why, while the database is still out.
The page's clock is Playwright's, moved on by hand: the test waits out no minute."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import BrowserContext

from tests.web.harness import Served, settled, wait_for
from tests.web.outage_helpers import Database, own_database, serve

CANNOT_OPEN = "The help desk cannot open now"
WAITING = (
    "The help desk cannot reach its database just now. This page goes on by itself once it can."
)


@pytest.fixture
def database() -> Iterator[Database]:
    yield from own_database()


@pytest.fixture
def served(tmp_path: Path, database: Database) -> Iterator[Served]:
    server = serve(tmp_path / "site", database)
    yield server
    server.stop()


def test_a_page_that_could_not_open_in_an_outage_opens_by_itself_once_it_is_over(
    served: Served, database: Database, context: BrowserContext
) -> None:
    database.down()
    page = context.new_page()
    page.clock.install()  # Runs as the real one until moved on.
    page.goto(served.url + "/")
    page.wait_for_selector("body.-closed", state="attached", timeout=60_000)
    dialog = page.locator(".closed-dialog")
    why = page.locator(".closed-dialog .why")
    # It says why at once, as a returning customer's page does (it said only "cannot open now").
    wait_for(lambda: why.inner_text() == WAITING, what="the page to say why", timeout=10)
    assert CANNOT_OPEN in dialog.inner_text()
    assert page.locator(".closed-dialog a").inner_text() == "Try again"

    page.clock.fast_forward(61_000)  # A minute on: it asks the server, which says why not yet.
    assert httpx.get(served.url + "/healthz").status_code == 503
    wait_for(lambda: why.inner_text() == WAITING, what="the page to say it waits", timeout=10)
    assert page.url == served.url + "/" and "-closed" in page.evaluate("document.body.className")

    database.up()  # Back: the page goes by itself, and the chat opens.
    page.wait_for_selector("body:not(.-closed)", state="attached", timeout=30_000)
    settled(page)
    assert not page.locator(".closed-dialog").is_visible()
    assert [s.area for s in served.sessions()] == ["chat"]
