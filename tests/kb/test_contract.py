"""The knowledge-base store's contract: every backend (files, PostgreSQL) passes the same tests
with the same assertions. Two `open()`s of one backend are two processes' views of one knowledge
base, so "someone else" is always a real second store, never a second reference to one object."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.engine.engine import Engine
from chatbot.engine.live import LiveEngine
from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.interface import (
    ConflictError,
    DuplicatePassageError,
    PassageNotFoundError,
    passage_file_text,
    revision_of,
)
from chatbot.knowledge_base.storage import (
    KnowledgeBaseError,
    load_knowledge_base,
    load_passages_file,
)
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from tests.conftest import ROOT, SHIPPED_KB
from tests.kb.backends import KnowledgeBaseBackend, kb_backend

__all__ = ["kb_backend"]

HELMET = Passage(id="helmet", title="Helmets", tags=("safety",),
                 text="Helmets are not included with standard bikes.")  # fmt: skip
LOST = Passage(id="lost-item", title="Lost items", tags=("rides",),
               text="Left something in a bike basket? They are kept for 30 days.")  # fmt: skip


def seeded(backend: KnowledgeBaseBackend) -> None:
    backend.open().import_passages([HELMET])


def test_a_new_passage_reads_back_with_its_files_revision(kb_backend: KnowledgeBaseBackend) -> None:
    store = kb_backend.open()
    stored = store.add(LOST)
    # One passage has one revision whatever holds it, so exports and imports line up.
    assert stored.revision == revision_of(passage_file_text(LOST).encode("utf-8"))
    other = kb_backend.open()
    assert other.get("lost-item") == stored
    assert other.exists("lost-item") and not other.exists("helmet")
    assert other.passages() == [LOST]
    assert [s.passage.id for s in other.read_all()] == ["lost-item"]
    assert other.load().passages == [LOST]


def test_a_taken_id_is_refused_and_the_original_kept(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    with pytest.raises(DuplicatePassageError, match="passage 'helmet' already exists"):
        kb_backend.open().add(Passage(id="helmet", text="something else"))
    assert kb_backend.open().get("helmet").passage == HELMET


def test_save_keeps_history_and_restore_brings_it_back(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    store = kb_backend.open()
    original = store.get("helmet")
    edited = HELMET.model_copy(update={"text": "Helmets are free at every station."})
    saved = store.save(edited, based_on=original.revision)
    assert saved.revision != original.revision
    other = kb_backend.open()
    assert other.get("helmet") == saved
    [version] = other.history("helmet")
    assert (version.number, version.reason) == (1, "edit")
    assert version.passage() == HELMET and version.revision == original.revision

    restored = other.restore("helmet")
    assert restored.passage == HELMET and restored.revision == original.revision
    assert [(v.number, v.reason) for v in store.history("helmet")] == [(1, "edit"), (2, "restore")]
    assert store.history("helmet")[1].passage() == edited  # A restore can be undone too.


def test_saving_unchanged_text_writes_nothing(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    store = kb_backend.open()
    current = store.get("helmet")
    stamp = store.stamp()
    assert store.save(HELMET, based_on=current.revision) == current
    assert store.history("helmet") == []
    assert store.stamp() == stamp


def test_a_save_based_on_an_old_revision_is_refused(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    mine, theirs = kb_backend.open(), kb_backend.open()
    opened = mine.get("helmet")
    seen = theirs.get("helmet")
    theirs.save(HELMET.model_copy(update={"text": "Theirs."}), based_on=seen.revision)
    with pytest.raises(
        ConflictError, match="^passage 'helmet' was changed by someone else since you opened it$"
    ):
        mine.save(HELMET.model_copy(update={"text": "Mine."}), based_on=opened.revision)
    assert kb_backend.open().get("helmet").passage.text == "Theirs."
    assert len(kb_backend.open().history("helmet")) == 1  # The refused save kept nothing.


def test_a_save_of_a_passage_deleted_meanwhile_is_refused(
    kb_backend: KnowledgeBaseBackend,
) -> None:
    seeded(kb_backend)
    mine = kb_backend.open()
    opened = mine.get("helmet")
    kb_backend.open().delete("helmet")
    with pytest.raises(ConflictError, match="was deleted by someone else since you opened it"):
        mine.save(HELMET.model_copy(update={"text": "Mine."}), based_on=opened.revision)
    assert not kb_backend.open().exists("helmet")


def test_delete_keeps_the_passage_for_restore(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    store = kb_backend.open()
    version = store.delete("helmet")
    assert (version.number, version.reason) == (1, "delete")
    other = kb_backend.open()
    assert not other.exists("helmet") and other.passages() == []
    assert other.deleted() == ["helmet"]
    with pytest.raises(PassageNotFoundError, match="passage 'helmet' not found"):
        other.get("helmet")
    assert other.restore("helmet").passage == HELMET
    assert other.deleted() == [] and store.get("helmet").passage == HELMET
    report = other.check()
    assert (report.passages, report.problems, report.notes) == (1, [], [])


def test_delete_based_on_an_old_revision_is_refused(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    mine = kb_backend.open()
    opened = mine.get("helmet")
    theirs = kb_backend.open()
    theirs.save(HELMET.model_copy(update={"text": "Theirs."}), based_on=opened.revision)
    with pytest.raises(ConflictError, match="changed by someone else"):
        mine.delete("helmet", based_on=opened.revision)
    assert kb_backend.open().get("helmet").passage.text == "Theirs."


def test_missing_passages_and_versions_are_named(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    store = kb_backend.open()
    with pytest.raises(PassageNotFoundError, match="passage 'nope' not found"):
        store.delete("nope")
    with pytest.raises(PassageNotFoundError, match="passage 'nope' not found and has no history"):
        store.history("nope")
    assert store.history("helmet") == []
    with pytest.raises(PassageNotFoundError, match="'helmet' has no earlier versions"):
        store.restore("helmet")
    store.save(HELMET.model_copy(update={"text": "Two."}), based_on=store.get("helmet").revision)
    with pytest.raises(KnowledgeBaseError, match=r"no version 7 \(versions: 1\)"):
        store.restore("helmet", version=7)
    with pytest.raises(KnowledgeBaseError, match="is not a safe slug"):
        store.get("../etc/passwd")


def test_restore_a_chosen_version_based_on_the_revision_seen(
    kb_backend: KnowledgeBaseBackend,
) -> None:
    seeded(kb_backend)
    store = kb_backend.open()
    for text in ("Two.", "Three."):
        store.save(HELMET.model_copy(update={"text": text}), based_on=store.get("helmet").revision)
    seen = store.get("helmet")
    kb_backend.open().save(HELMET.model_copy(update={"text": "Four."}), based_on=seen.revision)
    with pytest.raises(ConflictError):
        store.restore("helmet", version=1, based_on=seen.revision)
    assert store.restore("helmet", version=2).passage.text == "Two."
    assert [v.reason for v in store.history("helmet")] == ["edit", "edit", "edit", "restore"]


def test_import_is_all_or_nothing_unless_replacing(kb_backend: KnowledgeBaseBackend) -> None:
    seeded(kb_backend)
    store = kb_backend.open()
    changed = HELMET.model_copy(update={"text": "Imported helmet text."})
    with pytest.raises(DuplicatePassageError, match="nothing was imported"):
        store.import_passages([LOST, changed])
    assert kb_backend.open().passages() == [HELMET]  # Not even the new one.

    report = store.import_passages([LOST, changed], replace=True)
    assert (report.added, report.replaced, report.unchanged) == (["lost-item"], ["helmet"], [])
    assert kb_backend.open().passages() == [changed, LOST]
    [version] = store.history("helmet")
    assert version.reason == "import" and version.passage() == HELMET

    again = store.import_passages([LOST, changed])
    assert (again.added, again.replaced, again.unchanged) == ([], [], ["lost-item", "helmet"])


def test_every_write_changes_the_stamp_and_a_refused_one_does_not(
    kb_backend: KnowledgeBaseBackend,
) -> None:
    store = kb_backend.open()
    store.import_passages([HELMET])
    watcher = kb_backend.open()
    stamps = [watcher.stamp()]

    def changed() -> bool:
        stamps.append(watcher.stamp())
        return stamps[-1] != stamps[-2]

    store.add(LOST)
    assert changed()
    store.save(
        LOST.model_copy(update={"text": "Kept a week."}), based_on=store.get(LOST.id).revision
    )
    assert changed()
    store.delete(LOST.id)
    assert changed()
    store.restore(LOST.id)
    assert changed()
    with pytest.raises(DuplicatePassageError):
        store.add(HELMET)
    assert not changed()


def test_synonyms_are_kept_with_the_passages(kb_backend: KnowledgeBaseBackend) -> None:
    store = kb_backend.open()
    store.import_passages([HELMET])
    assert store.synonyms() == ()
    groups = (("bike", "bicycle", "cycle"), ("return station", "dock"))
    store.set_synonyms(groups)
    assert kb_backend.open().synonyms() == groups


async def test_a_running_engine_sees_another_process_edit(
    kb_backend: KnowledgeBaseBackend,
) -> None:
    """A bot's engine follows the knowledge base: another process (`helpdesk kb add`) adds a
    passage, and the engine is rebuilt with it. On PostgreSQL the poll interval is an hour, so
    only the notification can wake it; files are polled, as before."""
    store = kb_backend.open()
    store.import_passages([HELMET])
    judge = PassageJudge(replay="on", cache=ReplayCache(ROOT / "caches" / "rerank.json"))
    engine = Engine(retriever=BM25Retriever(store.passages()), judge=judge)
    rebuilt = asyncio.Event()
    live = LiveEngine(engine, store, on_rebuilt=lambda _engine: rebuilt.set())

    def ids() -> list[str]:
        return sorted(p.id for p in live.engine.passages)

    async def rebuilt_with_lost() -> None:
        # Not the first rebuild: on files a poll may land between the other process creating its
        # temporary file and renaming it in, and rebuild (rightly) without the passage yet.
        while ids() != ["helmet", "lost-item"]:
            await rebuilt.wait()
            rebuilt.clear()

    interval = 3600.0 if kb_backend.announces else 0.05
    following = asyncio.create_task(live.follow(interval))
    try:
        if kb_backend.announces:  # Listening before the other process writes.
            await _listening(live)
        added = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "chatbot", "kb", "add", "--id", LOST.id, "--text", LOST.text,
             "--kb", kb_backend.location],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        await asyncio.wait_for(rebuilt_with_lost(), timeout=30)
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
    assert ids() == ["helmet", "lost-item"]


async def _listening(live: LiveEngine) -> None:
    """Wait until the follower's LISTEN is in place (a condition, not a pause): the server lists
    the listening backend in pg_stat_activity with its last query."""
    from chatbot.knowledge_base.postgres import PostgresPassageStore

    store = live.passages
    assert isinstance(store, PostgresPassageStore)
    conn = store.connect(autocommit=True)
    try:
        for _ in range(2000):
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND query LIKE 'LISTEN%%'"
            ).fetchone()
            if row is not None and row[0] > 0:
                return
            await asyncio.sleep(0.005)
        raise AssertionError("the follower never started listening")
    finally:
        conn.close()


def test_the_shipped_knowledge_base_imports_lists_and_exports_alike(
    kb_backend: KnowledgeBaseBackend, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from chatbot.cli.main import main

    assert main(["kb", "import", str(SHIPPED_KB), "--kb", kb_backend.location]) == 0
    assert "10 added, 0 replaced, 0 unchanged" in capsys.readouterr().out
    assert main(["kb", "list", "--kb", kb_backend.location]) == 0
    out, err = capsys.readouterr()
    ids = [line.split()[0] for line in out.splitlines()]
    assert ids == sorted(p.stem for p in SHIPPED_KB.glob("*.json"))
    assert "10 passages" in err
    assert main(["kb", "show", "helmet", "--kb", kb_backend.location]) == 0
    assert "revision: " in capsys.readouterr().out
    # An export re-imported changes nothing: both backends hold a passage as its file does.
    exported = tmp_path / "export.json"
    assert main(["kb", "export", "-o", str(exported), "--kb", kb_backend.location]) == 0
    assert load_passages_file(exported) == load_knowledge_base(SHIPPED_KB)
    assert main(["kb", "import", str(exported), "--kb", kb_backend.location]) == 0
    assert "0 added, 0 replaced, 10 unchanged" in capsys.readouterr().out


def test_the_kb_commands_edit_delete_and_restore_alike(
    kb_backend: KnowledgeBaseBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    from chatbot.cli.main import main

    def kb(*argv: str) -> tuple[int, str]:
        code = main(["kb", *argv, "--kb", kb_backend.location])
        out, err = capsys.readouterr()
        return code, out + err

    kb_backend.open().import_passages([HELMET])
    code, said = kb("edit", "helmet", "--text", "Helmets are free.")
    assert code == 0 and said.startswith("saved helmet (revision ")
    code, said = kb("history", "helmet")
    assert code == 0 and "replaced by edit" in said and "\n   -  current\n" in said
    code, said = kb("rm", "helmet")
    assert (code, said) == (0, "deleted helmet (kept as version 2; undo: helpdesk kb restore "
                               "helmet)\n")  # fmt: skip
    code, said = kb("show", "helmet")
    assert code == 2 and "passage 'helmet' not found" in said
    code, said = kb("restore", "helmet", "--version", "1")
    assert code == 0 and said.startswith("restored helmet (revision ")
    assert kb_backend.open().get("helmet").passage == HELMET
