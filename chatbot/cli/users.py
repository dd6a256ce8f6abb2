"""`helpdesk users ...`: the accounts that sign in to `helpdesk serve` (agents, editors, admins).

Passwords are asked for twice on the terminal, or read as one line from stdin with
`--password-stdin` (for scripts); they are never taken as an argument, which `ps` would show.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from chatbot.accounts.roles import ALLOWED, Area, Role
from chatbot.cli.options import add_db_option, settings_from, terminal_width
from chatbot.cli.output import table
from chatbot.errors import HelpdeskError
from chatbot.text import counted, not_utf8, printable

# The account service (pydantic, password hashing) is imported when a command runs, so that
# registering these commands costs `helpdesk --help` nothing.
if TYPE_CHECKING:
    from chatbot.accounts.models import Account
    from chatbot.accounts.service import AccountService


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    common = argparse.ArgumentParser(add_help=False)
    add_db_option(common)
    parser = commands.add_parser("users", help="accounts for `helpdesk serve`: add, list, rm, ...")
    sub = parser.add_subparsers(title="users commands", metavar="USERS_COMMAND",
                                parser_class=type(parser))  # fmt: skip

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    roles = [role.value for role in Role]
    p = command("add", "add an account (asks for its password)")
    p.add_argument("name", help="sign-in name: letters, digits, '.', '_', '@', '-'")
    p.add_argument(
        "--role",
        required=True,
        choices=roles,
        help="agent: the agent console; editor: the knowledge base; admin: both",
    )
    p.add_argument("--display-name", metavar="TEXT",
                   help="the name customers see on replies (default: NAME)")  # fmt: skip
    _password_option(p)
    p.set_defaults(func=run_add)

    p = command("list", "list accounts: name, role, display name")
    p.set_defaults(func=run_list)

    p = command("rm", "remove an account (its sessions end at once)")
    p.add_argument("name", help="the account's sign-in name")
    p.set_defaults(func=run_rm)

    p = command("passwd", "set an account's password (its sessions end at once)")
    p.add_argument("name", help="the account's sign-in name")
    _password_option(p)
    p.set_defaults(func=run_passwd)

    p = command("edit", "change an account's display name or role (its sessions end at once)")
    p.add_argument("name", help="the account's sign-in name")
    p.add_argument("--role", choices=roles, help="the new role (as for `users add`)")
    p.add_argument("--display-name", metavar="TEXT", help="the new name customers see on replies")
    p.set_defaults(func=run_edit)


def _password_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password as one line from stdin instead of asking",
    )


def _service(
    args: argparse.Namespace, *, create: bool = False, migrate: bool = True
) -> AccountService:
    """The accounts; only `users add` (`create`) makes the database if it is not there, and only
    the commands that write (`migrate`) upgrade an older schema: `list` refuses it."""
    from chatbot.assembly import open_accounts, require_database

    settings = settings_from(args, knowledge_base=False)
    if not create:
        require_database(settings)
    return open_accounts(settings, migrate=migrate)


def read_password(args: argparse.Namespace, name: str) -> str:
    """The password for the account `name`: one line from stdin (`--password-stdin`), or typed
    twice on the terminal."""
    from chatbot.accounts.models import check_password

    if args.password_stdin:
        line = _utf8(_stdin_line)
        if not line:
            raise HelpdeskError("no password on stdin")
        return line.removesuffix("\n").removesuffix("\r")
    if not sys.stdin.isatty():
        raise HelpdeskError("no terminal to ask for the password on: use --password-stdin")
    first = _typed("Password: ", name)
    check_password(first)  # Said before asking again: a short one need not be typed twice.
    if _typed("Password again: ", name) != first:
        raise HelpdeskError("the two passwords differ; nothing changed")
    return first


def _stdin_line() -> str:
    """One line of standard input, read as UTF-8 whatever the locale says: under
    `PYTHONIOENCODING=ascii` a UTF-8 password ("pässwort") was refused as not UTF-8. A stdin with
    no bytes beneath (a program's own text stream) is read as it is."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.readline()
    line: bytes = stream.readline()
    return line.decode("utf-8")  # Bytes that are not UTF-8: UnicodeDecodeError, which `_utf8` says.


def _typed(prompt: str, name: str) -> str:
    """What was typed at `prompt` on the terminal. Ctrl+D there (the end of input) is one line
    naming the account, as nothing was given: `getpass` raised EOFError, a traceback. Ctrl+C
    ends the command (status 130, `main`). Either way `getpass`, which ends its prompt's line
    only once it has read one, left it open: the error, or the shell's prompt, went on it."""
    try:
        return _utf8(lambda: getpass.getpass(prompt), prompted=True)
    except EOFError:
        _end_prompt_line()
        raise HelpdeskError(f"no password given for {name!r}; nothing changed") from None
    except KeyboardInterrupt:
        _end_prompt_line()
        raise


def _end_prompt_line() -> None:
    """End the line of a prompt `getpass` left open, where it wrote it: the terminal itself
    (/dev/tty), or stderr when there is none to open."""
    try:
        with open("/dev/tty", "w") as terminal:
            terminal.write("\n")
    except OSError:
        print(file=sys.stderr)


def _utf8(read: Callable[[], str], *, prompted: bool = False) -> str:
    """What `read` read, refused unless UTF-8. Bytes that are not reach Python as an error
    (UnicodeDecodeError: the terminal `getpass` reads) or as lone surrogates (a pipe read with
    surrogateescape, as under a C.UTF-8 locale), which the password hash could not encode:
    both were tracebacks. `prompted`: `read` asked on the terminal, and on such an error left
    its prompt's line open, which the error would go on."""
    try:
        text: str | None = read()
    except UnicodeDecodeError:
        text = None
        if prompted:
            _end_prompt_line()
    if text is None or not_utf8(text) is not None:
        raise HelpdeskError("password is not valid UTF-8")
    return text


def _line(account: Account) -> str:
    return f"{account.name}  {account.role.value}  {printable(account.display_name)}"


def run_add(args: argparse.Namespace) -> int:
    from chatbot.accounts.models import check_display_name, check_name

    # Everything that can be wrong without the password is said before asking for it (twice,
    # on a terminal): a name that is not allowed, a display name, an account that exists.
    name = check_name(args.name)
    check_display_name(args.display_name if args.display_name is not None else name)
    service = _service(args, create=True)
    try:
        if service.account(name) is not None:
            raise HelpdeskError(f"account {name!r} exists already")
        password = read_password(args, name)
        account = service.add(
            name, role=Role(args.role), password=password, display_name=args.display_name
        )
    finally:
        service.close()
    print(f"added {_line(account)}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    service = _service(args, migrate=False)
    try:
        accounts = service.accounts()
    finally:
        service.close()
    if not accounts:
        print("no accounts yet: add one with `helpdesk users add NAME --role admin`",
              file=sys.stderr)  # fmt: skip
    rows = [(a.name, a.role.value, printable(a.display_name)) for a in accounts]
    for line in table(("name", "role", "display name"), rows, terminal_width()):
        print(line)
    return 0


def run_rm(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        before = service.account(args.name)
        service.remove(args.name)
    finally:
        service.close()
    print(f"removed {args.name.strip().lower()}" + _released(before, args))
    return 0


def _released(account: Account | None, args: argparse.Namespace) -> str:
    """Put back in the queue what `account`, no longer an agent, holds: nobody else could reply
    in those conversations, and their customers would wait on someone who cannot sign in.
    Returns what to add to the command's line."""
    from chatbot.assembly import open_service

    if account is None or Area.AGENT not in ALLOWED[account.role]:
        return ""
    desk = open_service(settings_from(args, knowledge_base=False))
    try:
        released = desk.release_claims(account.display_name)
    finally:
        desk.close()
    if not released:
        return ""
    listed = ", ".join(f"#{number}" for number in released)
    held = counted(len(released), "conversation")
    return f"; {held} they held went back to the queue ({listed})"


def run_passwd(args: argparse.Namespace) -> int:
    from chatbot.accounts.models import check_name

    name = check_name(args.name)
    service = _service(args)
    try:
        if service.account(name) is None:  # Said before the password is typed twice for nothing.
            raise HelpdeskError(f"no account is named {name!r}")
        password = read_password(args, name)
        account = service.set_password(name, password)
    finally:
        service.close()
    print(f"password changed for {account.name}; their sessions have ended")
    return 0


def _no_claims_under(account: Account | None, args: argparse.Namespace) -> None:
    """Conversations are claimed under an agent's display name: renamed, the agent would no
    longer own those they hold, and their customers would wait for a name nobody signs in as."""
    from chatbot.accounts.models import check_display_name
    from chatbot.assembly import open_service

    if account is None or check_display_name(args.display_name) == account.display_name:
        return
    desk = open_service(settings_from(args, knowledge_base=False))
    try:
        claims = desk.claimed_by(account.display_name)
    finally:
        desk.close()
    if claims:
        listed = ", ".join(f"#{number}" for number in claims)
        raise HelpdeskError(
            f"{account.name} holds {counted(len(claims), 'conversation')} as "
            f"{account.display_name!r} ({listed}): resolve or hand them back first, or they stay "
            "with a name nobody signs in as"
        )


def run_edit(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        before = service.account(args.name)
        if args.display_name is not None:
            _no_claims_under(before, args)
        account = service.update(
            args.name,
            display_name=args.display_name,
            role=None if args.role is None else Role(args.role),
        )
    finally:
        service.close()
    ended = before is not None and account.session_epoch != before.session_epoch
    released = "" if Area.AGENT in ALLOWED[account.role] else _released(before, args)
    print(f"now {_line(account)}" + ("; their sessions have ended" if ended else "") + released)
    return 0
