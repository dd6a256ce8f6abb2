"""`helpdesk kb ...`: list, show, add, edit, remove, restore, import, export and check passages."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chatbot.cli.options import (
    kb_help,
    path_argument,
    print_warning,
    settings_from,
    terminal_width,
)
from chatbot.errors import HelpdeskError
from chatbot.text import cells, clip, counted, printable, wrap, wrap_lines

# The knowledge base's modules (pydantic) are imported where they are used, so that registering
# these commands costs `helpdesk --help` nothing.
if TYPE_CHECKING:
    from chatbot.knowledge_base.interface import KnowledgeBaseStore, StoredPassage, Version
    from chatbot.knowledge_base.models import Passage
    from chatbot.knowledge_base.synonyms import SynonymGroup


PASSAGE_ID = "the passage's id, as `kb list` shows it"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # --kb is accepted after any kb subcommand, like the engine options after `ask`.
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: unset unless given here, so `helpdesk --kb X kb ...` keeps the top level's X
    # instead of a default None that would silently mean the shipped knowledge base.
    common.add_argument(
        "--kb",
        metavar="PATH|URL",
        default=argparse.SUPPRESS,
        help=kb_help(),
    )
    # With no command it prints its help and exits 2, as every command group does (`main`).
    parser = commands.add_parser("kb", help="edit the knowledge base: list, add, rm, import, ...")
    sub = parser.add_subparsers(title="kb commands", metavar="KB_COMMAND",
                                parser_class=type(parser))  # fmt: skip

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    p = command("list", "list passages: id, length, title")
    p.set_defaults(func=run_list)

    p = command("show", "show one passage and its revision, or one of its earlier versions")
    p.add_argument("id", help=PASSAGE_ID)
    p.add_argument("--json", action="store_true", help="print the passage as its file holds it")
    p.add_argument(
        "--version",
        type=int,
        metavar="N",
        help="show earlier version N whole (numbers from `kb history`; a deleted passage's too)",
    )
    p.set_defaults(func=run_show)

    p = command("add", "add a new passage")
    p.add_argument("--id", required=True, help="a safe slug: a-z, 0-9, '-', '_', '.'")
    _content_options(p, text_required=True)
    p.set_defaults(func=run_add)

    p = command(
        "edit",
        "change a passage's text, title or tags; --tag replaces every tag it has, --add-tag "
        "keeps them",
    )
    p.add_argument("id", help=PASSAGE_ID)
    _content_options(p, text_required=False, editing=True)
    p.add_argument(
        "--add-tag",
        action="append",
        metavar="TAG",
        help="add a tag, keeping those the passage has; repeat for several",
    )
    p.add_argument("--clear-tags", action="store_true", help="remove every tag")
    p.set_defaults(func=run_edit)

    p = command("rm", "delete a passage (undo with `helpdesk kb restore ID`)")
    p.add_argument("id", help=PASSAGE_ID)
    p.set_defaults(func=run_rm)

    p = command("restore", "restore an earlier version (default: undo the last save or delete)")
    p.add_argument("id", help=PASSAGE_ID)
    p.add_argument("--version", type=int, metavar="N", help="version number from `kb history`")
    p.set_defaults(func=run_restore)

    p = command(
        "history",
        "list a passage's earlier versions (`kb show ID --version N` prints one whole)",
    )
    p.add_argument("id", help=PASSAGE_ID)
    p.set_defaults(func=run_history)

    p = command(
        "import",
        'add passages from a {"passages": [...]} file (rerank_data or export), a [...] list '
        "of passages, or a knowledge-base directory (with its synonyms.toml)",
    )
    p.add_argument(
        "file", type=path_argument, metavar="FILE|DIR", help="the file or folder to import"
    )
    p.add_argument("--replace", action="store_true", help="overwrite passages that exist")
    p.set_defaults(func=run_import)

    p = command("export", 'write every passage as one {"passages": [...]} JSON file')
    p.add_argument(
        "--output",
        "-o",
        type=_output_file,
        metavar="FILE",
        help="file to write, or '-' for standard output (the default); a FIFO or a device, such"
        " as /dev/stdout, is written to as it is",
    )
    p.set_defaults(func=run_export)

    p = command("check", "validate every passage; exit status 1 when there are problems")
    p.set_defaults(func=run_check)

    synonyms = sub.add_parser("synonyms", help="list, add or remove synonym groups",
                              description="Words customers use for the same thing.")  # fmt: skip
    ssub = synonyms.add_subparsers(title="synonyms commands", metavar="COMMAND",
                                   parser_class=type(parser))  # fmt: skip

    def synonyms_command(name: str, help: str) -> argparse.ArgumentParser:
        return ssub.add_parser(name, help=help, description=help, parents=[common])

    p = synonyms_command("list", "every group, one a line: word = synonym, synonym")
    p.set_defaults(func=run_synonyms_list)
    p = synonyms_command("add", "add synonyms to WORD's group (or start one)")
    p.add_argument("word", help="a word of the group to add to, or the first of a new one")
    p.add_argument("synonym", nargs="+", help="a word customers use for the same thing")
    p.set_defaults(func=run_synonyms_add)
    p = synonyms_command("rm", "remove WORD's group, or only the SYNONYMs given from it")
    p.add_argument("word", help="a word of the group")
    p.add_argument("synonym", nargs="*", help="a word to take out of it (none: the whole group)")
    p.set_defaults(func=run_synonyms_rm)


def _content_options(
    parser: argparse.ArgumentParser, *, text_required: bool, editing: bool = False
) -> None:
    text = parser.add_mutually_exclusive_group(required=text_required)
    text.add_argument("--text", help="the passage text")
    # Kept as typed: `Path` makes ./- (a file named -) the - of standard input.
    text.add_argument(
        "--text-file",
        metavar="FILE",
        help="read the text from FILE; - reads standard input (./- for a file named -)",
    )
    parser.add_argument("--title", help="short label shown as the answer's source (and searched)")
    tag = "a label, searched as the title and text are; repeat for several"
    if editing:  # `rides, safety` became `night` without a word.
        tag = "set the tags, replacing every tag it has (see --add-tag); repeat for several"
    parser.add_argument("--tag", action="append", metavar="TAG", help=tag)


def _output_file(text: str) -> Path | None:
    """`--output FILE`: "-" is standard output, as leaving it out is (None), not a file named
    "-" in the current folder (`./-` is that)."""
    if text == "-":
        return None
    return path_argument(text)


def _store(args: argparse.Namespace, *, create: bool = False) -> KnowledgeBaseStore:
    """The knowledge base `--kb` names. Only an import (`create`) makes one that is not there:
    a folder (see `PassageStore._locked`), or the tables of a PostgreSQL database."""
    from chatbot.assembly import open_knowledge_base

    settings = settings_from(args)
    location = settings.knowledge_base.path
    if isinstance(location, str):
        from chatbot.knowledge_base.postgres import PostgresPassageStore

        return PostgresPassageStore.open(
            location, timeout_s=settings.store.timeout_s, create=create
        )
    return open_knowledge_base(settings)


STDIN = "standard input"
"""How `--text-file -` is named in what is said about it."""


def _text(args: argparse.Namespace) -> str | None:
    from chatbot.knowledge_base.storage import KnowledgeBaseError, read_regular_file

    if args.text_file is None:
        text: str | None = args.text
        return text
    if args.text_file == "-":  # As `cat -`.
        name, content = STDIN, _read_stdin()
    else:
        path = Path(args.text_file)
        # A FIFO or a folder is one line, never a hang.
        name, content = str(path), read_regular_file(path, expected="a text file")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise KnowledgeBaseError(f"{name}: not UTF-8 text (byte {error.start})") from None


def _read_stdin() -> bytes:
    """`--text-file -`: standard input, whole, as bytes (the text is UTF-8 whatever the locale
    says), up to what a passage's file may hold: `< /dev/zero` is refused, not read forever. On
    a terminal, says how to end it, as nothing else would."""
    from chatbot.knowledge_base.storage import MAX_PASSAGE_FILE_BYTES, KnowledgeBaseError

    if sys.stdin is None:  # `<&-`: Python has no standard input at all.
        raise KnowledgeBaseError(f"{STDIN}: closed, nothing to read the text from")
    if sys.stdin.isatty():
        print("reading the passage text; end it with Ctrl+D on a line of its own",
              file=sys.stderr)  # fmt: skip
    stream = getattr(sys.stdin, "buffer", None)  # None: a text stream of a program's own.
    if stream is not None:
        content: bytes = stream.read(MAX_PASSAGE_FILE_BYTES + 1)
    else:
        content = sys.stdin.read(MAX_PASSAGE_FILE_BYTES + 1).encode("utf-8", "surrogateescape")
    if len(content) > MAX_PASSAGE_FILE_BYTES:
        raise KnowledgeBaseError(
            f"{STDIN}: larger than {MAX_PASSAGE_FILE_BYTES:,} bytes, not a passage"
        )
    return content


def make_passage(**fields: object) -> Passage:
    """A passage from command-line values, refused with one line naming the bad field."""
    from pydantic import ValidationError

    from chatbot.knowledge_base.models import Passage
    from chatbot.knowledge_base.storage import KnowledgeBaseError, describe_validation_error

    try:
        return Passage.model_validate(fields)
    except ValidationError as error:
        # A bad id already names itself; any other field is named with the passage it belongs to.
        bad_id = error.errors()[0]["loc"] == ("id",)
        where = "" if bad_id else f"passage {fields.get('id')!r}: "
        raise KnowledgeBaseError(f"{where}{describe_validation_error(error)}") from None


def run_list(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.storage import unusable

    scan = _store(args).scan()
    # Listed without the files that are not passages, as the engine loads it; each is named.
    for line in [*scan.skipped, *(unusable(problem, kept=False) for problem in scan.problems)]:
        print_warning(line)
    stored = scan.passages
    width = terminal_width()
    for item in stored:
        p = item.passage
        row = f"{p.id:<28} {len(p.text):>5} chars  "
        title = printable(p.title)
        print(row + (title if width is None else clip(title, max(width - cells(row), 4))))
    print(counted(len(stored), "passage"), file=sys.stderr)
    return 0


def _describe(
    item: StoredPassage, width: int | None = None, *, version: Version | None = None
) -> str:
    """The passage for a person; on a terminal (`width`) its text wrapped between words, each of
    its own lines kept. With `version`, the passage is that earlier version, and says so."""
    p = item.passage

    def field(label: str, value: str) -> list[str]:
        return wrap(value, width, " " * 10, first=f"{label + ':':<10}")

    return "\n".join([
        f"id:       {p.id}",
        *field("title", printable(p.title)),
        *field("tags", printable(", ".join(p.tags))),
        *([] if version is None else field("version", _version_line(version))),
        f"revision: {item.revision}",
        "",
        *wrap_lines(printable(p.text), width),
    ])  # fmt: skip


def _version_line(version: Version) -> str:
    when = version.archived_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{version.number}, archived {when}, replaced by {version.reason}"


def run_show(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.interface import PassageNotFoundError
    from chatbot.knowledge_base.store import passage_file_text

    store = _store(args)
    if args.version is not None:
        return _show_version(store, args)
    try:
        item = store.get(args.id)
    except PassageNotFoundError as error:
        if args.id in store.deleted():  # Said with the way back, not as if it never was.
            raise HelpdeskError(
                f"{error}: it was deleted; `helpdesk kb restore {args.id}` brings it back"
            ) from None
        raise
    if args.json:
        print(passage_file_text(item.passage), end="")
    else:
        print(_describe(item, terminal_width()))
    return 0


def _show_version(store: KnowledgeBaseStore, args: argparse.Namespace) -> int:
    """`kb show ID --version N`: what version N said, whole (`kb history` shows 60 characters)."""
    from chatbot.knowledge_base.interface import StoredPassage, choose_version
    from chatbot.knowledge_base.storage import KnowledgeBaseError

    version = choose_version(args.id, store.history(args.id), args.version)
    if version.problem is not None:  # Its history file cannot be read: nothing to show.
        raise KnowledgeBaseError(version.problem)
    if args.json:
        print(version.content, end="" if version.content.endswith("\n") else "\n")
        return 0
    try:
        passage = version.passage()
    except KnowledgeBaseError as error:  # A hand-broken file was archived as it was.
        print(f"version:  {printable(_version_line(version))}")
        print(f"(not a valid passage: {printable(str(error))})")
        print()
        print("\n".join(wrap_lines(printable(version.content), terminal_width())))
        return 0
    item = StoredPassage(passage, version.revision)
    print(_describe(item, terminal_width(), version=version))
    return 0


def run_add(args: argparse.Namespace) -> int:
    passage = make_passage(id=args.id, text=_text(args), title=args.title or "",
                           tags=tuple(args.tag or ()))  # fmt: skip
    store = _store(args)
    stored = store.add(passage)
    print(f"added {passage.id} (revision {stored.revision})")
    versions = store.history(passage.id)
    if versions:  # Said, not silently taken over: the deleted one is still restorable.
        print(f"a deleted passage had the id {passage.id}: its history continues under it "
              f"({counted(len(versions), 'earlier version')}; see helpdesk kb history "
              f"{passage.id}, and bring one back with helpdesk kb restore {passage.id} "
              "--version N)")  # fmt: skip
    return 0


def run_edit(args: argparse.Namespace) -> int:
    store = _store(args)
    current = store.get(args.id)
    old = current.passage
    text = _text(args)
    tags = () if args.clear_tags else old.tags
    if args.tag:  # Replaces every tag, as --help says; the output names what it replaced.
        tags = tuple(args.tag)
    for tag in args.add_tag or ():
        if tag not in tags:
            tags = (*tags, tag)
    passage = make_passage(
        id=old.id,
        text=old.text if text is None else text,
        title=old.title if args.title is None else args.title,
        tags=tags,
    )
    stored = store.save(passage, based_on=current.revision)
    if stored.revision == current.revision:
        print(f"{passage.id} unchanged")
        return 0
    print(f"saved {passage.id} (revision {stored.revision}; undo: helpdesk kb restore {old.id})")
    if passage.tags != old.tags:

        def tag_list(tags: tuple[str, ...]) -> str:
            return printable(", ".join(tags)) if tags else "(none)"

        print(f"tags: {tag_list(passage.tags)} (was: {tag_list(old.tags)})")
    return 0


def run_rm(args: argparse.Namespace) -> int:
    version = _store(args).delete(args.id)
    print(
        f"deleted {args.id} (kept as version {version.number}; undo: helpdesk kb restore {args.id})"
    )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.interface import choose_version

    store = _store(args)
    chosen = choose_version(args.id, store.history(args.id), args.version)
    current = _current_or_problem(store, args.id)[0]
    before = None if current is None else current.revision
    stored = store.restore(args.id, version=args.version)
    if stored.revision == before:
        print(f"{args.id} unchanged: version {chosen.number} is already the current version")
        return 0
    print(f"restored {args.id} (revision {stored.revision})")
    return 0


def run_history(args: argparse.Namespace) -> int:
    store = _store(args)
    versions = store.history(args.id)
    width = terminal_width()
    passages = [_passage_or_none(v) for v in versions]
    current, broken = _current_or_problem(store, args.id)
    now = None if current is None else current.passage
    for number, v in enumerate(versions):
        when = v.archived_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        passage = passages[number]
        if v.problem is not None:  # Its history file: only this version is lost, said whole.
            print(f"{v.number:>4}  {when}  unreadable: {printable(v.problem)}")
            continue
        if passage is not None:
            preview = printable(passage.text.replace("\n", " "))
        else:  # A hand-broken file was archived as it was.
            preview = "(not a valid passage) " + printable(v.content.replace("\n", " "))
        row = f"{v.number:>4}  {when}  replaced by {v.reason:<7}  "
        room = 60 if width is None else max(width - cells(row), 4)
        print(row + clip(preview, room))
        # What replaced it is the next version (or the current passage): a change of title or
        # tags alone left two rows that looked the same.
        after = passages[number + 1] if number + 1 < len(versions) else now
        if v.reason != "delete" and passage is not None and after is not None:
            for line in _field_changes(passage, after):
                print(" " * 6 + (line if width is None else clip(line, max(width - 6, 4))))
    if broken is not None:
        print(f"   -  current, unreadable: {printable(broken)}")
    elif store.exists(args.id):
        print("   -  current")
    else:
        print("   -  deleted (restore brings back the newest)")
    if versions:  # The previews of a long passage can all look alike.
        # After the rows, on a line of its own: written while they waited in a pipe's buffer, it
        # came before or amid them where both streams go to one place.
        sys.stdout.flush()
        print(f"To see a version whole: helpdesk kb show {args.id} --version N", file=sys.stderr)
    return 0


def _current_or_problem(
    store: KnowledgeBaseStore, passage_id: str
) -> tuple[StoredPassage | None, str | None]:
    """The passage as it is now (None: deleted), or, when its file cannot be read, None and why:
    a broken file stopped `kb history` and `kb restore`, the way to undo the edit that broke it."""
    from chatbot.knowledge_base.errors import KnowledgeBaseError, KnowledgeBaseUnreachable
    from chatbot.knowledge_base.interface import PassageNotFoundError

    try:
        return (store.get(passage_id) if store.exists(passage_id) else None), None
    except PassageNotFoundError:  # Deleted between the two looks.
        return None, None
    except KnowledgeBaseUnreachable:  # Nothing is wrong with the passage: said as an error.
        raise
    except KnowledgeBaseError as error:
        return None, str(error)


def _passage_or_none(version: Version) -> Passage | None:
    from chatbot.knowledge_base.storage import KnowledgeBaseError

    try:
        return version.passage()
    except KnowledgeBaseError:
        return None


def _field_changes(before: Passage, after: Passage) -> list[str]:
    """How the title and tags changed from `before` to `after`, one line each that did."""

    def tags(passage: Passage) -> str:
        return ", ".join(passage.tags) if passage.tags else "(none)"

    lines = []
    if before.title != after.title:
        lines.append(f"title: {before.title!r} -> {after.title!r}")
    if before.tags != after.tags:
        lines.append(f"tags: {tags(before)} -> {tags(after)}")
    return [printable(line) for line in lines]


def run_import(args: argparse.Namespace) -> int:
    from chatbot.i18n import DEFAULT_LOCALE, LOCALES
    from chatbot.knowledge_base.storage import (
        KnowledgeBaseError,
        load_knowledge_base,
        load_passages_file,
    )
    from chatbot.knowledge_base.synonyms import load_synonyms

    source: Path = args.file
    synonyms: tuple[SynonymGroup, ...] = ()
    translations: dict[str, list[Passage]] = {}
    # Every passage (and synonym) is validated before anything is written; the folder's
    # synonyms are about to be written, so they are held to what the editor can show.
    if source.is_dir():
        passages = load_knowledge_base(source, strict=True)
        synonyms = load_synonyms(source, strict=True)
        # Its translations (`zh/`) too: a copy of a knowledge base made by importing its folder
        # came out without them, and its Chinese customers answered from the English passages.
        for name in LOCALES:
            if name != DEFAULT_LOCALE and (source / name).is_dir():
                translations[name] = load_knowledge_base(source / name, strict=True)
    else:
        passages = load_passages_file(source)
    if not passages:
        # Refused before the store is opened, which makes a missing one: a mistyped folder
        # (`/etc`), or an empty list, became a new knowledge base with no passages, and every
        # question went to a person.
        raise KnowledgeBaseError(f"{source}: {_no_passages(source)}; nothing was imported")
    store = _store(args, create=True)
    merge: SynonymMerge | None = None
    revision: str | None = None
    if synonyms:  # A clash is refused here, before any passage is written.
        revision = store.synonyms_revision()
        merge = merge_synonyms(store.synonyms(), synonyms, replace=args.replace)
    report = store.import_passages(passages, replace=args.replace)
    if merge is not None and (merge.added or merge.replaced):
        store.save_synonyms(merge.groups, based_on=revision)
    counts = (f"{len(report.added)} added, {len(report.replaced)} replaced, "
              f"{len(report.unchanged)} unchanged")  # fmt: skip
    if merge is not None:
        counts += (f"; {counted(len(synonyms), 'synonym group')}: {len(merge.added)} added, "
                   f"{len(merge.replaced)} replaced, {len(merge.unchanged)} unchanged")  # fmt: skip
    print(f"imported {printable(str(source))}: {counts}")
    for folder, translated in translations.items():
        print(_import_translation(store, folder, translated, replace=args.replace))
    return 0


def _no_passages(source: Path) -> str:
    """What an import source with no passages holds instead, said to the one who named it."""
    if source.is_dir():
        return "no passages there (a knowledge-base folder holds a NAME.json file for each)"
    return "its list of passages is empty"


def _import_translation(
    store: KnowledgeBaseStore, locale: str, passages: list[Passage], *, replace: bool
) -> str:
    """Import a folder's translation into the same subfolder of a knowledge base on files; what
    came of it, as one line."""
    from chatbot.knowledge_base.store import PassageStore

    if not isinstance(store, PassageStore):
        return (f"  {locale}/: {counted(len(passages), 'passage')} not imported: a knowledge base "
                "on PostgreSQL holds no translations")  # fmt: skip
    report = PassageStore(store.directory / locale).import_passages(passages, replace=replace)
    return (f"  {locale}/: {len(report.added)} added, {len(report.replaced)} replaced, "
            f"{len(report.unchanged)} unchanged")  # fmt: skip


@dataclass
class SynonymMerge:
    """What importing synonym groups does to those stored: `groups`, all of them afterwards."""

    groups: list[SynonymGroup]
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def merge_synonyms(
    current: Sequence[SynonymGroup], imported: Sequence[SynonymGroup], *, replace: bool
) -> SynonymMerge:
    """The stored groups with the imported ones added, as passages are imported: a group whose
    word (head) starts a stored group with other words is refused unless `replace`, then it takes
    that group's place; the same group again is unchanged; the stored groups the import does not
    name stay."""
    from chatbot.knowledge_base.storage import KnowledgeBaseError
    from chatbot.knowledge_base.synonyms import group_line

    merge = SynonymMerge(list(current))
    for group in imported:
        at = _find_group(merge.groups, group[0])
        if at is None:
            merge.groups.append(group)
            merge.added.append(group[0])
        elif [w.casefold() for w in merge.groups[at]] == [w.casefold() for w in group]:
            merge.unchanged.append(group[0])
        elif replace:
            merge.groups[at] = group
            merge.replaced.append(group[0])
        else:
            raise KnowledgeBaseError(
                f"synonyms: {group[0]!r} already has a group ({group_line(merge.groups[at])}); "
                "use --replace to overwrite it (nothing was imported)"
            )
    return merge


def run_export(args: argparse.Namespace) -> int:
    from chatbot.files import write_text_atomic
    from chatbot.knowledge_base.storage import KnowledgeBaseError, export_passages

    given: Path | None = args.output
    descriptor = None if given is None else _own_descriptor(given)
    if descriptor == 1:  # /dev/stdout: standard output, as "-" and no --output are.
        given = None
    # A folder (".", "/", "x/..") has no file name to write beside and rename over: the atomic
    # write raised ValueError, a traceback. Refused before the knowledge base is read.
    if given is not None and (given.name in ("", "..") or given.is_dir()):
        raise KnowledgeBaseError(f"{given}: is a directory, expected a file to write")
    output = None if given is None or descriptor is not None else _export_target(given)
    store = _store(args)
    if given is not None and output is not None:
        _refuse_inside(store, given, output)
    passages = store.passages()
    text = json.dumps(export_passages(passages), indent=2, ensure_ascii=False) + "\n"
    if given is None:
        sys.stdout.write(text)
        return 0
    try:
        if output is None:
            # A descriptor of ours, a FIFO, a device: written to as it is, never replaced by a
            # file renamed over it (/dev/stdout led to "/proc/…/fd/pipe:[…]", no file to write
            # beside).
            _write_into(given, descriptor, text.encode("utf-8"))
        else:
            write_text_atomic(output, text)
    except BrokenPipeError:
        raise  # The reader went away: `main` exits 141, as it does for standard output.
    except OSError as error:
        raise KnowledgeBaseError(f"{given}: cannot write: {error.strerror or error}") from None
    exported = counted(len(passages), "passage")
    print(f"exported {exported} to {printable(str(given))}", file=sys.stderr)
    return 0


_DESCRIPTOR_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_FOLDERS = ("/dev/fd", "/proc/self/fd")


def _own_descriptor(output: Path) -> int | None:
    """The descriptor of this process `output` names (/dev/stdout, /dev/fd/3, /proc/self/fd/1),
    if it names one: written to as the shell opened it (`>> log` appends), not replaced."""
    import os

    name = os.path.normpath(os.path.abspath(output))
    if name in _DESCRIPTOR_NAMES:
        return _DESCRIPTOR_NAMES[name]
    folder, _, number = name.rpartition("/")
    own = folder in _DESCRIPTOR_FOLDERS or folder == f"/proc/{os.getpid()}/fd"
    return int(number) if own and number.isdigit() and number.isascii() else None


def _write_into(output: Path, descriptor: int | None, data: bytes) -> None:
    """Write `data` to `output` as it is: `descriptor` (one of ours it names), or the FIFO or
    device it is, opened without waiting (a FIFO nothing reads is refused, not waited on)."""
    import errno
    import os
    import stat

    from chatbot.knowledge_base.storage import KnowledgeBaseError

    if descriptor is not None:
        if descriptor == 2:
            sys.stderr.flush()
        _write_all(descriptor, data)
        return
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        opened = os.open(output, flags)
    except OSError as error:
        if error.errno == errno.ENXIO and stat.S_ISFIFO(output.stat().st_mode):
            raise KnowledgeBaseError(
                f"{output}: a FIFO (named pipe) nothing reads: start its reader first"
            ) from None
        raise
    try:
        os.set_blocking(opened, True)  # Opened without waiting; written as usual.
        _write_all(opened, data)
    finally:
        os.close(opened)


def _write_all(descriptor: int, data: bytes) -> None:
    import os

    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _export_target(output: Path) -> Path | None:
    """The file an export replaces: a symlink's target (the link stays a link), and only ever a
    regular file; None for a FIFO, a device or a socket, written to as it is (`_write_into`).
    The write renames a new file into place, which turned /dev/null into a plain file (as
    root), and a FIFO a reader waited on, or a symlink, into a file of its own."""
    import stat

    from chatbot.knowledge_base.storage import KnowledgeBaseError

    target = output.resolve() if output.is_symlink() else output
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target  # A new file (or a link to one not made yet).
    except OSError as error:
        raise KnowledgeBaseError(f"{output}: cannot write: {error.strerror or error}") from None
    return target if stat.S_ISREG(mode) else None


def _refuse_inside(store: KnowledgeBaseStore, given: Path, target: Path) -> None:
    """Refuse to write an export (`given`, which writes `target`) into the knowledge-base folder
    it is read from, symlinks resolved: `--output kb/helmet.json` replaced a passage with the
    export, which is no passage, and kept no history of it."""
    from chatbot.knowledge_base.storage import KnowledgeBaseError
    from chatbot.knowledge_base.store import PassageStore

    if not isinstance(store, PassageStore):
        return
    folder = store.directory.resolve()
    if target.resolve().is_relative_to(folder):
        raise KnowledgeBaseError(
            f"{given}: inside the knowledge base {store.directory}; write the export outside it"
        )


def run_synonyms_list(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.synonyms import group_line

    groups = _store(args).synonyms()
    for group in groups:
        print(printable(group_line(group)))
    print(counted(len(groups), "synonym group"), file=sys.stderr)
    return 0


def _find_group(groups: Sequence[SynonymGroup], word: str) -> int | None:
    """The group `word` starts (compared ignoring case), if any."""
    key = word.strip().casefold()
    return next((i for i, g in enumerate(groups) if g[0].casefold() == key), None)


def _save_group(store: KnowledgeBaseStore, revision: str | None, groups: list[SynonymGroup],
                at: int, words: list[str]) -> None:  # fmt: skip
    """Put `words` (head first) as group `at` (appended when `at` is past the end), checked as
    the editor checks a line, before anything is written: one line naming what is wrong."""
    from chatbot.knowledge_base.synonyms import parse_synonyms

    [group] = parse_synonyms({words[0]: words[1:]}, where="synonyms")
    groups[at:at + 1] = [group]  # fmt: skip
    store.save_synonyms(groups, based_on=revision)


def run_synonyms_add(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.synonyms import group_line

    store = _store(args)
    revision = store.synonyms_revision()
    groups = list(store.synonyms())
    at = _find_group(groups, args.word)
    joined = None
    if at is None:
        # A word already in another group joins that group: a second group of its own would
        # make the word bring in two unrelated sets of synonyms, which no one asked for.
        key = args.word.strip().casefold()
        joined = next((i for i, g in enumerate(groups) if key in {w.casefold() for w in g}), None)
        at = joined
    if at is None:
        at, words = len(groups), [args.word, *args.synonym]
    else:
        words = [*groups[at], *args.synonym]
    _save_group(store, revision, groups, at, [w.strip() for w in words])
    print(printable(group_line(store.synonyms()[at])))
    if joined is not None:
        head = printable(groups[joined][0])
        print(f"{printable(args.word.strip())!r} is in the group {head!r} already: added to it",
              file=sys.stderr)  # fmt: skip
    return 0


def run_synonyms_rm(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.storage import KnowledgeBaseError
    from chatbot.knowledge_base.synonyms import group_line

    store = _store(args)
    revision = store.synonyms_revision()
    try:
        groups = list(store.synonyms())
    except KnowledgeBaseError as error:
        if args.synonym:
            raise
        return _remove_bad_group(store, revision, args.word, error)
    at = _find_group(groups, args.word)
    if at is None:
        no_group = KnowledgeBaseError(f"synonyms: no group starts with {printable(args.word)!r}")
        if args.synonym:
            raise no_group
        # A group of one word (`Bike = "bike"`, written by an older helpdesk) is left out
        # when the file is read, but it is still in the file.
        return _remove_bad_group(store, revision, args.word, no_group)
    if not args.synonym:
        removed = groups.pop(at)
        store.save_synonyms(groups, based_on=revision)
        print(f"removed {printable(group_line(removed))}")
        return 0
    drop = {w.strip().casefold() for w in args.synonym}
    missing = drop - {w.casefold() for w in groups[at][1:]}
    if missing:
        word, synonym = printable(groups[at][0]), printable(sorted(missing)[0])
        raise KnowledgeBaseError(f"synonyms: {word!r} has no synonym {synonym!r}")
    words = [groups[at][0], *(w for w in groups[at][1:] if w.casefold() not in drop)]
    if len(words) < 2:
        groups.pop(at)
        store.save_synonyms(groups, based_on=revision)
        print(f"removed the group {printable(words[0])!r}: no synonyms left")
        return 0
    _save_group(store, revision, groups, at, words)
    print(printable(group_line(store.synonyms()[at])))
    return 0


def _remove_bad_group(
    store: KnowledgeBaseStore, revision: str | None, word: str, error: HelpdeskError
) -> int:
    """`rm WORD` on a `synonyms.toml` that does not load: the way out when WORD's own entry is
    the bad one (written by hand, or by an older helpdesk), which every other command refuses.
    Anything else is refused with the file's own problem, `error`."""
    from chatbot.knowledge_base.store import PassageStore
    from chatbot.knowledge_base.synonyms import SYNONYMS_FILE, groups_without

    if not isinstance(store, PassageStore):  # The database holds groups only as saved.
        raise error
    path = store.directory / SYNONYMS_FILE
    found = groups_without(path, word) if path.exists() else None
    if found is None:
        raise error
    groups, key = found
    store.save_synonyms(groups, based_on=revision)
    print(f"removed the group {printable(key)!r}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from chatbot.knowledge_base.storage import KnowledgeBaseError
    from chatbot.knowledge_base.store import PassageStore
    from chatbot.knowledge_base.synonyms import (
        SYNONYMS_FILE,
        entry_problems,
        read_synonyms_table,
    )

    store = _store(args)
    report = store.check()
    try:
        groups = store.synonyms()
    except KnowledgeBaseError as error:  # A broken synonyms.toml stops the engine loading.
        report.problems.append(str(error))
    else:
        # What reading accepts (an older helpdesk wrote it) but saving refuses, whichever backend
        # holds the groups: notes, as the knowledge base still loads.
        if isinstance(store, PassageStore):
            path = store.directory / SYNONYMS_FILE
            table = read_synonyms_table(path) if path.exists() else {}
            refused = entry_problems(table.items(), where=str(path))
        else:
            rows = [(group[0], list(group[1:])) for group in groups]
            refused = entry_problems(rows, where="synonyms")
        report.notes.extend(
            f"{line}; `helpdesk kb synonyms rm WORD` removes the group" for line in refused
        )
        report.notes.extend(_synonym_reach_notes(store, groups))
    for problem in report.problems:
        print(f"problem: {printable(problem)}")
    for note in report.notes:
        print(f"note: {printable(note)}")
    if report.problems:
        problems = counted(len(report.problems), "problem")
        print(f"{problems}, {counted(report.passages, 'good passage')}", file=sys.stderr)
        return 1
    print(f"ok: {counted(report.passages, 'passage')}")
    return 0


def _synonym_reach_notes(store: KnowledgeBaseStore, groups: Sequence[SynonymGroup]) -> list[str]:
    """A note for each group that can find nothing: no passage has any of its words, or none of
    the passages searched for questions in its words' language does (the main groups apply to
    every language; a Chinese group whose words only an English passage has finds nothing)."""
    from chatbot.i18n import LOCALES
    from chatbot.knowledge_base.store import PassageStore
    from chatbot.knowledge_base.synonyms import group_line
    from chatbot.knowledge_base.translated import searched_passages, synonyms_finding_nothing

    if isinstance(store, PassageStore):
        searched = searched_passages(store.directory)
    else:  # A knowledge base on PostgreSQL holds no translations: every question searches it.
        # The passages that can be read: `store.passages()` would warn of each broken one,
        # which the check has already reported.
        readable = [stored.passage for stored in store.scan().passages]
        searched = dict.fromkeys(LOCALES, readable)
    notes: list[str] = []
    for group, locale in synonyms_finding_nothing(searched, groups):
        if locale is None:
            notes.append(f"synonyms {group_line(group)!r}: no passage has any of these words, "
                         "so they find nothing")  # fmt: skip
        else:
            language = {"en": "English", "zh": "Chinese"}[locale]
            notes.append(f"synonyms {group_line(group)!r}: questions in these words ({language}) "
                         "are searched in passages none of which has any of them, so they find "
                         "nothing")  # fmt: skip
    return notes
