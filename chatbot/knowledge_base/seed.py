"""The user's own knowledge base, copied from the shipped one on first use.

The shipped passages are read-only data of the package (in a wheel they live in site-packages);
editing them in place would change a source checkout's tracked files. So the default knowledge
base is a copy in the user's data directory, made the first time it is needed.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from chatbot.files import fsync_directory, make_private_folders, write_new_file
from chatbot.i18n import LOCALES
from chatbot.knowledge_base.errors import shipped_knowledge_base

SEEDED_EXTRAS = ("README.md",)
"""Files besides the passages that a new knowledge base gets: the format, for a person editing."""


def shipped_translations() -> list[Path]:
    """The shipped knowledge base's translations: a subfolder per language (`zh/`)."""
    shipped = shipped_knowledge_base()
    return sorted(child for child in shipped.iterdir() if child.is_dir() and child.name in LOCALES)


_SEEDING: ContextVar[bool] = ContextVar("seeding", default=True)


@contextmanager
def no_seeding() -> Iterator[None]:
    """Within it, `seed_knowledge_base` makes nothing: for the commands that read the settings
    but never the knowledge base (`doctor`, `stats`, `conversations`), which must create nothing.
    The settings seed the default knowledge base when they are read, whoever reads them."""
    token = _SEEDING.set(False)
    try:
        yield
    finally:
        _SEEDING.reset(token)


def seed_knowledge_base(target: Path, *, source: Path | None = None) -> bool:
    """Copy the shipped passages into `target` unless it exists; True if this call made it.
    Nothing is copied inside `no_seeding`.

    The copy is built in a hidden folder beside `target` and renamed into place, so a crash or a
    second process seeding at the same moment never leaves a half-filled knowledge base."""
    if target.exists() or not _SEEDING.get():
        return False
    # Imported when there is something to copy: every start of every command comes here.
    from chatbot.knowledge_base.storage import list_passage_files, read_regular_file

    source = source if source is not None else shipped_knowledge_base()
    # The default knowledge base sits in the user's data folder beside the database, whose
    # folder is private: made here first, it must be made private here too.
    make_private_folders(target.parent)
    staging = target.parent / f".{target.name}.seeding-{secrets.token_hex(6)}"
    staging.mkdir()
    try:
        files = list(list_passage_files(source).files.values())
        files += [source / name for name in SEEDED_EXTRAS if (source / name).is_file()]
        for path in files:
            write_new_file(staging / path.name, read_regular_file(path))
        fsync_directory(staging)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if target.is_dir():  # Another process seeded it first: theirs is as good as ours.
            return False
        raise
    fsync_directory(target.parent)
    return True
