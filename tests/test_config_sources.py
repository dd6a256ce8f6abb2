"""A refused setting names where its value came from; the file is read as editors save it; the
agent's name follows the one rule of display names from wherever it comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import config_file, load_settings
from chatbot.errors import HelpdeskError
from chatbot.settings_file import save_setting

BOM = "\ufeff"


def write_config(monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = config_file()  # Under the test's own XDG_CONFIG_HOME.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refused(monkeypatch: pytest.MonkeyPatch, **environ: str) -> str:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    return str(error.value)


# -- where a refused value came from ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "setting"),
    [("HELPDESK_ENGINE__K", "engine.k"), ("HELPDESK_VALEN__BUDGET_S", "valen.budget_s")],
)
@pytest.mark.parametrize("with_file", [True, False])
def test_an_empty_variable_is_named_not_the_file(
    monkeypatch: pytest.MonkeyPatch, variable: str, setting: str, with_file: bool
) -> None:
    # An empty value is read (pydantic-settings does), and was blamed on the file, which holds
    # nothing of it; with no file, on nothing at all.
    if with_file:
        write_config(monkeypatch, '[agent]\nname = "x"\n')
    assert refused(monkeypatch, **{variable: ""}).startswith(
        f"invalid setting {setting} from {variable}: "
    )


def test_a_variable_named_in_lower_case_is_named_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pydantic-settings reads the long names in any case.
    assert refused(monkeypatch, helpdesk_engine__k="x").startswith(
        "invalid setting engine.k from helpdesk_engine__k: "
    )


def test_a_section_variable_is_named_only_for_what_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_config(monkeypatch, '[engine]\nk = "x"\n')
    # HELPDESK_ENGINE sets the threshold only: the bad k is the file's.
    assert refused(monkeypatch, HELPDESK_ENGINE='{"threshold": 0.5}').startswith(
        f"invalid setting engine.k in {path}: "
    )
    assert refused(monkeypatch, HELPDESK_ENGINE='{"k": "y"}').startswith(
        "invalid setting engine.k from HELPDESK_ENGINE: "
    )


@pytest.mark.parametrize(
    ("value", "detail"), [("[bold]", "Expecting value at character 2"), ("", "empty")]
)
def test_a_section_variable_that_is_not_json_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, value: str, detail: str
) -> None:
    # pydantic-settings said `error parsing value for field "engine" from source
    # "EnvSettingsSource"`, naming neither the variable nor what was wrong.
    assert refused(monkeypatch, HELPDESK_ENGINE=value) == (
        f"invalid setting engine from HELPDESK_ENGINE: not valid JSON ({detail}): this variable "
        "sets the whole section as a JSON object"
    )
    monkeypatch.setenv("HELPDESK_ENGINE", '{"k": 3}')
    assert load_settings().engine.k == 3


@pytest.mark.parametrize(
    ("value", "kind"), [('["k"]', "an array"), ('"x"', "a string"), ("3", "a number"),
                        ("null", "null")],
)  # fmt: skip
def test_a_section_variable_that_is_json_but_no_object_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, value: str, kind: str
) -> None:
    # Valid JSON that is not an object left every default in force without a word.
    assert refused(monkeypatch, HELPDESK_ENGINE=value) == (
        f"invalid setting engine from HELPDESK_ENGINE: {kind}, not a JSON object: this variable "
        "sets the whole section as a JSON object"
    )


# -- a byte order mark ----------------------------------------------------------------------------


def test_a_file_saved_with_a_byte_order_mark_is_read_and_updated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Notepad saves one; TOML took it for the start of a key ("Invalid statement").
    path = write_config(monkeypatch, f"{BOM}# mine\n[engine]\nthreshold = 0.8\n")
    assert load_settings().engine.threshold == 0.8
    # The console saving the agent's name keeps the file as its editor saved it.
    save_setting("agent", "name", "Ana")
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"{BOM}# mine\n[engine]\nthreshold = 0.8\n")
    assert text.count(BOM) == 1
    settings = load_settings()
    assert (settings.agent.name, settings.engine.threshold) == ("Ana", 0.8)


# -- the agent's name -----------------------------------------------------------------------------

BAD_NAMES = [
    ("esc\x1b[31mred", "display name holds a control character (\\x1b)"),
    ("A" * 5000, "display name is longer than 64 characters"),
    ("A" * 65, "display name is longer than 64 characters"),
    ("  ", "display name is empty"),
    ("\u200d", "display name shows nothing: it needs a visible character"),
    ("\u3164\u2800", "display name shows nothing: it needs a visible character"),
    ("\u200c\ufe0f", "display name shows nothing: it needs a visible character"),
]  # fmt: skip
RTL = "\u200f\u0645\u06cc\u0646\u0627 (2)"
"""A right-to-left name whose mark keeps "(2)" after it on screen."""
INVISIBLE = ("B\u200bob", "display name holds an invisible or formatting character (U+200B ZERO "
                          "WIDTH SPACE)")  # fmt: skip


@pytest.mark.parametrize(("name", "problem"), BAD_NAMES)
def test_a_bad_agent_name_in_the_file_or_the_environment_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, problem: str
) -> None:
    # Taken as it was, an escape sequence became the name conversations are claimed under (and
    # `conversations show` printed it), and 5,000 characters filled the conversation's heading.
    path = config_file()
    path.parent.mkdir(parents=True)
    save_setting("agent", "name", name)
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    assert str(error.value) == f"invalid setting agent.name in {path}: {problem}"
    path.unlink()
    assert refused(monkeypatch, HELPDESK_AGENT__NAME=name) == (
        f"invalid setting agent.name from HELPDESK_AGENT__NAME: {problem}"
    )


def test_a_good_agent_name_is_kept_as_every_display_name_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HELPDESK_AGENT__NAME", "  Ana   Lima ")
    assert load_settings().agent.name == "Ana Lima"
    monkeypatch.setenv("HELPDESK_AGENT__NAME", "👩\u200d💻 " + "A" * 60)  # 64, a joiner in it.
    assert load_settings().agent.name == "👩\u200d💻 " + "A" * 60


def parsed(*argv: str) -> object:
    from chatbot.cli.main import build_parser

    return build_parser("agent").parse_args(["agent", *argv])


@pytest.mark.parametrize(
    ("name", "shown"),
    [("Bob\u200b", "Bob"), ("Ana\ufeff", "Ana"), ("\u2060Ana \u202eLima", "Ana Lima"),
     ("Ana\u200f", "Ana\u200f"), (RTL, RTL)],
)  # fmt: skip
def test_a_name_the_older_dialog_saved_is_read_without_what_it_cannot_show(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, shown: str
) -> None:
    """The name dialog used to save the invisible characters pasted with a name; refusing them
    stopped every command ("invalid setting agent.name ... invisible or formatting character").
    They are dropped, as the dialog now drops them; the bidi marks stay, as RTL names need them."""
    from chatbot.cli.main import main

    save_setting("agent", "name", name)
    assert load_settings().agent.name == shown
    assert main(["kb", "list"]) == 0
    assert "invalid setting" not in capsys.readouterr().err
    config_file().unlink()
    monkeypatch.setenv("HELPDESK_AGENT__NAME", name)
    assert load_settings().agent.name == shown


@pytest.mark.parametrize(("name", "problem"), [*BAD_NAMES, INVISIBLE])
def test_a_bad_agent_option_is_one_line_naming_it(name: str, problem: str) -> None:
    from chatbot.cli.app import app_settings

    with pytest.raises(HelpdeskError) as error:
        app_settings(parsed("--agent", name))  # type: ignore[arg-type]
    assert str(error.value) == f"invalid option --agent: {problem}"


def test_the_agent_option_wins_over_the_file_as_the_rule_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chatbot.cli.app import app_settings

    write_config(monkeypatch, '[agent]\nname = "From File"\n')
    assert app_settings(parsed()).agent.name == "From File"  # type: ignore[arg-type]
    settings = app_settings(parsed("--agent", " Ana  Lima "))  # type: ignore[arg-type]
    assert settings.agent.name == "Ana Lima"


def test_the_name_dialog_follows_the_same_rule_and_limit() -> None:
    from chatbot.tui.screens.dialogs import check_name

    # 40 there, 64 for accounts (which the web hands the console as the agent's name): one limit.
    assert check_name("A" * 64) == "A" * 64
    with pytest.raises(ValueError, match=r"^Keep it to 64 characters\.$"):
        check_name("A" * 65)
    with pytest.raises(ValueError, match="不要超过 64 个字符"):
        check_name("A" * 65, locale="zh")
    # What the field cannot show, pasted in, is dropped as control characters are.
    assert check_name(" B\u200bob\u2028Lee\x1b[2J ") == "Bob Lee"
    assert check_name("👩\u200d💻 Ana") == "👩\u200d💻 Ana"
    assert check_name("Ana\u200f") == "Ana\u200f"  # A bidi mark is kept, as the settings do.
    for blank in ("\u200d", "\u3164", "\u2800 \ufe0f"):  # Nothing visible: asked again.
        with pytest.raises(ValueError, match=r"^Type the name customers will see\.$"):
            check_name(blank)


# -- the short variable names in another case ------------------------------------------------------


@pytest.mark.parametrize("spelled", ["helpdesk_kb", "Helpdesk_Kb"])
def test_a_short_name_in_another_case_is_read_as_the_long_names_are(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    spelled: str,
) -> None:  # fmt: skip
    """`helpdesk_kb=/x helpdesk kb list` listed the default passages, silently: the short names
    were read in upper case only, while `unknown_env_names` counted them known in any case and
    pydantic-settings reads `helpdesk_engine__k` as `HELPDESK_ENGINE__K`."""
    from chatbot.cli.main import main

    missing = tmp_path / "elsewhere"
    monkeypatch.setenv(spelled, str(missing))
    assert load_settings().knowledge_base.path == missing
    assert (main(["kb", "list"]), capsys.readouterr().err) == (
        2, f"helpdesk: error: {missing}: knowledge base not found\n"
    )  # fmt: skip
    monkeypatch.setenv("HELPDESK_KB", str(tmp_path / "as-written"))  # The documented one wins.
    assert load_settings().knowledge_base.path == tmp_path / "as-written"


def test_other_short_names_in_lower_case_are_read_and_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("helpdesk_db", str(tmp_path / "mine.sqlite3"))
    monkeypatch.setenv("valen_dialect", "systemone")
    settings = load_settings()
    assert (settings.store.db, settings.valen.dialect) == (
        str(tmp_path / "mine.sqlite3"), "systemone"
    )  # fmt: skip
    assert refused(monkeypatch, valen_replay="bogus").startswith(
        "invalid setting valen.replay from valen_replay: "
    )


def test_the_settings_file_variable_in_lower_case_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "mine.toml"
    path.write_text("[engine]\nk = 7\n", encoding="utf-8")
    monkeypatch.setenv("helpdesk_config", str(path))
    assert config_file() == path
    assert load_settings().engine.k == 7
