"""Options shared by the subcommands, and turning them into settings."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from chatbot.errors import HelpdeskError
from chatbot.paths import default_database, default_knowledge_base
from chatbot.text import printable

if TYPE_CHECKING:
    from chatbot.config import Settings


class HelpFormatter(argparse.HelpFormatter):
    """Help wrapped between words only: argparse's `textwrap` also broke at hyphens and inside
    long words, so `--help` showed a default path as `/tmp/qa-` on one line and the rest on the
    next, and a path copied from it was not the path."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        text = self._whitespace_matcher.sub(" ", text).strip()
        return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        text = self._whitespace_matcher.sub(" ", text).strip()
        return textwrap.fill(text, width, initial_indent=indent,
                             subsequent_indent=indent, break_on_hyphens=False,
                             break_long_words=False)  # fmt: skip


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr, exit status 2, and whose help
    never breaks a line inside a word or a path (`HelpFormatter`); every parser and subparser of
    `helpdesk` is one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


ID_MAX = 2**63 - 1
"""The largest id a row can have: SQLite's INTEGER and PostgreSQL's BIGINT are 64-bit signed."""


def _whole(text: str, largest: int) -> int | None:
    """`text` as a whole number from 1 to `largest`, else None. ASCII digits alone: `int` also
    takes "١٣" (Arabic-Indic), "1_0", "+3" and " 3\n", so `show ٣` opened conversation 3."""
    if not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if 1 <= value <= largest else None


def row_id(text: str) -> int:
    """An id as typed (`conversations show ID`, `--conversation ID`): a whole number a row can
    have. A plain `int` let 10**23 through to SQLite, which raised OverflowError (a traceback)
    where PostgreSQL said "not found"; refused here, both backends say the same."""
    if (value := _whole(text, ID_MAX)) is None:
        raise argparse.ArgumentTypeError(
            f"invalid id {text!r}: expected a whole number from 1 to {ID_MAX}"
        )
    return value


def positive_int(text: str) -> int:
    """A count such as `--limit N`, 1 or more: `--limit -1` listed nothing and exited 0, as if
    there were nothing to list."""
    if (value := _whole(text, sys.maxsize)) is None:
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}: expected a whole number, 1 or more"
        )
    return value


def path_argument(text: str) -> Path:
    """A file or folder named on the command line, refused when empty: `Path("")` is the
    current directory, so `kb import ""` imported whatever folder the command ran in."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty")
    return Path(text)


def _literal(path: Path) -> str:
    """A path as argparse help shows it: help texts are %-formatted, and a path may hold a %."""
    return str(path).replace("%", "%%")


BUILT_IN = {
    "engine.threshold": "0.7",
    "engine.k": "5",
    "bot.concurrency": "8",
    "valen.cache": "the recorded answers shipped with helpdesk",
    "valen.replay": "on",
    "valen.dialect": "decisions",
    "web.host": "127.0.0.1",
    "web.port": "8000",
    "web.bots": "1",
}
"""The built-in values of the settings an option's help names (`chatbot.config`'s defaults, which
a test compares): help is built without loading the settings (pydantic, ~0.2 s), so it cannot say
what a settings file or the environment set instead."""


def setting_default(setting: str) -> str:
    """What an option's help says of its default: the setting, and its built-in value. "(default
    0.7)" was wrong wherever `[engine] threshold = 0.75` was configured, "default: decisions"
    wherever `[valen] dialect = "systemone"` was. (`--kb` and `--db`, whose built-in values are
    paths in the user's data folder, say theirs in their own words.)"""
    return f"default: setting {setting}, {BUILT_IN[setting]} unless configured"


def kb_help() -> str:
    """The help for `--kb`, naming where the user's own copy of the passages lives."""
    return (
        "knowledge-base directory or postgresql:// URL (setting knowledge_base.path, env "
        f"HELPDESK_KB; default: {_literal(default_knowledge_base())} unless configured, copied "
        "from the shipped passages on first use)"
    )


def dialect_help() -> str:
    """The help for `--dialect`, which `valen check` takes too."""
    return f"Valen wire dialect (env VALEN_DIALECT; {setting_default('valen.dialect')})"


def add_engine_options(parser: argparse.ArgumentParser, *, knowledge_base: bool = True) -> None:
    """The engine options every engine-running subcommand takes, each defaulting to the settings."""
    # SUPPRESS leaves an option unset unless given, so `helpdesk --kb X chat` and
    # `helpdesk chat --kb X` both work: a subcommand's default never overwrites the top level's.
    group = parser.add_argument_group("engine options", argument_default=argparse.SUPPRESS)
    if knowledge_base:
        group.add_argument(
            "--kb",
            metavar="PATH|URL",
            help=kb_help(),
        )
    # Kept as typed, not `type=Path`: the settings refuse an empty one, which a Path would have
    # turned into "." (the current directory) first.
    group.add_argument(
        "--cache",
        metavar="PATH",
        help=f"replay cache file (env VALEN_CACHE; {setting_default('valen.cache')})",
    )
    group.add_argument(
        "--replay",
        choices=["on", "off", "record"],
        help="on: recorded answers only; off: live; record: live + save (env VALEN_REPLAY; "
        f"{setting_default('valen.replay')})",
    )
    group.add_argument("--base-url", metavar="URL", help="Valen base URL (env VALEN_BASE_URL)")
    group.add_argument(
        "--dialect",
        choices=["decisions", "systemone"],
        help=dialect_help(),
    )
    group.add_argument(
        "--threshold",
        type=float,
        metavar="P",
        help=f"answer when the top probability reaches P ({setting_default('engine.threshold')})",
    )
    group.add_argument(
        "-k",
        type=int,
        metavar="N",
        help=f"passages to retrieve and judge ({setting_default('engine.k')})",
    )


def add_locale_option(parser: argparse.ArgumentParser, *, customer: bool = False) -> None:
    """`--locale`: the agent console's and editor's language (`ui.locale`); for `helpdesk chat`,
    whose terminal is a customer's, the language their new chat starts in."""
    if customer:
        help = ("language a new chat starts in: en or zh (default: the terminal's language; the "
                "first message, or F9, then decides)")  # fmt: skip
    else:
        help = ("language of the agent console and editor: en or zh (setting ui.locale; default: "
                "the terminal's language; customers' chats follow each conversation)")  # fmt: skip
    parser.add_argument("--locale", metavar="LOCALE", default=argparse.SUPPRESS, help=help)


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        default=argparse.SUPPRESS,
        help="SQLite file, sqlite:///path or postgresql://user@host:5432/db (setting store.db, "
        f"env HELPDESK_DB; default: {_literal(default_database())} unless configured)",
    )


def settings_from(args: argparse.Namespace, *, knowledge_base: bool = True) -> Settings:
    """Settings from file and environment, with whichever options were given on top. Without
    `knowledge_base` (a command that never reads it), the default one is not copied from the
    shipped passages when it is missing: such a command makes nothing."""
    # Imported here: pydantic-settings costs ~0.2 s, which `helpdesk --help` need not pay.
    from chatbot.config import InvalidSetting, load_settings
    from chatbot.knowledge_base.seed import no_seeding

    if not knowledge_base:
        with no_seeding():
            return settings_from(args)

    overrides: dict[str, dict[str, Any]] = {}
    flags: dict[str, str] = {}
    """The option each given setting came from: "valen.base_url" -> "--base-url"."""

    def put(section: str, key: str, option: str) -> None:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value is not None:
            overrides.setdefault(section, {})[key] = value
            flags[f"{section}.{key}"] = option

    put("knowledge_base", "path", "--kb")
    put("store", "db", "--db")
    put("valen", "cache", "--cache")
    put("valen", "replay", "--replay")
    put("valen", "base_url", "--base-url")
    put("valen", "dialect", "--dialect")
    put("engine", "threshold", "--threshold")
    put("engine", "k", "-k")
    put("bot", "concurrency", "--concurrency")
    put("ui", "locale", "--locale")
    # Known before the settings are: a refused value (a base URL with the key in its path) is
    # echoed in the refusal.
    hide_key(os.environ.get("VALEN_API_KEY", ""))
    try:
        settings = load_settings(**overrides)
    except InvalidSetting as error:
        # Named as typed: "invalid option --threshold: ..." rather than the setting it sets.
        if error.setting not in flags:
            raise
        raise HelpdeskError(f"invalid option {flags[error.setting]}: {error.problem}") from None
    key = settings.valen.api_key
    hide_key(key.get_secret_value() if key is not None else "")
    _check_db(settings, flags)
    if settings.valen.replay != "on":
        require_sendable_key(settings)
    return settings


def _check_db(settings: Settings, flags: dict[str, str]) -> None:
    """Refuse a `--db` or `HELPDESK_DB` no store can open, or a PostgreSQL `--db` or `--kb` (or
    `HELPDESK_KB`) URL naming no database, before anything runs, naming it as it was given
    (`store.db: unknown database scheme` sent someone who typed `--db` to the docs); a
    `sqlite://` URL becomes the path it names, shown as that path."""
    from chatbot.config import InvalidSetting, _source
    from chatbot.dburl import is_postgres, postgres_url_problem, sqlite_url_path, sqlite_url_problem

    def refuse(setting: str, problem: str) -> NoReturn:
        if setting in flags:
            raise HelpdeskError(f"invalid option {flags[setting]}: {problem}")
        raise InvalidSetting(setting, problem, _source(setting, {}))

    db = settings.store.db
    if not db.strip():  # As `--kb ""` is: `store.db is empty` did not say which option.
        refuse("store.db", "is empty")
    if (problem := sqlite_url_problem(db)) is not None:
        refuse("store.db", problem)
    # A PostgreSQL URL naming no database reached the one named as the user, `postgres`, and
    # the first start made the help desk's tables (or the knowledge base's) there.
    if is_postgres(db) and (problem := postgres_url_problem(db)) is not None:
        refuse("store.db", problem)
    kb = settings.knowledge_base.path
    if isinstance(kb, str) and (problem := postgres_url_problem(kb)) is not None:
        refuse("knowledge_base.path", problem)
    settings.store.db = sqlite_url_path(db)


def require_sendable_key(settings: Settings) -> None:
    """Refuse, as a bad setting, an API key no HTTP request can carry (a line break, a non-ASCII
    character), for a command about to call Valen: a worker started with one, warned "Valen
    rejected the API key" (Valen never saw it) and escalated every question as `valen-error`."""
    from chatbot.config import InvalidSetting, _source
    from chatbot.valen.redact import key_problem

    key = settings.valen.api_key
    problem = key_problem(key.get_secret_value()) if key is not None else None
    if problem is not None:
        # The problem's words never repeat the key: "it holds a line break (character 3)".
        raise InvalidSetting(
            "valen.api_key",
            f"the API key cannot be sent in an HTTP header: {problem}",
            _source("valen.api_key", {}),
        )


_KEYS: set[str] = set()
"""The API keys this process was given: scrubbed from every error, warning and log line."""


def hide_key(key: str) -> None:
    """Scrub `key` from every line `print_error`, `print_warning` and logging print from now on."""
    if key:
        _KEYS.add(key)


def _scrubbed(text: str) -> str:
    from chatbot.valen.redact import MIN_SCRUBBED_CHARS, scrub_key

    for key in sorted(_KEYS, key=len, reverse=True):
        # As `Redactor`: a key of two or three characters is not searched for in prose.
        if len(key) >= MIN_SCRUBBED_CHARS:
            text = scrub_key(text, key)
    return text


def print_error(message: str) -> None:
    """One error line on stderr. Messages name files and keys from outside (a JSON key, a file
    name), so control characters are spelled out: an ESC in one must not reach the terminal."""
    print(f"helpdesk: error: {printable(_scrubbed(message))}", file=sys.stderr)


def print_warning(message: str) -> None:
    print(f"helpdesk: warning: {printable(_scrubbed(message))}", file=sys.stderr)


class PrintableFormatter(logging.Formatter):
    """Log lines with control characters spelled out, for the same reason as `print_error`."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(_scrubbed(super().format(record)))


def configure_logging() -> None:
    """Warnings as `helpdesk: warning: ...` lines on stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(PrintableFormatter("helpdesk: warning: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


def terminal_width() -> int | None:
    """The width to fit printed text to, from $COLUMNS or the terminal on stdout; None for a pipe
    or a file, which get the same layout on every machine whatever $COLUMNS says:
    `shutil.get_terminal_size` reads $COLUMNS before it looks at stdout, so `COLUMNS=200 helpdesk
    conversations list | wc -l` counted a header row. A stdout with no descriptor (an in-memory
    stream: a program calling `main`, a test's capture) is not known to be a pipe: $COLUMNS, or
    the terminal, decides there as before."""
    import shutil  # Not at the top: `helpdesk --help` need not load it.

    try:
        descriptor: int | None = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of these.
        descriptor = None
    if descriptor is not None and not os.isatty(descriptor):
        return None
    columns = shutil.get_terminal_size(fallback=(0, 0)).columns
    return columns if columns > 0 else None
