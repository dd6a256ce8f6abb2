"""The shipped Chinese knowledge base: the ten passages translated under the same ids, found by
the Chinese questions customers write, and the cookbook's questions in Chinese, which replay
mode cannot judge (no Valen answers are recorded for them) and so escalate as `not-judged`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from chatbot.assembly import build_engine, build_locale_engines
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.knowledge_base.store import PassageStore
from tests.backends import postgres_server
from tests.conftest import ROOT, SHIPPED_KB

ZH_KB = SHIPPED_KB / "zh"
CUSTOMER_ZH = ROOT / "tests" / "data" / "customer_questions_zh.json"
COOKBOOK_ZH = ROOT / "tests" / "data" / "rerank_data_zh.json"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_passage_is_translated_under_its_own_id() -> None:
    english = {p.id: p for p in load_knowledge_base(SHIPPED_KB)}
    chinese = {p.id: p for p in load_knowledge_base(ZH_KB)}
    assert chinese.keys() == english.keys() and len(chinese) == 10
    for pid, passage in chinese.items():
        assert passage.title and passage.text and passage.tags
        assert passage.text != english[pid].text
        # Figures survive translation: the same numbers, in the same order.
        digits = [t for t in english[pid].text.split() if t.strip(".,;?").isdigit()]
        for number in digits:
            assert number.strip(".,;?") in passage.text, (pid, number)


def test_chinese_customer_questions_find_their_passages(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "eval", str(CUSTOMER_ZH), "--passages", str(ZH_KB), "--json")
    assert code == 0, err
    rows = {r["retriever"]: (r["hits"], r["mrr"]) for r in json.loads(out)["retrieval"]}
    hits, mrr = rows["+ synonyms"]
    assert hits == 20 and mrr > 0.9
    assert rows["overlap (the cookbook's)"][0] < hits  # The cookbook's stand-in reads no Chinese.


def test_the_cookbooks_questions_in_chinese_escalate_as_not_judged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "eval", str(COOKBOOK_ZH), "--passages", str(ZH_KB), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["keyword_top1"] == 3  # Retrieval finds a right passage first every time...
    # ...but replay mode has no Valen answers for Chinese: each goes to a person, saying why.
    assert [q["answer_with"] for q in report["queries"]] == [None, None, None]
    question = json.loads(COOKBOOK_ZH.read_text(encoding="utf-8"))["queries"][0]["text"]
    code, out, err = run_cli(capsys, "ask", question, "--kb", str(ZH_KB), "--json")
    assert code == 0, err
    asked = json.loads(out)
    assert asked["answer"] is None and asked["reason"] == "not-judged"
    assert {c["id"] for c in asked["candidates"]} >= {"card-charged-twice", "refund-request"}


async def test_a_translation_is_found_beside_the_knowledge_base_or_left_out(
    kb_copy: Path, tmp_path: Path
) -> None:
    problems: list[str] = []
    async with httpx.AsyncClient() as http:
        with_zh = load_settings(knowledge_base={"path": kb_copy})
        main_engine = build_engine(with_zh, http)
        engines = build_locale_engines(with_zh, http, main_engine, on_problem=problems.append)
        assert list(engines) == ["zh"] and engines["zh"].engine.judge is main_engine.judge
        assert {p.id for p in engines["zh"].engine.passages} == {p.id for p in main_engine.passages}

        # No zh/ folder: Chinese conversations are answered from the main knowledge base.
        shutil.rmtree(kb_copy / "zh")
        assert build_locale_engines(with_zh, http, main_engine) == {}

        # A translation that cannot be read is reported and left out; the desk keeps answering.
        (kb_copy / "zh").mkdir()
        (kb_copy / "zh" / "synonyms.toml").write_text("{not toml", encoding="utf-8")
        assert build_locale_engines(with_zh, http, main_engine, on_problem=problems.append) == {}
    assert len(problems) == 1 and "zh knowledge base" in problems[0]


DEPOSIT_ZH = "我的押金什么时候退还？"
DEPOSIT = Passage(
    id="deposit", title="押金", text="押金会在注销账户后7个工作日内退还到您的银行卡。"
)


async def test_a_passage_written_in_chinese_in_the_main_knowledge_base_reaches_chinese_customers(
    kb_copy: Path,
) -> None:
    """The editor writes to the main knowledge base: a passage written there in Chinese (from a
    Chinese content gap, say) was never read by the engine Chinese conversations use."""
    main = PassageStore(kb_copy)
    main.add(DEPOSIT)
    helmet_zh = PassageStore(kb_copy / "zh").get("helmet").passage.text
    # The main knowledge base's English passage rewritten in Chinese: the translation still wins.
    main.save(Passage(id="helmet", text="头盔：请参阅说明。"), based_on=main.get("helmet").revision)
    settings = load_settings(knowledge_base={"path": kb_copy})
    zh = build_locale_engines(settings, None, build_engine(settings, None))["zh"]
    passages = {p.id: p for p in zh.engine.passages}
    assert set(passages) == {p.id for p in load_knowledge_base(ZH_KB)} | {"deposit"}
    assert passages["helmet"].text == helmet_zh

    # Followed like the translation itself: a later one is in the next rebuild.
    main.add(Passage(id="deposit-card", text="押金只能退还到原来的银行卡。"))
    assert zh.changed()
    rebuilt = await zh.rebuild()
    assert rebuilt is not None and "deposit-card" in {p.id for p in rebuilt.passages}


def test_ask_answers_a_chinese_question_from_the_engine_a_chinese_chat_uses(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`helpdesk ask` searched the main knowledge base for a Chinese question: an editor checking
    their passage there was told it matched when the chat never offered it."""
    PassageStore(kb_copy).add(DEPOSIT)
    settings = load_settings(knowledge_base={"path": kb_copy})
    zh = build_locale_engines(settings, None, build_engine(settings, None))["zh"].engine
    code, out, err = run_cli(capsys, "ask", DEPOSIT_ZH, "--kb", str(kb_copy), "--json")
    assert code == 0, err
    asked = [(c["id"], round(c["bm25"], 6)) for c in json.loads(out)["candidates"]]
    chat = [(r.passage.id, round(r.score, 6)) for r in zh.retrieve(DEPOSIT_ZH)]
    assert asked == chat and asked[0][0] == "deposit"


def test_importing_a_folder_brings_its_translations(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy made by importing a knowledge base's folder came out without `zh/`: its Chinese
    customers were answered from the English passages, and the output said nothing of it."""
    copy = tmp_path / "copy"
    code, out, err = run_cli(capsys, "kb", "import", str(kb_copy), "--kb", str(copy))
    assert code == 0, err
    assert out.splitlines()[1] == "  zh/: 10 added, 0 replaced, 0 unchanged"
    assert load_knowledge_base(copy / "zh") == load_knowledge_base(ZH_KB)
    # Again: the same passages are unchanged, translations included.
    code, out, err = run_cli(capsys, "kb", "import", str(kb_copy), "--kb", str(copy))
    assert code == 0 and out.splitlines()[1] == "  zh/: 0 added, 0 replaced, 10 unchanged"

    server = postgres_server()
    url = server.create(migrated=False)
    try:
        code, out, err = run_cli(capsys, "kb", "import", str(kb_copy), "--kb", url)
        assert code == 0, err
        assert out.splitlines()[1] == (
            "  zh/: 10 passages not imported: a knowledge base on PostgreSQL holds no translations"
        )
    finally:
        server.drop(url)
