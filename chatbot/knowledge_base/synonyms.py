"""Synonyms an editor maintains beside the passages, in `synonyms.toml`:

    senior = "pensioner, retiree, elderly"
    bike = ["bicycle", "cycle"]
    "return station" = "dock"

Each entry is one group of interchangeable words or phrases, the key and its values alike: a
question with any of them also searches for the others. Retrieval expands questions with them;
the passages and what Valen reads stay as written.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from chatbot.knowledge_base.storage import KnowledgeBaseError, read_regular_file
from chatbot.text import first_control

SYNONYMS_FILE = "synonyms.toml"
MAX_WORD_CHARS = 100

SynonymGroup = tuple[str, ...]

_LINE_SEPARATORS = "\u2028\u2029"


def word_problem(word: str) -> str | None:
    """What keeps `word` (stripped) out of a synonym group, or None: anything the editor's line
    format (`word = synonym, synonym`, `#` starting a comment) could not hold, so a group saved
    from the command line or a file survives the editor's next save unchanged. Control
    characters are spelled out."""
    bad = first_control(word, one_line=True)
    if bad is not None:
        kinds = {"\\x0a": "a line break", "\\x0d": "a line break", "\\x09": "a tab"}
        return f"holds {kinds.get(bad, f'a control character ({bad})')}"
    separator = next((c for c in word if c in _LINE_SEPARATORS), None)
    if separator is not None:  # Not control characters, but the editor's lines end at them.
        return f"holds a line break (\\u{ord(separator):04x})"
    if word.startswith("#"):
        return "starts with '#', which starts a comment in the editor's lines"
    if "," in word:
        return "holds ',', which separates synonyms"
    if "=" in word:
        return "holds '=', which separates a word from its synonyms"
    return None


def parse_synonyms(
    data: Mapping[str, object], *, where: str, strict: bool = True
) -> tuple[SynonymGroup, ...]:
    """Groups from a parsed mapping of word to synonyms (a comma-separated string or a list of
    strings), refusing anything else with one line naming `where` and the entry. A word given
    twice (ignoring case) is kept once, as first spelled; a group needs two different words.

    `strict` is for what is about to be written (the command line, the editor, an import): a
    word the editor's lines cannot hold (`word_problem`) and a group of one word are refused.
    Not `strict` is for reading a file to use it, which an older helpdesk may have written: such
    words are kept, and a group of one word is dropped (it means nothing). Anything malformed
    (wrong types, an empty or over-long word) is refused either way."""
    return tuple(
        group
        for key, value in data.items()
        if (group := _parse_entry(key, value, where=where, strict=strict)) is not None
    )


def _parse_entry(key: str, value: object, *, where: str, strict: bool) -> SynonymGroup | None:
    label = f"{where}: {key!r}"
    if isinstance(value, str):
        others = value.split(",")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        others = list(value)
    else:
        raise KnowledgeBaseError(
            f"{label}: expected synonyms as a comma-separated string or a list of strings"
        )
    words = [w.strip() for w in (key, *others)]
    if not all(words):
        raise KnowledgeBaseError(f"{label}: an empty word (two commas, or a blank name)")
    if strict and (problem := _words_problem(words)) is not None:
        raise KnowledgeBaseError(f"{label}: {problem}")
    long = next((w for w in words if len(w) > MAX_WORD_CHARS), None)
    if long is not None:
        raise KnowledgeBaseError(f"{label}: a synonym is longer than {MAX_WORD_CHARS} characters")
    if len(words) < 2:
        raise KnowledgeBaseError(f"{label}: no synonyms given")
    # Checked after the duplicates are dropped: `helmet = helmet` is a group of one word,
    # which would be written back as `helmet = ""` and then refused by every reader.
    kept: dict[str, str] = {}
    for word in words:
        kept.setdefault(word.casefold(), word)
    group = tuple(kept.values())
    if len(group) < 2:
        if not strict:
            return None
        raise KnowledgeBaseError(
            f"{label}: {words[0]!r} is given as its own synonym; a group needs two different words"
        )
    return group


def entry_problems(entries: Iterable[tuple[str, object]], *, where: str) -> list[str]:
    """One line for each entry (word, synonyms) that reading accepts but writing would refuse,
    saying what reading does with it: what `kb check` notes of groups an older helpdesk (or a
    hand) wrote. An entry reading refuses too raises its one line."""
    problems: list[str] = []
    for key, value in entries:
        try:
            _parse_entry(key, value, where=where, strict=True)
        except KnowledgeBaseError as error:
            used = _parse_entry(key, value, where=where, strict=False) is not None
            what = "searched with, but saving refuses it" if used else "ignored: it means nothing"
            problems.append(f"{error} ({what})")
    return problems


def group_problem(group: SynonymGroup) -> str | None:
    """Why the editor's lines cannot hold `group` as it is (one of its words), or None."""
    problem = _words_problem(group)
    return None if problem is None else f"{group[0]!r}: {problem}"


def _words_problem(words: Sequence[str]) -> str | None:
    """The first of `words` (head first) that `word_problem` refuses, and why, or None."""
    for number, word in enumerate(words):
        if (problem := word_problem(word)) is not None:
            which = "the word" if number == 0 else f"the synonym {word!r}"
            return f"{which} {problem}"
    return None


def read_synonyms_table(path: Path) -> dict[str, object]:
    """The TOML table of a `synonyms.toml`, one line for every way it can fail, in the words a
    passage file's are said in. A leading byte order mark (Notepad writes one) is skipped. Only
    a regular file is read: a FIFO is refused without waiting for a writer (which hung every
    command and left an app's reload threads stuck), a folder without reading it."""
    content = read_regular_file(path, expected="a TOML file")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise KnowledgeBaseError(f"{path}: not UTF-8 text (byte {error.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        hint = _quote_hint(text, error)
        raise KnowledgeBaseError(f"{path}: malformed TOML: {error}{hint}") from None
    except RecursionError:  # `a = [[[[...`: tomllib recurses once per bracket.
        raise KnowledgeBaseError(f"{path}: nested too deeply") from None
    except ValueError:  # Python refuses to convert an integer of thousands of digits.
        raise KnowledgeBaseError(f"{path}: a number in the TOML is too long") from None


_ERROR_LINE = re.compile(r"\(at line (\d+), column \d+\)$")
_DOTTED_BARE_KEY = re.compile(r"[A-Za-z0-9_.-]+")


def _quote_hint(text: str, error: tomllib.TOMLDecodeError) -> str:
    """A hint when the failing line starts with an unquoted word TOML cannot take bare:
    `vélo = "bike"` or `return station = "dock"` need quotes around the word."""
    found = _ERROR_LINE.search(str(error))
    lines = text.splitlines()
    if found is None or not 0 < int(found[1]) <= len(lines):
        return ""
    line = lines[int(found[1]) - 1].strip()
    if not line or line[0] in "\"'#[":
        return ""
    key = line.partition("=")[0].strip()
    if not key or _DOTTED_BARE_KEY.fullmatch(key):
        return ""
    return (
        "; put a word in double quotes unless it is only ASCII letters, digits, '-' and '_': "
        f"{json.dumps(key, ensure_ascii=False)} = ..."
    )


def load_synonyms_file(path: Path, *, strict: bool = False) -> tuple[SynonymGroup, ...]:
    """The synonym groups of a `synonyms.toml` file; every way it can fail is one line.
    `strict`: as `parse_synonyms`, for a file about to be written elsewhere (an import)."""
    return parse_synonyms(read_synonyms_table(path), where=str(path), strict=strict)


def groups_without(path: Path, word: str) -> tuple[tuple[SynonymGroup, ...], str] | None:
    """For a `synonyms.toml` that does not load: the groups of every entry but the one `word`
    starts (compared ignoring case), and that entry's key, so a bad group can be removed without
    editing the file by hand. None when no entry starts with `word`; another bad entry, or a
    file that is no TOML at all, is still refused with its one line."""
    data = read_synonyms_table(path)
    key = word.strip().casefold()
    found = next((k for k in data if k.strip().casefold() == key), None)
    if found is None:
        return None
    rest = {k: v for k, v in data.items() if k != found}
    return parse_synonyms(rest, where=str(path), strict=False), found


def load_synonyms(knowledge_base: Path, *, strict: bool = False) -> tuple[SynonymGroup, ...]:
    """The synonyms of a knowledge-base directory; none when it has no `synonyms.toml`. Read
    for use unless `strict` (see `parse_synonyms`)."""
    path = knowledge_base / SYNONYMS_FILE
    if not knowledge_base.is_dir() or not path.exists():
        return ()
    return load_synonyms_file(path, strict=strict)


# -- editing: one group per line, and the file written back ----------------------------------------

LINE_FORMAT = "word = synonym, synonym"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def group_line(group: SynonymGroup) -> str:
    """A group as the editor and `kb synonyms list` show it: `senior = pensioner, retiree`."""
    return f"{group[0]} = {', '.join(group[1:])}"


def parse_synonym_lines(text: str) -> tuple[tuple[SynonymGroup, ...], list[str]]:
    """Groups from the editor's lines (`word = synonym, synonym`; blank lines and `#` comments
    skipped), and one problem per bad line, naming it: `line 3: ...`."""
    groups: list[SynonymGroup] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"line {number}"
        key, equals, value = line.partition("=")
        if not equals:
            problems.append(f"{where}: no '=': write {LINE_FORMAT}")
            continue
        if "=" in value:
            problems.append(f"{where}: more than one '=': write {LINE_FORMAT}")
            continue
        if "," in key:
            problems.append(f"{where}: one word before '=': write {LINE_FORMAT}")
            continue
        try:
            [group] = parse_synonyms({key.strip(): value}, where=where)
        except KnowledgeBaseError as error:
            problems.append(str(error))
            continue
        head = group[0].casefold()
        if head in first_line:
            problems.append(f"{where}: {group[0]!r} already starts line {first_line[head]}")
            continue
        first_line[head] = number
        groups.append(group)
    return tuple(groups), problems


def synonyms_toml(groups: Sequence[SynonymGroup]) -> str:
    """`synonyms.toml` holding `groups`, one per line in the order given. Strings are written as
    JSON strings, which are valid TOML basic strings (the same escapes)."""
    lines = [
        "# Synonyms customers use for the same thing: a question with any word of a group also",
        "# searches for the others. Written by helpdesk (the editor, `helpdesk kb synonyms`).",
    ]
    for head, *others in groups:
        key = head if _BARE_KEY.fullmatch(head) else json.dumps(head, ensure_ascii=False)
        lines.append(f"{key} = {json.dumps(', '.join(others), ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
