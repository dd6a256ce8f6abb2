"""The writable knowledge-base store: add, save, delete, history, restore, import, check."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import (
    ConflictError,
    DuplicatePassageError,
    PassageNotFoundError,
    PassageStore,
    passage_file_text,
)
from tests.conftest import SHIPPED_KB

NEW = Passage(id="lost-item", title="Lost items", tags=("rides",),
              text="Left something in a bike basket? Lost items are kept for 30 days.")  # fmt: skip


def test_files_are_written_in_the_shipped_format(kb_copy: Path) -> None:
    # Re-saving a shipped passage byte for byte means editing it is a one-file, small diff.
    path = kb_copy / "card-charged-twice.json"
    passage = PassageStore(kb_copy).get("card-charged-twice").passage
    assert passage_file_text(passage) == path.read_text(encoding="utf-8")


def test_add_writes_one_file_that_loads(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    stored = store.add(NEW)
    assert (kb_copy / "lost-item.json").is_file()
    assert store.get("lost-item") == stored
    assert NEW in load_knowledge_base(kb_copy)


def test_add_refuses_a_duplicate_id_and_keeps_the_original(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    before = (kb_copy / "helmet.json").read_bytes()
    with pytest.raises(DuplicatePassageError, match="passage 'helmet' already exists"):
        store.add(Passage(id="helmet", text="something else"))
    assert (kb_copy / "helmet.json").read_bytes() == before


def test_save_keeps_the_previous_version_and_restore_brings_it_back(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    original = store.get("helmet")
    edited = original.passage.model_copy(update={"text": "Helmets are free at every station."})
    saved = store.save(edited, based_on=original.revision)
    assert saved.revision != original.revision
    assert store.get("helmet").passage.text == "Helmets are free at every station."

    [version] = store.history("helmet")
    assert (version.number, version.reason) == (1, "edit")
    assert version.passage() == original.passage
    assert version.revision == original.revision

    restored = store.restore("helmet", version=1)
    assert restored.passage == original.passage
    assert restored.revision == original.revision
    # The restore itself is undoable: the edited text is now version 2.
    assert [v.passage().text for v in store.history("helmet")][-1] == edited.text


def test_saving_identical_content_adds_no_history(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    current = store.get("helmet")
    assert store.save(current.passage, based_on=current.revision) == current
    assert store.history("helmet") == []


def test_delete_is_undoable(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    original = store.get("damage-fee").passage
    version = store.delete("damage-fee")
    assert version.reason == "delete"
    assert not (kb_copy / "damage-fee.json").exists()
    assert "damage-fee" not in {p.id for p in load_knowledge_base(kb_copy)}
    assert store.deleted() == ["damage-fee"]

    store.restore("damage-fee")  # Default: the newest version, i.e. undo the delete.
    assert store.get("damage-fee").passage == original
    assert store.deleted() == []


def test_restore_of_an_unknown_version_names_the_known_ones(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    current = store.get("helmet")
    store.save(current.passage.model_copy(update={"text": "v2"}), based_on=current.revision)
    with pytest.raises(KnowledgeBaseError, match=r"no version 7 \(versions: 1\)"):
        store.restore("helmet", version=7)


def test_missing_passages_are_reported_by_id(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    with pytest.raises(PassageNotFoundError, match="passage 'nope' not found"):
        store.get("nope")
    with pytest.raises(PassageNotFoundError):
        store.delete("nope")
    with pytest.raises(PassageNotFoundError):
        store.history("nope")
    with pytest.raises(PassageNotFoundError):
        store.restore("nope")


def test_a_save_based_on_an_old_revision_is_refused(kb_copy: Path) -> None:
    # Two editors (two stores) open the same passage; the first save wins, the second is refused.
    first, second = PassageStore(kb_copy), PassageStore(kb_copy)
    seen_by_first, seen_by_second = first.get("helmet"), second.get("helmet")
    first.save(seen_by_first.passage.model_copy(update={"text": "first"}),
               based_on=seen_by_first.revision)  # fmt: skip
    message = "passage 'helmet' was changed by someone else since you opened it"
    with pytest.raises(ConflictError, match=message):
        second.save(seen_by_second.passage.model_copy(update={"text": "second"}),
                    based_on=seen_by_second.revision)  # fmt: skip
    assert first.get("helmet").passage.text == "first"
    with pytest.raises(ConflictError, match="changed by someone else"):
        second.delete("helmet", based_on=seen_by_second.revision)
    assert (kb_copy / "helmet.json").exists()


def test_a_save_after_someone_deleted_the_passage_is_refused(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    PassageStore(kb_copy).delete("helmet")
    with pytest.raises(ConflictError, match="'helmet' was deleted by someone else"):
        store.save(seen.passage, based_on=seen.revision)
    assert not (kb_copy / "helmet.json").exists()


def test_a_hand_edit_counts_as_a_change(kb_copy: Path) -> None:
    # The revision is the file's digest, so an edit in a text editor is detected too.
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    path = kb_copy / "helmet.json"
    path.write_text(path.read_text().replace("Helmets", "Helmets really"), encoding="utf-8")
    with pytest.raises(ConflictError):
        store.save(seen.passage, based_on=seen.revision)


def _as_a_coarse_clock_leaves_it(directory: Path, mtime_ns: int) -> None:
    """Put the directory's time back to `mtime_ns`, as a kernel whose file times tick once a
    jiffy (before Linux 6.13, say) leaves it for a write in the same tick as the last read."""
    os.utime(directory, ns=(directory.stat().st_atime_ns, mtime_ns))


@pytest.mark.parametrize("write", ["add", "save", "delete"])
def test_a_write_in_the_same_clock_tick_as_a_stamp_read_still_changes_the_stamp(
    kb_copy: Path, write: str
) -> None:
    """A running app reads the stamp, then another process writes within the same tick of the
    file clock: the directory's time does not move, and the change must not go unseen."""
    store = PassageStore(kb_copy)

    def save(text: str) -> None:
        current = store.get("helmet")
        store.save(current.passage.model_copy(update={"text": text}), based_on=current.revision)

    save("Kept.")  # So the lock file and the history folder are there already.
    read_at = kb_copy.stat().st_mtime_ns
    stamp = store.stamp()
    if write == "add":
        store.add(NEW)
    elif write == "save":  # Same name: only the file renamed over it is new.
        save("Kept a week.")
    else:
        store.delete("helmet")
    _as_a_coarse_clock_leaves_it(kb_copy, read_at)
    assert store.stamp() != stamp


def test_reading_leaves_the_stamp_alone(kb_copy: Path) -> None:
    # Else every poll after a read would rebuild the index for nothing.
    store = PassageStore(kb_copy)
    stamp = store.stamp()
    store.passages()
    store.scan()
    store.deleted()
    assert store.stamp() == stamp


@pytest.mark.parametrize(
    "bad_id, problem",
    [
        ("../x", "not a safe slug"),
        ("a/b", "not a safe slug"),
        ("", "id is empty"),
        ("x" * 65, "id has 65 characters; the limit is 64"),
        ("..", "not a safe slug"),
        ("/etc/passwd", "not a safe slug"),
        ("Upper", "not a safe slug"),
        (".hidden", "not a safe slug"),
        ("a\\b", "not a safe slug"),
    ],
)
def test_unsafe_ids_are_refused_before_touching_any_path(
    tmp_path: Path, bad_id: str, problem: str
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    store = PassageStore(kb)
    for operation in (
        lambda: store.get(bad_id),
        lambda: store.delete(bad_id),
        lambda: store.history(bad_id),
        lambda: store.restore(bad_id),
    ):
        with pytest.raises(KnowledgeBaseError, match=problem):
            operation()
    with pytest.raises(ValueError, match=problem):
        Passage(id=bad_id, text="hi")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["kb"]


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"text": ""}, "text is empty"),
        ({"text": " \n\t"}, "text is empty"),
        ({"text": "a" * 4001}, "at most 4000 characters"),
        ({"title": "t" * 201}, "at most 200 characters"),
    ],
)
def test_bad_input_is_refused_by_the_model(fields: dict[str, str], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Passage.model_validate({"id": "x", "text": "ok", **fields})


def test_the_size_cap_itself_is_accepted(tmp_path: Path) -> None:
    store = PassageStore(tmp_path)
    store.add(Passage(id="long", text="a" * 4000))
    assert len(store.get("long").passage.text) == 4000


def test_import_adds_everything_or_nothing(tmp_path: Path, kb_copy: Path) -> None:
    def contents() -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in kb_copy.glob("*.json")}

    store = PassageStore(kb_copy)
    before = contents()
    clash = [NEW, Passage(id="helmet", text="a different helmet text")]
    with pytest.raises(DuplicatePassageError, match="'helmet' already exists.*nothing was"):
        store.import_passages(clash)
    assert contents() == before
    assert not (kb_copy / ".history").exists()

    report = store.import_passages(clash, replace=True)
    assert (report.added, report.replaced) == (["lost-item"], ["helmet"])
    assert store.history("helmet")[0].reason == "import"
    again = store.import_passages(clash)
    assert again.unchanged == ["lost-item", "helmet"]


def test_an_import_creates_a_missing_directory_but_reads_do_not(tmp_path: Path) -> None:
    store = PassageStore(tmp_path / "new-kb")
    with pytest.raises(KnowledgeBaseError, match="knowledge base not found"):
        store.read_all()
    store.import_passages([NEW])
    assert [s.passage for s in store.read_all()] == [NEW]


def test_check_reports_every_problem_not_just_the_first(kb_copy: Path) -> None:
    (kb_copy / "broken.json").write_text("{", encoding="utf-8")
    (kb_copy / "wrong-name.json").write_text(json.dumps({"id": "other", "text": "x"}))
    (kb_copy / "empty.json").write_text(json.dumps({"id": "empty", "text": ""}))
    (kb_copy / ".helmet.json.abc.tmp").write_text("{half")
    report = PassageStore(kb_copy).check()
    assert len(report.problems) == 3
    assert any("broken.json: malformed JSON" in p for p in report.problems)
    assert any("does not match the file name" in p for p in report.problems)
    assert any("text is empty" in p for p in report.problems)
    assert report.passages == 10
    assert any("interrupted save" in n for n in report.notes)


def test_history_and_lock_files_are_not_passages(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    store.delete("helmet")
    store.restore("helmet")
    assert (kb_copy / ".history" / "helmet").is_dir()
    assert len(load_knowledge_base(kb_copy)) == 10
    assert store.check().problems == []


def test_the_shipped_knowledge_base_is_clean() -> None:
    # Read-only: tests never write to the shipped directory.
    report = PassageStore(SHIPPED_KB).check()
    assert report.problems == [] and report.passages == 10
