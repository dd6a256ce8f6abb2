"""`helpdesk users ...` on a real database file: the command line's `main` in this process, with
stdin, stdout and stderr of its own. These tests look at the exit status and the output only,
which a separate process (0.25 CPU-s to start, each) would not change; the password comes from a
stdin that is no terminal, as from a pipe."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.desk.service import DeskService
from chatbot.store.sqlite import SQLiteStore
from tests.accounts.helpers import Helpdesk, Ran


class Terminal(io.StringIO):
    """A stdin that says it is a terminal, so the password is asked for with `getpass`."""

    def isatty(self) -> bool:
        return True


class Typist:
    """Stands in for `getpass.getpass`: types `password` at each prompt, and notes the prompts."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.prompts: list[str] = []

    def __call__(self, prompt: str = "Password: ") -> str:
        self.prompts.append(prompt)
        return self.password


@pytest.fixture
def helpdesk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Helpdesk:
    db = tmp_path / "helpdesk.sqlite3"
    SQLiteStore.open(db).close()  # The desk's database: only `users add` would make one.
    monkeypatch.setenv("HELPDESK_DB", str(db))

    def run(*args: str, stdin: str = "", terminal: bool = False) -> Ran:
        monkeypatch.setattr("sys.stdin", (Terminal if terminal else io.StringIO)(stdin))
        try:
            code = main(["users", *args])
        except SystemExit as exit:  # What argparse does with a command line it refuses.
            code = exit.code if isinstance(exit.code, int) else 1
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def test_add_list_passwd_rm(helpdesk: Helpdesk) -> None:
    added = helpdesk("add", "Ana", "--role", "admin", "--display-name", "Ana P.",
                     "--password-stdin", stdin="correct horse\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "added ana  admin  Ana P."
    assert "correct horse" not in added.stdout + added.stderr
    listed = helpdesk("list")
    assert listed.stdout.splitlines() == ["ana  admin  Ana P."]
    changed = helpdesk("passwd", "ana", "--password-stdin", stdin="battery staple\n")
    assert changed.returncode == 0 and "sessions have ended" in changed.stdout
    removed = helpdesk("rm", "ana")
    assert removed.returncode == 0
    assert helpdesk("list").stdout == ""


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["add", "ana", "--role", "agent"], "", "no terminal to ask for the password on"),
        (["add", "ana", "--role", "agent", "--password-stdin"], "", "no password on stdin"),
        (["add", "ana", "--role", "agent", "--password-stdin"], "short\n", "shorter than 8"),
        (["add", "ana", "--role", "boss", "--password-stdin"], "x\n", "invalid choice"),
        (["rm", "nobody"], "", "no account is named 'nobody'"),
        (["edit", "ana", "--display-name", "A\x07"], "", "control character (\\x07)"),
        (["edit", "ana", "--role", "agent"], "", "no account is named 'ana'"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    helpdesk: Helpdesk, args: list[str], stdin: str, message: str
) -> None:
    result = helpdesk(*args, stdin=stdin)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "Al ex", "--role", "agent"], "account name 'Al ex' is not allowed"),
        (["add", "bo", "--role", "agent", "--display-name", " "], "display name is empty"),
        (["add", "ANA", "--role", "agent"], "account 'ana' exists already"),
        (["passwd", "nobody"], "no account is named 'nobody'"),
    ],
)
def test_what_is_wrong_besides_the_password_is_said_before_asking_for_it(
    helpdesk: Helpdesk, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    """On a terminal the password is typed twice: a bad name, or an account that exists (or
    does not, for passwd), is said first, and the password is never asked for."""
    assert helpdesk("add", "ana", "--role", "agent", "--password-stdin",
                    stdin="correct horse\n").returncode == 0  # fmt: skip
    typist = Typist("long enough")
    monkeypatch.setattr("getpass.getpass", typist)
    result = helpdesk(*args, terminal=True)
    assert (result.returncode, typist.prompts) == (2, [])
    assert message in result.stderr


def test_a_short_password_is_said_before_it_is_asked_again(
    helpdesk: Helpdesk, monkeypatch: pytest.MonkeyPatch
) -> None:
    typist = Typist("short")
    monkeypatch.setattr("getpass.getpass", typist)
    result = helpdesk("add", "ana", "--role", "agent", terminal=True)
    assert (result.returncode, typist.prompts) == (2, ["Password: "])
    assert "password is shorter than 8 characters" in result.stderr
    typist.password = "long enough"
    assert helpdesk("add", "ana", "--role", "agent", terminal=True).returncode == 0
    assert typist.prompts[1:] == ["Password: ", "Password again: "]


def test_an_agent_holding_claims_is_not_renamed_from_under_them(
    helpdesk: Helpdesk, tmp_path: Path
) -> None:
    # Claims are kept under the display name: renamed, Ana lost hers (her console showed none,
    # and "Ana P. owns this conversation" refused her replies) and her customers waited.
    added = helpdesk("add", "ana", "--role", "agent", "--display-name", "Ana P.",
                     "--password-stdin", stdin="correct horse\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    desk = DeskService(SQLiteStore.open(tmp_path / "helpdesk.sqlite3"))
    try:
        first = desk.talk_to_person(None).conversation.id
        second = desk.talk_to_person(None).conversation.id
        desk.claim(first, agent="Ana P.")
        desk.claim(second, agent="Ana P.")
        refused = helpdesk("edit", "ana", "--display-name", "Ana Q.")
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr == (
            f"helpdesk: error: ana holds 2 conversations as 'Ana P.' (#{first}, #{second}): "
            "resolve or hand them back first, or they stay with a name nobody signs in as\n"
        )
        assert helpdesk("list").stdout.splitlines() == ["ana  agent  Ana P."]
        desk.resolve(first, agent="Ana P.")
        desk.hand_back(second, agent="Ana P.")
    finally:
        desk.close()
    renamed = helpdesk("edit", "ana", "--display-name", "Ana Q.")
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout == "now ana  agent  Ana Q.; their sessions have ended\n"
    taken = helpdesk("add", "ad", "--role", "admin", "--display-name", "ana q.",
                     "--password-stdin", stdin="correct horse\n")  # fmt: skip
    assert taken.returncode == 2 and "is account 'ana''s already" in taken.stderr


@pytest.mark.parametrize("change", [("rm", "bo"), ("edit", "bo", "--role", "editor")])
def test_an_agent_removed_or_made_an_editor_gives_their_claims_back(
    helpdesk: Helpdesk, tmp_path: Path, change: tuple[str, ...]
) -> None:
    # Their customers kept reading "Bo (support agent) is helping you" with nobody able to
    # reply: the claim stayed under a name no agent signs in as.
    added = helpdesk("add", "bo", "--role", "agent", "--display-name", "Bo",
                     "--password-stdin", stdin="correct horse\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    desk = DeskService(SQLiteStore.open(tmp_path / "helpdesk.sqlite3"))
    try:
        held = desk.talk_to_person(None).conversation.id
        resolved = desk.talk_to_person(None).conversation.id
        desk.claim(held, agent="Bo")
        desk.claim(resolved, agent="Bo")
        desk.resolve(resolved, agent="Bo")
        changed = helpdesk(*change)
        assert changed.returncode == 0, changed.stderr
        assert changed.stdout.endswith(
            f"; 1 conversation they held went back to the queue (#{held})\n"
        )
        assert [item.conversation_id for item in desk.queue()] == [held]
        assert desk.conversation(resolved).state.value == "resolved"
    finally:
        desk.close()


def test_an_agent_made_an_admin_keeps_their_claims(helpdesk: Helpdesk, tmp_path: Path) -> None:
    added = helpdesk("add", "bo", "--role", "agent", "--password-stdin", stdin="correct horse\n")
    assert added.returncode == 0, added.stderr
    desk = DeskService(SQLiteStore.open(tmp_path / "helpdesk.sqlite3"))
    try:
        held = desk.talk_to_person(None).conversation.id
        desk.claim(held, agent="bo")  # Without --display-name, it is the account's name.
        changed = helpdesk("edit", "bo", "--role", "admin")
        assert changed.stdout == "now bo  admin  bo; their sessions have ended\n"
        assert desk.conversation(held).agent == "bo"
    finally:
        desk.close()
