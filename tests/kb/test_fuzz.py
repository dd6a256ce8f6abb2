"""Generated input against the passage loaders and the settings loader: every outcome is a result
or the one error type a person is shown, never another exception."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatbot.config import Settings, load_settings
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base import Passage, load_knowledge_base, load_passages_file
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import PassageStore

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
# Objects shaped like passages, so validation (not just JSON parsing) is exercised too.
passage_like = st.fixed_dictionaries(
    {"id": st.text(max_size=70) | st.sampled_from(["x", "con", "a..b", "nul.txt"])},
    optional={"text": st.text() | json_values, "title": st.text() | json_values,
              "tags": st.lists(st.text(), max_size=3) | json_values, "extra": json_values},
)  # fmt: skip
file_contents = (
    st.binary(max_size=300)
    | json_values.map(lambda v: json.dumps(v).encode())
    | passage_like.map(lambda v: json.dumps(v, ensure_ascii=False).encode())
    | st.integers(1, 3000).map(lambda n: ("[" * n + "]" * n).encode())
    | st.integers(4000, 6000).map(lambda n: b'{"id": "x", "text": ' + b"7" * n + b"}")
)


def loads_or_refuses(directory: Path) -> None:
    try:
        passages = load_knowledge_base(directory)
    except KnowledgeBaseError as error:
        assert "\n" not in str(error)
    else:
        assert all(isinstance(p, Passage) for p in passages)
    scan = PassageStore(directory).scan()
    assert all("\n" not in line for line in scan.problems)


@FUZZ
@given(name=st.sampled_from(["x", "a-passage", "Bad Name", "con"]), content=file_contents)
def test_the_passage_loader_takes_any_file(name: str, content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / f"{name}.json").write_bytes(content)
        loads_or_refuses(directory)
        (directory / "import.json").write_bytes(content)
        try:
            load_passages_file(directory / "import.json")
        except KnowledgeBaseError:
            pass


@FUZZ
@given(passages=st.lists(passage_like, max_size=5))
def test_the_import_file_loader_takes_any_passage_list(passages: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "import.json"
        path.write_text(json.dumps({"passages": passages}), encoding="utf-8")
        try:
            loaded = load_passages_file(path)
        except KnowledgeBaseError as error:
            assert "\n" not in str(error)
        else:
            assert len(loaded) == len(passages)


toml_lines = st.lists(
    st.sampled_from(["[engine]", "[valen]", "[store]", "[knowledge_base]", "[nope]", "[[engine]]",
                     "threshold = ", "k = ", "replay = ", "budget_s = ", "dialect = ", "typo = ",
                     "engine.k = ", "x = [", "]", "{", "}", '"', "'''", "\\u0000", "1e999", "-1",
                     "0.5", "7", '"off"', '"systemone"', "true", "nan", "inf", "1979-05-27"])
    | st.text(max_size=20),
    max_size=12,
).map(lambda parts: " ".join(parts).replace("] ", "]\n").replace(" [", "\n["))  # fmt: skip


@FUZZ
@given(text=toml_lines | st.text(max_size=200), env=st.dictionaries(
    st.sampled_from(["HELPDESK_ENGINE__K", "HELPDESK_ENGINE__THRESHOLD", "VALEN_REPLAY",
                     "VALEN_DIALECT", "HELPDESK_VALEN", "HELPDESK_ENGINE", "HELPDESK_TYPO",
                     "VALEN_BASE_URL", "HELPDESK_VALEN__BUDGET_S", "HELPDESK_ENGINE__K__X"]),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
            max_size=20),
    max_size=4,
))  # fmt: skip
def test_the_settings_loader_takes_any_file_and_environment(text: str, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text(text, encoding="utf-8", errors="surrogatepass")
        overrides = {"HELPDESK_CONFIG": str(config), "XDG_DATA_HOME": tmp} | env
        with mock.patch.dict(os.environ, overrides):
            try:
                loaded = load_settings()
            except HelpdeskError as error:
                assert "\n" not in str(error)
            else:
                assert isinstance(loaded, Settings)
