"""A refused id says which rule it breaks: `a..b` keeps every rule the old message listed
(lowercase letters, digits, '-', '_' or '.', a letter or digit at each end) and broke the one it
did not list; and a long id says its length, as a long text does."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.knowledge_base.models import MAX_ID_CHARS, validate_passage_id
from chatbot.tui.widgets.passage_form import check_form
from tests.kb.helpers import run_cli

REFUSED = [
    ("a..b", "id 'a..b' is not a safe slug: two dots in a row ('..') are not allowed"),
    ("x" * 70, f"id has 70 characters; the limit is {MAX_ID_CHARS}"),
    (
        "Bad Id",
        "id 'Bad Id' is not a safe slug: 'B' is not allowed (only lowercase letters, digits, '-', "
        "'_' and '.')",
    ),
    (
        "a/b",
        "id 'a/b' is not a safe slug: '/' is not allowed (only lowercase letters, digits, '-', "
        "'_' and '.')",
    ),
    ("-a", "id '-a' is not a safe slug: it must start and end with a lowercase letter or a digit"),
    ("a.", "id 'a.' is not a safe slug: it must start and end with a lowercase letter or a digit"),
]


@pytest.mark.parametrize(("passage_id", "message"), REFUSED)
def test_the_refusal_names_the_rule_broken(passage_id: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        validate_passage_id(passage_id)
    assert str(refused.value) == message


@pytest.mark.parametrize("passage_id", ["a.b", "a-.b", "a_-b", "a--b", "x" * MAX_ID_CHARS])
def test_ids_the_rules_allow_are_taken(passage_id: str) -> None:
    assert validate_passage_id(passage_id) == passage_id


@pytest.mark.parametrize(("passage_id", "message"), REFUSED[:2])
def test_kb_add_and_the_editor_say_it(
    passage_id: str, message: str, kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "kb", "add", "--id", passage_id, "--text", "Hi.", "--kb", str(kb_copy)
    )
    assert code != 0 and out == ""
    assert message in err, err
    assert check_form(passage_id=passage_id, title="", tags="", text="Hi.") == message
