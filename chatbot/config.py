"""Settings: defaults, then an optional TOML file, then environment variables, then CLI options.

The file lives at `$XDG_CONFIG_HOME/helpdesk/config.toml` (relocate it with `HELPDESK_CONFIG`).
Every field can be set from the environment as `HELPDESK_<SECTION>__<FIELD>`; the documented short
names (`VALEN_BASE_URL`, `VALEN_API_KEY`, `HELPDESK_KB`, ...) win over those. Nothing is read or
created at import: `load_settings()` does the reading.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from platformdirs import user_config_path, user_data_path
from pydantic import BaseModel, Field, SecretStr, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.storage import describe_validation_error, shipped_knowledge_base
from chatbot.valen.client import DEFAULT_BASE_URL, SYSTEMONE_BASE_URL
from chatbot.valen.judge import ReplayMode
from chatbot.valen.protocol import Dialect

APP_NAME = "helpdesk"


def shipped_cache() -> Path:
    """The recorded Valen answers that ship with the project."""
    return Path(__file__).resolve().parents[1] / "caches" / "rerank.json"


def default_config_file() -> Path:
    return user_config_path(APP_NAME) / "config.toml"


def default_database() -> Path:
    return user_data_path(APP_NAME) / "helpdesk.sqlite3"


class KnowledgeBaseSettings(BaseModel):
    """Where the help-center passages live."""

    path: Path = Field(default_factory=shipped_knowledge_base)
    """Directory of passage files (`HELPDESK_KB`); default: the shipped bike-share help center."""


class ValenSettings(BaseModel):
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

    @model_validator(mode="after")
    def _systemone_default_url(self) -> ValenSettings:
        # Self-hosted System One listens locally; the hosted default would only answer 404.
        if self.dialect == "systemone" and "base_url" not in self.model_fields_set:
            self.base_url = SYSTEMONE_BASE_URL
        return self


class EngineSettings(BaseModel):
    """The answer-or-escalate policy."""

    threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    """Answer from the top passage when its probability reaches this."""
    k: int = Field(default=5, ge=1, le=50)
    """How many passages BM25 retrieves, each one Valen request."""


class StoreSettings(BaseModel):
    """Where conversations and the handoff queue are kept."""

    db: Path = Field(default_factory=default_database)
    """SQLite file (`HELPDESK_DB`), shared by every `helpdesk` process on the machine."""


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


class ShortEnvSource(PydanticBaseSettingsSource):
    """Reads the documented short environment variable names into their nested sections."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # Unused: __call__ builds the whole mapping at once.

    def __call__(self) -> dict[str, Any]:
        values: dict[str, dict[str, str]] = {}
        for name, (section, key) in SHORT_ENV_NAMES.items():
            value = os.environ.get(name)
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        config_file = Path(os.environ.get("HELPDESK_CONFIG") or default_config_file())
        return (
            init_settings,
            ShortEnvSource(settings_cls),
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=config_file, deep_merge=True),
        )


def load_settings(**overrides: Any) -> Settings:
    """Read settings from file and environment, with `overrides` (nested dicts) on top.

    Bad values become one `HelpdeskError` line naming the setting, never a pydantic traceback.
    """
    try:
        return Settings(**overrides)
    except ValidationError as error:
        raise HelpdeskError(f"invalid setting {describe_validation_error(error)}") from None
    except (OSError, ValueError) as error:  # An unreadable or malformed config file.
        raise HelpdeskError(f"cannot read configuration: {error}") from None
