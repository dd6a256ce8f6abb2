"""Where helpdesk keeps things when nothing says otherwise.

Apart from `chatbot.config` so that `helpdesk --help` can name these places without loading
pydantic: the help shows the user the paths their passages and conversations really live at.
"""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_config_path, user_data_path, user_state_path

from chatbot.resources import shipped

APP_NAME = "helpdesk"


def shipped_cache() -> Path:
    """The recorded Valen answers that ship with the project (package data)."""
    return shipped("caches") / "rerank.json"


def recorded_cache() -> Path:
    """The user's own replay cache: a copy of the shipped one, made by the first `--replay
    record` that names no cache, and read from then on (the shipped file is the package's)."""
    return user_data_path(APP_NAME) / "caches" / "rerank.json"


def default_knowledge_base() -> Path:
    """The user's own knowledge base: a copy of the shipped one, made on first use."""
    return user_data_path(APP_NAME) / "knowledge_base"


def default_config_file() -> Path:
    return user_config_path(APP_NAME) / "config.toml"


def default_database() -> Path:
    return user_data_path(APP_NAME) / "helpdesk.sqlite3"


def drafts_dir() -> Path:
    """Where unsent words wait for their writer: a customer's question while `serve` restarts,
    an agent's reply and note once their console ends (the user's state directory: not data
    anyone exports, and private to them)."""
    return user_state_path(APP_NAME) / "drafts"
