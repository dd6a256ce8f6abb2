"""Accounts over a real SQLite file: hashing, checking, roles, sessions voided by changes."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from chatbot.accounts.models import Area, Role
from chatbot.accounts.service import AccountService
from chatbot.errors import HelpdeskError
from chatbot.store.sqlite_users import SQLiteUserStore
from chatbot.store.users import AccountExists, AccountNotFound

FAST = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
"""Real argon2id with small parameters, so each test hashes in a millisecond."""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "helpdesk.sqlite3"


@pytest.fixture
def service(db: Path) -> AccountService:
    return AccountService(SQLiteUserStore.open(db), hasher=FAST)


def test_a_password_is_stored_as_an_argon2id_hash_only(service: AccountService, db: Path) -> None:
    service.add("Ana", role=Role.AGENT, password="correct horse", display_name="Ana P.")
    raw = db.read_bytes()
    assert b"correct horse" not in raw
    stored = service.store.get_account("ana")
    assert stored is not None and stored.password_hash.startswith("$argon2id$")
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600


def test_authenticate_takes_the_right_password_only(service: AccountService) -> None:
    service.add("ana", role=Role.AGENT, password="correct horse", display_name="Ana P.")
    account = service.authenticate("ANA ", "correct horse")
    assert account is not None and account.display_name == "Ana P."
    assert service.authenticate("ana", "correct horsE") is None
    assert service.authenticate("nobody", "correct horse") is None
    assert service.authenticate("not a name!", "correct horse") is None
    assert service.authenticate("ana", "x" * 5000) is None


def test_names_fold_case_and_clash(service: AccountService) -> None:
    service.add("ana", role=Role.AGENT, password="correct horse")
    with pytest.raises(AccountExists):
        service.add("ANA", role=Role.EDITOR, password="correct horse")


@pytest.mark.parametrize(
    ("name", "display", "password", "message"),
    [
        ("ana smith", None, "correct horse", "not allowed"),
        ("", None, "correct horse", "not allowed"),
        ("ana", "Ana\x1b[2J", "correct horse", "control character"),
        ("ana", "   ", "correct horse", "display name is empty"),
        ("ana", "A" * 65, "correct horse", "longer than 64"),
        ("ana", None, "short", "shorter than 8"),
        ("ana", None, "p" * 1025, "longer than 1024"),
    ],
)
def test_bad_fields_are_one_line_errors(
    service: AccountService, name: str, display: str | None, password: str, message: str
) -> None:
    with pytest.raises(HelpdeskError, match=message):
        service.add(name, role=Role.AGENT, password=password, display_name=display)
    assert service.accounts() == []


def test_roles_open_their_areas() -> None:
    from chatbot.accounts.models import ALLOWED

    assert ALLOWED[Role.AGENT] == {Area.AGENT}
    assert ALLOWED[Role.EDITOR] == {Area.EDITOR}
    assert ALLOWED[Role.ADMIN] == {Area.AGENT, Area.EDITOR}


def test_password_role_and_display_name_changes_end_sessions(
    service: AccountService,
) -> None:
    epoch = service.add("ana", role=Role.AGENT, password="correct horse").session_epoch
    after_password = service.set_password("ana", "battery staple").session_epoch
    assert after_password == epoch + 1
    assert service.authenticate("ana", "correct horse") is None
    assert service.authenticate("ana", "battery staple") is not None
    # A session signed in under the old display name went on claiming under it.
    renamed = service.update("ana", display_name="Ana")
    assert renamed.session_epoch == after_password + 1 and renamed.display_name == "Ana"
    assert service.update("ana", role=Role.ADMIN).session_epoch == after_password + 2
    # The same name or role again changes nothing, and ends nothing.
    same = service.update("ana", display_name="Ana", role=Role.ADMIN)
    assert same.session_epoch == after_password + 2


def test_two_accounts_cannot_share_a_display_name(service: AccountService) -> None:
    # Claims are kept under the display name: a second "Ana P." owned the first one's claims.
    service.add("ana", role=Role.AGENT, password="correct horse", display_name="Ana P.")
    with pytest.raises(HelpdeskError) as error:
        service.add("ad", role=Role.ADMIN, password="correct horse", display_name="ana p.")
    assert str(error.value) == (
        "display name 'ana p.' is account 'ana''s already: conversations are claimed under it, "
        "so each account needs its own"
    )
    service.add("ad", role=Role.ADMIN, password="correct horse")
    with pytest.raises(HelpdeskError) as error:
        service.update("ad", display_name="ANA P.")
    assert str(error.value).startswith("display name 'ANA P.' is account 'ana''s already")
    assert service.account("ad").display_name == "ad"  # type: ignore[union-attr]
    assert service.update("ana", display_name="ana p.").display_name == "ana p."  # Its own.


def test_remove_and_missing_accounts(service: AccountService) -> None:
    service.add("ana", role=Role.AGENT, password="correct horse")
    service.remove("ana")
    assert service.account("ana") is None
    with pytest.raises(AccountNotFound):
        service.remove("ana")
    with pytest.raises(AccountNotFound):
        service.set_password("ana", "battery staple")


def test_a_weaker_hash_is_replaced_at_the_next_sign_in(db: Path) -> None:
    AccountService(SQLiteUserStore.open(db), hasher=FAST).add(
        "ana", role=Role.AGENT, password="correct horse"
    )
    stronger = PasswordHasher(time_cost=2, memory_cost=2048, parallelism=1)
    service = AccountService(SQLiteUserStore.open(db), hasher=stronger)
    before = service.store.get_account("ana")
    assert before is not None and service.authenticate("ana", "correct horse") is not None
    after = service.store.get_account("ana")
    assert after is not None and after.password_hash != before.password_hash
    assert not stronger.check_needs_rehash(after.password_hash)
    assert after.account.session_epoch == before.account.session_epoch  # Still signed in.


def test_the_session_secret_is_made_once_and_shared(db: Path) -> None:
    """Processes starting together agree on one key (the first insert wins)."""
    secrets: list[bytes] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4, timeout=60)

    def start() -> None:
        # A thread that fails must not leave the others waiting at the barrier for ever: it
        # breaks the barrier, and its error is the test's.
        try:
            store = SQLiteUserStore.open(db)
            try:
                barrier.wait()
                secrets.append(store.session_secret())
            finally:
                store.close()
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below.
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not [e for e in errors if not isinstance(e, threading.BrokenBarrierError)], errors
    assert len(secrets) == 4 and len(set(secrets)) == 1 and len(secrets[0]) == 32


def test_accounts_share_the_conversations_database_and_its_migrations(db: Path) -> None:
    from chatbot.store.schema import MIGRATIONS
    from chatbot.store.sqlite import SQLiteStore

    conversations = SQLiteStore.open(db)
    accounts = SQLiteUserStore.open(db)
    accounts.add_account(name="ana", display_name="Ana", role=Role.AGENT, password_hash="x")
    conversation = conversations.create_conversation()
    (version,) = conversations._db.execute("PRAGMA user_version").fetchone()
    assert version == len(MIGRATIONS)  # The accounts' tables are a migration of their own.
    reopened = SQLiteUserStore.open(db)  # Opening again keeps the accounts.
    assert [a.name for a in reopened.accounts()] == ["ana"]
    assert SQLiteStore.open(db).conversation(conversation.id).id == conversation.id
