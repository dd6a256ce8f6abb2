"""Settings: defaults, then an optional TOML file, then environment variables, then CLI options.

The file lives at `$XDG_CONFIG_HOME/helpdesk/config.toml` (relocate it with `HELPDESK_CONFIG`).
Every field can be set from the environment as `HELPDESK_<SECTION>__<FIELD>`; the documented short
names (`VALEN_BASE_URL`, `VALEN_API_KEY`, `HELPDESK_KB`, ...) win over those. A key in the file or
a `HELPDESK_*` variable that names no setting is a warning, once, naming it: a typo must not
silently leave a default in force. Nothing is read or created at import: `load_settings()` does
the reading, and seeds the user's knowledge base from the shipped one the first time.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import shutil
import stat
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from chatbot.errors import HelpdeskError
from chatbot.i18n import Locale, parse_locale
from chatbot.knowledge_base.seed import seed_knowledge_base, shipped_translations
from chatbot.paths import (
    default_config_file,
    default_database,
    default_knowledge_base,
    recorded_cache,
    shipped_cache,
)
from chatbot.pgdeadline import DEFAULT_TIMEOUT_S
from chatbot.valen.judge import ReplayMode
from chatbot.valen.protocol import DEFAULT_BASE_URL, SYSTEMONE_BASE_URL, Dialect

CONFIG_ENV = "HELPDESK_CONFIG"
MAX_CONFIG_BYTES = 1 << 20
"""A settings file is a few lines; anything this big is not one."""

log = logging.getLogger(__name__)


def config_file() -> Path:
    """The settings file in force: `HELPDESK_CONFIG`, or the one at the XDG path."""
    return Path(environment_value(CONFIG_ENV) or default_config_file())


PostgresURL = Annotated[str, StringConstraints(pattern=r"^(?i)postgres(ql)?://")]
"""A knowledge base in PostgreSQL: `postgresql://user@host:5432/dbname` (kept as written: a Path
would fold its `//`)."""


class Section(BaseModel):
    """A section of the settings. No number in them is infinite: `lease_s = inf` was taken,
    and the bot then failed with a traceback when it worked out when its lease ends."""

    model_config = ConfigDict(allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_are_not_booleans(cls, value: Any, info: ValidationInfo) -> Any:
        # Pydantic takes true for 1 where it wants a number: `threshold = true` in the settings
        # file became 1.0, and the bot never answered. (From the environment, "true" is text,
        # and was refused.)
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and field.annotation in (int, float):
            raise ValueError("expected a number, not true or false")
        return value


def refuse_empty_path(value: Any) -> Any:
    """A path setting's value, refused when empty: `Path("")` is the current directory, so
    `--kb ""` or `path = ""` read and wrote whatever folder the command ran in."""
    if isinstance(value, str) and not value.strip():
        raise ValueError("is empty")
    return value


class KnowledgeBaseSettings(Section):
    """Where the help-center passages live."""

    path: PostgresURL | Path = Field(default_factory=default_knowledge_base)
    """Directory of passage files, or a `postgresql://` URL (`HELPDESK_KB`); default:
    `knowledge_base` in the user data directory, seeded from the shipped bike-share help center
    the first time."""

    _path_not_empty = field_validator("path", mode="before")(refuse_empty_path)


class ValenSettings(Section):
    """How to reach Valen, and whether to replay recorded answers instead."""

    base_url: str = DEFAULT_BASE_URL
    """Base URL of the Valen API (`VALEN_BASE_URL`)."""
    api_key: SecretStr | None = None
    """Bearer token (`VALEN_API_KEY`); never printed, logged or stored."""
    model: str | None = None
    """Model name sent as `model` (`VALEN_MODEL`); left out of requests when unset."""
    dialect: Dialect = "decisions"
    """Wire dialect (`VALEN_DIALECT`): `decisions` for hosted Valen, `systemone` for self-hosted."""
    replay: ReplayMode = "on"
    """`on`: recorded answers only; `off`: live, cache untouched; `record`: live, answers saved."""
    cache: Path = Field(default_factory=shipped_cache)
    """Replay cache file (`VALEN_CACHE`)."""
    connect_timeout_s: float = Field(default=5.0, gt=0)
    """Seconds to wait for a connection to Valen."""
    read_timeout_s: float = Field(default=15.0, gt=0)
    """Seconds to wait for one reply."""
    budget_s: float = Field(default=20.0, gt=0)
    """Seconds one customer question may spend on Valen, retries included, before escalating."""
    # 256 sends 50 questions at k=5 (or five at the largest k, 50) in one wave, so judging costs
    # one request's time however many customers ask at once; a lower cap makes later customers
    # wait for earlier ones. The hosted API publishes no rate limit; a 429 is retried after its
    # `retry-after`, and a deployment that sees many can lower this (keep it >= engine.k).
    max_in_flight: int = Field(default=256, ge=1, le=1024)
    """Requests to Valen in flight at once, across all questions (one connection each)."""
    max_attempts: int = Field(default=4, ge=1, le=10)
    """Requests per passage, the first included, when Valen answers 408/429/500/502/503 or the
    network fails; other errors are never retried."""
    backoff_base_s: float = Field(default=0.5, ge=0)
    """Wait before the first retry; it doubles each retry (with jitter) up to `backoff_cap_s`."""
    backoff_cap_s: float = Field(default=8.0, ge=0)
    """The longest wait between two attempts of our own choosing."""
    max_retry_wait_s: float = Field(default=60.0, ge=0)
    """The longest `retry-after` honoured; a server asking for more gets no retry."""
    retry_gateway_timeout: bool = False
    """Retry 504 too; off by default because the same input would most likely time out again."""

    _cache_not_empty = field_validator("cache", mode="before")(refuse_empty_path)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        # Anything else failed only at the first question, after every retry ("ftp://host":
        # UnsupportedProtocol four times per passage), and `valen check` blamed the server.
        import re
        from urllib.parse import urlsplit

        # "user:password@" would be sent as Basic auth in place of the API key, and then shown by
        # every message that names the URL: refused, and never repeated in the refusal.
        if re.search(r"//[^/?#]*@", value):
            raise ValueError(
                "the URL holds a user name or password (before an @): give the API key as "
                "VALEN_API_KEY instead, and the URL without them"
            )
        try:
            parts = urlsplit(value.strip())
        except ValueError:  # An unclosed [.
            parts = None
        # Digits out of range ("http://host:99999/v1") are a mistake in the port alone: say so.
        digits = re.search(r":(\d+)$", parts.netloc) if parts is not None else None
        if digits is not None:
            port = digits[1].lstrip("0") or "0"
            if len(port) > 5 or not 0 < int(port) <= 65535:
                raise ValueError(
                    f"{value!r} has an invalid port, {port}: a port is a number from 1 to 65535"
                )
        ok = False
        if parts is not None:
            try:
                parts.port  # noqa: B018 - raises for a port that is not a number
                ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
            except ValueError:
                pass
        if not ok:
            raise ValueError(
                f"{value!r} is not an http:// or https:// URL like https://api.example.com/v1"
            )
        return value.strip()

    @model_validator(mode="after")
    def _systemone_default_url(self) -> ValenSettings:
        # Self-hosted System One listens locally; the hosted default would only answer 404.
        if self.dialect == "systemone" and "base_url" not in self.model_fields_set:
            self.base_url = SYSTEMONE_BASE_URL
        return self


class EngineSettings(Section):
    """The answer-or-escalate policy."""

    threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    """Answer from the top passage when its probability reaches this."""
    k: int = Field(default=5, ge=1, le=50)
    """How many passages BM25 retrieves, each one Valen request."""


class StoreSettings(Section):
    """Where conversations and the handoff queue are kept."""

    db: str = Field(default_factory=lambda: str(default_database()))
    """The database (`HELPDESK_DB`, `--db`): a SQLite file path or `sqlite:///path`, shared by
    every `helpdesk` process on the machine, or `postgresql://user@host:5432/db`, shared by
    processes on any machine."""

    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    """How long one PostgreSQL call may wait for the server's answer (`HELPDESK_STORE__TIMEOUT_S`)
    before it is reported as an outage and its connection is closed: a server that stopped
    answering would otherwise hold the call, and every call behind it, for ever."""

    @field_validator("db", mode="before")
    @classmethod
    def _path_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, os.PathLike) else value


class BotSettings(Section):
    """Bot workers: how they take pending questions from the store."""

    lease_s: float = Field(default=30.0, gt=0)
    """Seconds a worker holds a question it took; one that dies holds it no longer than this,
    then another worker takes it. Kept above Valen's `budget_s`; a heartbeat extends it."""
    concurrency: int = Field(default=8, ge=1, le=1000)
    """Questions one worker judges at once (`--concurrency`); they share its Valen client's
    in-flight limit and backoff."""
    max_attempts: int = Field(default=3, ge=1, le=100)
    """Times a question may be taken before it goes to a person with reason `bot-failed`
    instead (a question that keeps killing the workers judging it)."""
    poll_s: float = Field(default=2.0, gt=0)
    """The safety-net poll for new questions; a change notice usually wakes a worker first."""
    shutdown_grace_s: float = Field(default=10.0, ge=0)
    """On SIGTERM or Ctrl+C, how long `helpdesk bot` waits for questions in flight before it
    gives them back for another worker."""


class WebSettings(Section):
    """`helpdesk serve`: the browser front end."""

    host: str = "127.0.0.1"
    """Address to listen on. Anything but loopback belongs behind a TLS proxy."""
    port: int = Field(default=8000, ge=0, le=65535)
    """Port to listen on (0: any free port, printed at start)."""
    public_url: str | None = None
    """The address people type, e.g. `https://help.example.com` behind a proxy: pages and
    websockets are accepted from this origin (and from loopback), and `https` makes every
    cookie `Secure`."""
    trust_proxy_headers: bool = False
    """Take the client's address from the last `X-Forwarded-For` entry (set it only behind a
    proxy that writes that header), so sign-in limits count people, not the proxy."""
    session_hours: float = Field(default=12.0, gt=0, le=24 * 30)
    """How long a sign-in lasts; an agent's or editor's console still open then is closed."""
    customer_days: float = Field(default=30.0, gt=0, le=365)
    """How long a customer's browser keeps their conversation."""
    session_check_s: float = Field(default=15.0, gt=0, le=3600)
    """How often each open agent or editor session is checked against its account: a new
    password, a new role, a removed account or a sign-out on another server closes it within
    this many seconds."""
    max_sessions: int = Field(default=200, ge=1)
    """Browser sessions (one app process each) at once, for the whole server."""
    max_sessions_per_address: int = Field(default=8, ge=1)
    """Browser sessions at once from one address."""
    start_timeout_s: float = Field(default=60.0, ge=1, le=3600)
    """How long a new customer's session process may take to start (it paints in a second or
    two, more on a busy machine): one that has not by then is stopped and its page told the
    help desk cannot open now, rather than left waiting for good."""
    preload: bool = True
    """Start each browser session by forking a process that has the app imported already: the
    session paints sooner and shares that memory with every other session."""
    bots: int = Field(default=1, ge=0, le=64)
    """Bot worker processes `serve` runs itself (0: `helpdesk bot` runs elsewhere)."""


class UiSettings(Section):
    """The screens a person of the help desk works in."""

    locale: Locale | None = None
    """Language of the agent console and the knowledge-base editor (`--locale`): `en` or `zh`
    (`zh_CN` and the like are read as `zh`). Unset: the language the person's side asks for,
    their terminal's (`LANG` and the like) or their browser's (`Accept-Language`). Customers'
    chats follow each conversation's own language; agents read customers' messages as
    written."""

    @field_validator("locale", mode="before")
    @classmethod
    def _known_locale(cls, value: Any) -> Any:
        return parse_locale(value) if isinstance(value, str) else value


class AgentSettings(Section):
    """Who this person is in the agent console."""

    name: str | None = None
    """The display name customers see on claims and replies (`--agent` wins over it); the
    console asks for it on the first claim and saves it here. The rule of accounts' display
    names holds for it: at most 64 characters, something visible, no control characters. The
    invisible formatting characters the console's name dialog drops are dropped here too, not
    refused: its older version saved them (`Bob\\u200b`), and refusing stopped every command."""
    release_after_s: float = Field(default=600.0, ge=0)
    """Seconds an agent may go unseen (every console of theirs closed, its terminal or browser
    tab gone) before the desk puts their claims back in the queue and tells each customer they
    stepped away; 0 never does. A console says its agent is here every 30 s, so a reload or a
    restart is back well within it; at least 60. Claims of an agent no console ever showed
    (made from the command line) are never released for them."""

    @field_validator("release_after_s")
    @classmethod
    def _longer_than_a_tick(cls, value: float) -> float:
        # Under two presence periods, an agent whose console is open could lose their claims
        # to one late tick.
        if 0 < value < 60:
            raise ValueError("is 0 (never) or at least 60 seconds")
        return value

    @field_validator("name")
    @classmethod
    def _display_name(cls, value: str | None) -> str | None:
        # Taken as it was, an escape sequence became the name conversations are claimed under,
        # and 5,000 characters of name filled the conversation's heading.
        from chatbot.accounts.models import check_display_name, drop_invisible

        if value is None:
            return None
        try:
            return check_display_name(drop_invisible(value))
        except HelpdeskError as error:
            raise ValueError(str(error)) from None


# The documented short environment variable names, mapped to their place in the settings.
SHORT_ENV_NAMES: dict[str, tuple[str, str]] = {
    "HELPDESK_KB": ("knowledge_base", "path"),
    "HELPDESK_DB": ("store", "db"),
    "VALEN_BASE_URL": ("valen", "base_url"),
    "VALEN_API_KEY": ("valen", "api_key"),
    "VALEN_MODEL": ("valen", "model"),
    "VALEN_DIALECT": ("valen", "dialect"),
    "VALEN_CACHE": ("valen", "cache"),
    "VALEN_REPLAY": ("valen", "replay"),
}


class ConfigFileSource(PydanticBaseSettingsSource):
    """The TOML settings file, read defensively: a missing file is no settings; a FIFO, a folder,
    a huge file, bad UTF-8, bad TOML or nesting deep enough to overflow the parser is one
    `HelpdeskError` line naming the file."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self.path = path

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # Unused: __call__ builds the whole mapping at once.

    def __call__(self) -> dict[str, Any]:
        if (named := environment_variable(CONFIG_ENV)) and not os.path.lexists(self.path):
            # Named on purpose, so a typo would otherwise leave the defaults in force unsaid.
            warn_once(f"{named}={self.path}: no such file; settings from it not used")
        elif (target := _dangling_link(self.path)) is not None:
            # A link to a file moved or not made yet (a dotfiles checkout missing): as unsaid.
            where = f"{named}={self.path}" if named else str(self.path)
            warn_once(
                f"{where}: a link to {target}, which does not exist; settings from it not used"
            )
        data = read_config_file(self.path)
        for key in unknown_keys(data, self.settings_cls):
            warn_once(f"{self.path}: unknown setting {key!r} ignored{_suggest(key)}")
        return data


def _dangling_link(path: Path) -> str | None:
    """Where `path` links to, when it is a symbolic link to nothing; None otherwise."""
    try:
        return os.readlink(path) if path.is_symlink() and not path.exists() else None
    except OSError:
        return None


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        info = path.stat()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise HelpdeskError(f"cannot read configuration {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise HelpdeskError(f"cannot read configuration {path}: not a regular file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise HelpdeskError(f"cannot read configuration {path}: larger than 1 MiB")
    try:
        # A byte order mark first is UTF-8 too: Notepad saves one, which TOML takes for a key.
        return tomllib.loads(path.read_text(encoding="utf-8").removeprefix("\ufeff"))
    except OSError as error:
        raise HelpdeskError(f"cannot read configuration {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise HelpdeskError(
            f"cannot read configuration {path}: not UTF-8 text (byte {error.start})"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise HelpdeskError(f"cannot read configuration {path}: {error}") from None
    except RecursionError:
        raise HelpdeskError(f"cannot read configuration {path}: nested too deeply") from None
    except ValueError:  # Python refuses to convert an integer of thousands of digits.
        raise HelpdeskError(f"cannot read configuration {path}: a number is too long") from None


def _sections(model: type[BaseModel]) -> Iterator[tuple[str, type[BaseModel] | None]]:
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield name, annotation
        else:
            yield name, None


def known_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every setting's dotted name (`engine.threshold`), sections included."""
    keys = []
    for name, section in _sections(model):
        keys.append(prefix + name)
        if section is not None:
            keys.extend(known_keys(section, f"{prefix}{name}."))
    return keys


def unknown_keys(data: Mapping[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    """The dotted names in `data` that are no setting of `model`."""
    sections = dict(_sections(model))
    unknown = []
    for key, value in data.items():
        if key not in sections:
            unknown.append(prefix + key)
        elif (section := sections[key]) is not None and isinstance(value, Mapping):
            unknown.extend(unknown_keys(value, section, f"{prefix}{key}."))
    return unknown


def unknown_env_names(environ: Mapping[str, str]) -> list[str]:
    """`HELPDESK_*` variables that name no setting (names are matched case-insensitively, as
    pydantic-settings reads them)."""
    known = {CONFIG_ENV, *(n for n in SHORT_ENV_NAMES if n.startswith("HELPDESK_"))}
    known |= {env_name(key) for key in known_keys(Settings)}
    return sorted(
        name for name in environ
        if name.upper().startswith("HELPDESK_") and name.upper() not in known
    )  # fmt: skip


def env_name(key: str) -> str:
    """The long environment variable name of a dotted setting: `HELPDESK_ENGINE__K`."""
    return "HELPDESK_" + key.upper().replace(".", "__")


def _suggest(key: str, *, variable: bool = False) -> str:
    """The closest real setting to a mistyped one: as a dotted key, or as the environment
    variable that sets it when `variable`."""
    names = known_keys(Settings)
    if variable:
        close = difflib.get_close_matches(key.upper(), [env_name(n) for n in names], n=1)
    else:
        close = difflib.get_close_matches(key, names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


_warned: set[str] = set()


def warn_once(message: str) -> None:
    """A warning a process gives once, however often settings are loaded."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def environment_variable(name: str) -> str | None:
    """The variable that sets the short name `name` (`HELPDESK_KB`, `HELPDESK_CONFIG`): itself,
    or one spelled in another case (`helpdesk_kb`), as pydantic-settings reads the long names in
    any case; None if none is set to something (an empty one is not read). The name as written
    wins over another spelling, then the first in sorted order."""
    if os.environ.get(name):
        return name
    spellings = sorted(v for v in os.environ if v.upper() == name and os.environ[v])
    return spellings[0] if spellings else None


def environment_value(name: str) -> str | None:
    """The value of the short name `name`, in any case (`environment_variable`)."""
    variable = environment_variable(name)
    return None if variable is None else os.environ[variable]


class ShortEnvSource(PydanticBaseSettingsSource):
    """Reads the documented short environment variable names into their nested sections, in any
    case (`helpdesk_kb` too), as the long ones are read: `unknown_env_names` counts them known,
    and was silent while `helpdesk_kb=/x helpdesk kb list` listed the default passages."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # Unused: __call__ builds the whole mapping at once.

    def __call__(self) -> dict[str, Any]:
        values: dict[str, dict[str, str]] = {}
        for name, (section, key) in SHORT_ENV_NAMES.items():
            value = environment_value(name)
            if value:
                values.setdefault(section, {})[key] = value
        return values


class Settings(BaseSettings):
    """Everything the help desk can be configured with."""

    model_config = SettingsConfigDict(
        env_prefix="HELPDESK_",
        env_nested_delimiter="__",
        extra="ignore",
        nested_model_default_partial_update=True,
    )

    knowledge_base: KnowledgeBaseSettings = Field(default_factory=KnowledgeBaseSettings)
    """The knowledge base."""
    valen: ValenSettings = Field(default_factory=ValenSettings)
    """The Valen decision model."""
    engine: EngineSettings = Field(default_factory=EngineSettings)
    """The answer-or-escalate policy."""
    store: StoreSettings = Field(default_factory=StoreSettings)
    """Conversation storage."""
    bot: BotSettings = Field(default_factory=BotSettings)
    """Bot workers."""
    agent: AgentSettings = Field(default_factory=AgentSettings)
    """The agent console."""
    ui: UiSettings = Field(default_factory=UiSettings)
    """The language of the screens."""

    web: WebSettings = Field(default_factory=WebSettings)
    """The browser front end."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            ShortEnvSource(settings_cls),
            env_settings,
            ConfigFileSource(settings_cls, config_file()),
        )


class InvalidSetting(HelpdeskError):
    """A setting's value is refused: `setting` like "engine.threshold", and why; `source`, where
    the value came from (an environment variable or the settings file), when known."""

    def __init__(self, setting: str, problem: str, source: str | None = None) -> None:
        where = f" {source}" if source else ""
        super().__init__(f"invalid setting {setting}{where}: {problem}")
        self.setting = setting
        self.problem = problem


def _setting_named(location: str) -> str:
    """A refused value's dotted location as the setting's name: what names no section or setting
    is pydantic's own word for a type it tried (`knowledge_base.path.constrained-str`), left
    out."""
    model: type[BaseModel] | None = Settings
    kept = []
    for part in location.split("."):
        if model is None or part not in model.model_fields:
            break
        kept.append(part)
        model = dict(_sections(model)).get(part)
    return ".".join(kept) or location


def _source(setting: str, overrides: dict[str, Any]) -> str | None:
    """Where the refused value of `setting` came from, in the order the sources win: given by
    the caller (the command line names its own options), a short environment variable, a long
    one (`HELPDESK_ENGINE__K`, then the section's `HELPDESK_ENGINE` as JSON), the file. Each is
    asked whether it holds the setting, not whether it is set to something: `HELPDESK_ENGINE__K=`
    is an empty value, and was blamed on the file (or, with none, on nothing)."""
    section, _, rest = setting.partition(".")
    key = rest.partition(".")[0]  # A place inside a value (a list's item) is its setting's.
    given = overrides.get(section)
    if isinstance(given, Mapping) and key in given:
        return None
    if key:
        for name, place in SHORT_ENV_NAMES.items():
            # Empty ones are not read; another case is (`helpdesk_db`).
            if place == (section, key) and (variable := environment_variable(name)):
                return f"from {variable}"
    # pydantic-settings reads the long names in any case, and empty ones too.
    variables = {name.upper(): name for name in os.environ}
    if key and (long := variables.get(env_name(f"{section}.{key}"))) is not None:
        return f"from {long}"
    whole = variables.get(env_name(section))
    if whole is not None:
        try:
            value = json.loads(os.environ[whole])
        except (ValueError, RecursionError):
            value = None
        if not key or (isinstance(value, dict) and key in value):
            return f"from {whole}"
    path = config_file()
    try:
        data = read_config_file(path)
    except HelpdeskError:
        data = {}
    table = data.get(section)
    if section in data and (not key or (isinstance(table, Mapping) and key in table)):
        return f"in {path}"
    # Not found where it should be (a rule across settings): the likeliest place.
    for upper, variable in sorted(variables.items()):
        if upper == env_name(section) or upper.startswith(env_name(section) + "__"):
            return f"from {variable}"
    return f"in {path}" if section in data else None


def _check_json_sections(environ: Mapping[str, str]) -> None:
    """A whole section given as one variable (`HELPDESK_ENGINE='{"k": 3}'`) is JSON, or one line
    naming the variable: pydantic-settings said only `error parsing value for field "engine"
    from source "EnvSettingsSource"`, naming neither the variable nor what was wrong."""
    sections = {env_name(name): name for name, model in _sections(Settings) if model is not None}
    for name in sorted(environ):
        if (section := sections.get(name.upper())) is None:
            continue
        value = environ[name]
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as error:
            detail = "empty" if not value.strip() else f"{error.msg} at character {error.pos + 1}"
        except (ValueError, RecursionError):  # A number of thousands of digits; deep nesting.
            detail = "too long or nested too deeply"
        else:
            if isinstance(parsed, Mapping):
                # A key inside that names no setting is the same typo as one in the file, and
                # was silently left at its default.
                for key in unknown_keys({section: parsed}, Settings):
                    warn_once(f"{name}: unknown setting {key!r} ignored{_suggest(key)}")
                continue
            # Valid JSON but no object ('["budget_s"]', '"x"'): every default stayed in force.
            kind = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}
            raise InvalidSetting(
                section,
                f"{kind.get(type(parsed), 'a number')}, not a JSON object: this variable sets the"
                " whole section as a JSON object",
                f"from {name}",
            )
        raise InvalidSetting(
            section,
            f"not valid JSON ({detail}): this variable sets the whole section as a JSON object",
            f"from {name}",
        )


def load_settings(**overrides: Any) -> Settings:
    """Read settings from file and environment, with `overrides` (nested dicts) on top.

    Bad values become one `HelpdeskError` line naming the setting, never a pydantic traceback.
    The default knowledge base is seeded from the shipped one if it does not exist yet.
    """
    for name in unknown_env_names(os.environ):
        warn_once(f"unknown environment variable {name} ignored{_suggest(name, variable=True)}")
    _check_json_sections(os.environ)
    try:
        settings = Settings(**overrides)
    except ValidationError as error:
        from chatbot.knowledge_base.storage import first_problem

        setting, problem = first_problem(error)
        setting = _setting_named(setting)
        if error.errors()[0]["type"] == "model_type":
            # Pydantic's "a valid dictionary or instance of KnowledgeBaseSettings" named a class.
            problem = f"expected a table of settings ([{setting}] with its keys under it)"
        raise InvalidSetting(setting, problem, _source(setting, overrides)) from None
    except (OSError, ValueError) as error:  # An unreadable or malformed value in the file.
        raise HelpdeskError(f"cannot read configuration: {error}") from None
    except RecursionError:
        raise HelpdeskError("cannot read configuration: nested too deeply") from None
    path = settings.knowledge_base.path
    if path == default_knowledge_base():
        try:
            seed_knowledge_base(path)
            # Its translations too, also into a copy made before there were any.
            for translation in shipped_translations():
                seed_knowledge_base(path / translation.name, source=translation)
        except (OSError, HelpdeskError) as error:
            # Only what needs passages fails later ("knowledge base not found"); say why now.
            detail = error.strerror if isinstance(error, OSError) else str(error)
            warn_once(f"cannot create your knowledge base at {path}: {detail}")
    _use_own_cache(settings.valen)
    return settings


def _use_own_cache(valen: ValenSettings) -> None:
    """With no cache named, answers are recorded into, and then replayed from, the user's copy of
    the shipped cache: recording wrote into the package itself (a file git tracks, or one in
    site-packages that an upgrade replaces or this user cannot write)."""
    if valen.cache != shipped_cache():
        return
    own = recorded_cache()
    if valen.replay == "record" and not own.exists():
        try:
            own.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(valen.cache, own)
        except OSError as error:
            warn_once(f"cannot create your replay cache at {own}: {error.strerror or error}")
            return
    if own.is_file():
        valen.cache = own
