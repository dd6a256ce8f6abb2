"""Sessions are forks of the preloaded zygote; if it dies, sessions still start, exec'd; neither
way does a customer's session get the Valen key, however it was set. An editor's session, which
needs it, is exec'd with it: sent through the zygote, it stayed in the zygote's memory."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext

from chatbot.web.server import secret_free
from tests.web.conftest import PASSWORD, VIEWPORT, make_site
from tests.web.harness import Served, alive, children, command_line, parent, start_server, wait_for
from tests.web.helpers import sign_in


def open_chat_session(context: BrowserContext, served: Served, before: int) -> int:
    page = context.new_page()
    page.goto(served.url + "/")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    sessions = wait_for(
        lambda: served.sessions() if len(served.sessions()) > before else [], what="the session"
    )
    return sessions[-1].pid  # The session lives as long as the context: to the test's end.


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.decode().partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


@pytest.fixture
def keyed_server(tmp_path: Path) -> Iterator[Served]:
    """A server started with a Valen key in its environment."""
    db, kb = make_site(tmp_path / "site")
    served = start_server(tmp_path / "site", db=db, kb=kb, environment={"VALEN_API_KEY": KEY})
    yield served
    served.stop()


KEY = "vk-test-0123456789-never-in-a-session"


def test_sessions_fork_from_the_zygote_and_start_without_it(
    browser: Browser, keyed_server: Served
) -> None:
    first, second = contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(2)]
    try:
        fresh_server = keyed_server
        zygotes = [
            pid for pid in children(fresh_server.process.pid)
            if "chatbot.web.zygote" in command_line(pid)
        ]  # fmt: skip
        assert len(zygotes) == 1
        forked = open_chat_session(first, fresh_server, 0)
        assert parent(forked) == zygotes[0]
        assert "chatbot.web.zygote" in command_line(forked)  # A fork: the zygote's command line.
        # Neither the zygote nor a customer's session holds the Valen key; the bot worker does.
        assert "VALEN_API_KEY" not in environ(zygotes[0])
        bots = [p for p in children(fresh_server.process.pid) if command_line(p)[-1:] == ["bot"]]
        assert environ(bots[0])["VALEN_API_KEY"] == KEY

        os.kill(zygotes[0], signal.SIGKILL)
        wait_for(lambda: not alive(zygotes[0]), what="the zygote to die")
        started = open_chat_session(second, fresh_server, 1)
        assert parent(started) == fresh_server.process.pid
        # The browser's time zone (the tests' UTC), from the page's cookie, comes last. (A new
        # customer's conversation is sent to their process once it has started.)
        assert command_line(started)[-5:] == ["chat", "--locale", "en", "--timezone", "UTC"]
        assert "chatbot.web.child" in command_line(started)
        assert "VALEN_API_KEY" not in environ(started)  # Exec'd without it too.
        assert KEY not in "".join(fresh_server.output)
        assert alive(forked)  # The session forked earlier lives on without its zygote.
    finally:
        for context in contexts:
            context.close()


def test_a_session_that_fails_to_start_ends_its_page(browser: Browser, tmp_path: Path) -> None:
    # A session whose process died before drawing anything (here: the installed code broken
    # after the zygote died) left its page on "helpdesk: connecting…" for good.
    hook = tmp_path / "hook"
    hook.mkdir()
    broken = tmp_path / "broken"
    (hook / "sitecustomize.py").write_text(
        f"import os, sys\nif os.path.exists({str(broken)!r}):\n"
        "    sys.exit('the installed code is broken')\n"
    )
    db, kb = make_site(tmp_path / "site")
    paths = [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]
    served = start_server(tmp_path / "site", db=db, kb=kb,
                          environment={"PYTHONPATH": os.pathsep.join(paths)})  # fmt: skip
    context = browser.new_context(viewport=VIEWPORT)
    try:
        zygotes = [
            pid for pid in children(served.process.pid)
            if "chatbot.web.zygote" in command_line(pid)
        ]  # fmt: skip
        [zygote] = zygotes
        os.kill(zygote, signal.SIGKILL)
        wait_for(lambda: not alive(zygote), what="the zygote to die")
        broken.touch()
        page = context.new_page()
        page.goto(served.url + "/")
        page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
        assert page.locator(".closed-dialog").is_visible()
        wait_for(lambda: served.sessions() == [], what="the session to be reported ended")
        assert "the installed code is broken" in "".join(served.output)
    finally:
        context.close()
        served.stop()


def test_the_valen_key_is_kept_from_sessions_however_its_name_is_cased(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The settings read `valen_api_key` as they read `VALEN_API_KEY`: a lower-case one reached
    every session's environment, where the filter looked for the upper-case name only."""
    from chatbot.config import environment_value
    from chatbot.web.server import secret_free

    inherited = {"valen_api_key": KEY, "Valen_Api_Key": KEY, "PATH": "/usr/bin"}
    assert secret_free(inherited) == {"PATH": "/usr/bin"}
    monkeypatch.delenv("VALEN_API_KEY", raising=False)
    monkeypatch.setenv("valen_api_key", KEY)
    assert environment_value("VALEN_API_KEY") == KEY  # The editor's sessions still get it.


def test_every_way_of_setting_the_key_is_kept_from_sessions() -> None:
    """The settings take the key from `HELPDESK_VALEN__API_KEY` and from a `HELPDESK_VALEN`
    section given as JSON too; only `VALEN_API_KEY` was left out of what sessions inherit."""
    section = json.dumps({"api_key": KEY, "replay": "only"})
    inherited = {
        "helpdesk_valen__api_key": KEY,
        "HELPDESK_VALEN": section,
        "PATH": "/usr/bin",
    }
    kept = secret_free(inherited)
    assert KEY not in repr(kept)
    assert kept == {"HELPDESK_VALEN": '{"replay": "only"}', "PATH": "/usr/bin"}
    assert secret_free({"HELPDESK_VALEN": "not json " + KEY}) == {}


def test_a_key_set_the_long_way_reaches_editors_only_and_never_through_the_zygote(
    browser: Browser, tmp_path: Path
) -> None:
    db, kb = make_site(tmp_path / "site")
    served = start_server(
        tmp_path / "site", db=db, kb=kb, environment={"HELPDESK_VALEN__API_KEY": KEY}
    )
    customer, editor = contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(2)]
    try:
        [zygote] = [
            pid for pid in children(served.process.pid)
            if "chatbot.web.zygote" in command_line(pid)
        ]  # fmt: skip
        chat = open_chat_session(customer, served, 0)
        assert parent(chat) == zygote
        for pid in (zygote, chat):
            assert KEY not in repr(environ(pid)), pid
        assert sign_in(editor.new_page(), served, "editor", "eddie", PASSWORD) == 200
        found = wait_for(
            lambda: [s for s in served.sessions() if s.account == "eddie"], what="the editor"
        )
        assert parent(found[0].pid) == served.process.pid  # Exec'd by the server, not forked.
        assert environ(found[0].pid)["VALEN_API_KEY"] == KEY
        assert KEY not in repr(environ(zygote))
        output = "".join(served.output)
        assert KEY not in output and "the Valen key is in" not in output
    finally:
        for context in contexts:
            context.close()
        served.stop()


def test_serve_warns_that_a_key_in_the_settings_file_is_read_by_every_session(
    tmp_path: Path,
) -> None:
    home = tmp_path / "site"
    db, kb = make_site(home)
    config = home / "config" / "helpdesk" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[valen]\napi_key = "{KEY}"\n')
    # Also with a key variable set (one left in the file after moving it, or an empty one):
    # the sessions read the file whatever the environment says.
    served = start_server(
        home, db=db, kb=kb, extra=["--bots", "0"], environment={"VALEN_API_KEY": "vk-other"}
    )
    served.stop()
    output = "".join(served.output)
    assert f"warning: the Valen key is in {config}, which every browser session" in output
    assert KEY not in output
