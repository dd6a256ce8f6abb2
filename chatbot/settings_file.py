"""Writing one setting into the user's settings file, keeping everything else in it.

tomlkit edits the parsed document and writes it back with the person's comments, blank lines,
key order and quoting as they were (tomli-w only writes a dict, so it would drop every comment).
The new file replaces the old in one rename, so a crash leaves one or the other, never half; a file
that is not valid TOML is left alone with a one-line error, never overwritten. A settings file that
is a symbolic link (into a dotfiles repository, say) is written through to its target, the new
file made beside the target: renamed over the link, it became a plain file, and the file it
pointed at was never changed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from chatbot.config import MAX_CONFIG_BYTES, config_file
from chatbot.errors import HelpdeskError
from chatbot.files import read_regular_file, write_target


def save_setting(section: str, key: str, value: str, *, path: Path | None = None) -> Path:
    """Set `[section] key = value` in the settings file (created, private, if missing); returns
    the file written."""
    path = config_file() if path is None else path
    try:
        # Never a FIFO's open, which waited for a writer: only a regular file is read. Its line
        # ends read as `read_text` reads them.
        text = read_regular_file(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as error:
        raise HelpdeskError(f"cannot update {path}: {_reason(error)}") from None
    if len(text) > MAX_CONFIG_BYTES:
        raise HelpdeskError(f"cannot update {path}: larger than 1 MiB")
    # A byte order mark first (Notepad saves one) is read past, as the settings loader does, and
    # written back: the file stays as its editor saved it.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    try:
        document = tomlkit.parse(text.removeprefix(bom))
        table = document.get(section)
        if table is None:
            table = tomlkit.table()
            document[section] = table
        elif not isinstance(table, Table):
            raise HelpdeskError(f"cannot update {path}: {section!r} is not a table")
        table[key] = value
        updated = bom + tomlkit.dumps(document)
    except TOMLKitError as error:
        raise HelpdeskError(f"cannot update {path}: not valid TOML ({error})") from None
    _replace(path, updated)
    return path


def _replace(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = write_target(path)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise HelpdeskError(f"cannot update {path}: {_reason(error)}") from None


def _reason(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte {error.start})"
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)
