"""Does a browser customer's session cost more memory with a larger knowledge base?

    python bench/web_kb_size.py [--sessions N] [--passages N] [--repo PATH ...]

In one run, `helpdesk serve --bots 1` twice (replaying the shipped recorded answers, the default):
once on a copy of the shipped knowledge base (10 passages), once on the same copy with N more
passages of ~1.5 KB of made-up words each (2,000 by default: some 3 MB of text). Each time
`--sessions` customers (20 by default) open `/`, one after another, each in a browser context of
its own, and once every session has painted and its memory stopped moving, each session's PSS
(`/proc/PID/smaps_rollup`, summed over its process tree) is read; the median is printed, with
the PSS of the fixed processes: the server, the bot worker, and the zygote's tree less the
sessions forked from it (the zygote and, where there is one, the process deciding the suggested
questions for every session). `--repo PATH` runs that checkout's code (its `chatbot`); given
more than once, each in turn on the same two knowledge bases: before and after a change, in one
run (`git worktree add /tmp/before REV` makes one).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, machine, median  # noqa: E402
from bench.web import (  # noqa: E402
    CHROMIUM_ARGS,
    environment,
    pss_bytes,
    serving,
    session_roots,
    settled_pss,
    tree,
    wait_until,
)

PASSAGE_BYTES = 1500


def passage_texts(count: int) -> list[str]:
    """`count` texts of about `PASSAGE_BYTES` characters of Zipf-drawn made-up words."""
    from bench.retrieval import synthetic_texts

    words = iter(synthetic_texts(count * 6))
    texts = []
    for _ in range(count):
        text = ""
        while len(text) < PASSAGE_BYTES:
            text = f"{text} {next(words)}".strip()
        texts.append(text)
    return texts


def make_knowledge_base(directory: Path, extra: int) -> Path:
    """A copy of the shipped knowledge base with `extra` generated passages added."""
    from chatbot.knowledge_base.models import Passage
    from chatbot.knowledge_base.store import passage_file_text
    from tests.conftest import SHIPPED_KB

    kb = directory / "kb"
    shutil.copytree(SHIPPED_KB, kb, ignore=shutil.ignore_patterns(".*"))
    for number, text in enumerate(passage_texts(extra)):
        passage = Passage(
            id=f"bench-{number:05d}", title=f"Bench passage {number}", tags=("bench",), text=text
        )
        (kb / f"{passage.id}.json").write_text(passage_file_text(passage))
    return kb


def kb_text_bytes(kb: Path) -> int:
    total = 0
    for path in kb.glob("*.json"):
        total += len(json.loads(path.read_text()).get("text", "").encode())
    return total


def measure(directory: Path, kb: Path, sessions: int, repo: Path) -> dict[str, float]:
    """`helpdesk serve` on `kb` with `sessions` idle customer sessions: PSS in MB."""
    from playwright.sync_api import sync_playwright

    from tests.web.harness import chromium as find_chromium

    argv = [sys.executable, "-m", "chatbot", "serve", "--port", "0", "--bots", "1"]
    argv += ["--db", str(directory / "helpdesk.sqlite3"), "--kb", str(kb)]
    # Every session comes from one address: the cap per address (8) would refuse the ninth.
    env = environment(directory) | {
        "PYTHONPATH": str(repo),
        "HELPDESK_WEB__MAX_SESSIONS_PER_ADDRESS": str(max(sessions, 8)),
    }
    with serving(argv, env, cwd=directory) as (process, url, roots):
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
            contexts = []
            try:
                for _ in range(sessions):
                    context = browser.new_context(viewport={"width": 1100, "height": 700})
                    contexts.append(context)
                    page = context.new_page()
                    page.goto(url + "/")
                    page.wait_for_selector("body.-first-byte", state="attached", timeout=120_000)
                wait_until(lambda: len(roots()) == sessions, 60, "every session's process")
                memory = settled_pss(roots())
                zygotes = session_roots(process.pid, "chatbot.web.zygote")
                bots = session_roots(process.pid, "chatbot bot")
                forked = {pid for root in roots() for pid in tree(root)}
                zygote_tree = [p for z in zygotes for p in tree(z) if p not in forked]
                figures = {
                    "session_pss_mb": median([m / 1e6 for m in memory]),
                    "server_pss_mb": pss_bytes([process.pid]) / 1e6,
                    "bot_pss_mb": pss_bytes([p for b in bots for p in tree(b)]) / 1e6,
                    "zygote_tree_pss_mb": pss_bytes(zygote_tree) / 1e6,
                    "zygote_tree_processes": len(zygote_tree),
                }
            finally:
                for context in contexts:
                    context.close()
                browser.close()
        return figures


def measure_code(repo: Path, sessions: int, kbs: dict[str, Path]) -> dict[str, object]:
    """Every figure for the code in `repo`, on each knowledge base."""
    result: dict[str, object] = {"repo": str(repo)}
    for name, kb in kbs.items():
        with tempfile.TemporaryDirectory() as directory:
            figures = measure(Path(directory), kb, sessions, repo)
        result[name] = {
            "passages": len(list(kb.glob("*.json"))),
            "text_kb": round(kb_text_bytes(kb) / 1e3, 1),
            **{key: round(value, 1) for key, value in figures.items()},
        }
    small, large = result["small"], result["large"]
    assert isinstance(small, dict) and isinstance(large, dict)
    result["session_growth_mb"] = round(large["session_pss_mb"] - small["session_pss_mb"], 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument(
        "--repo",
        type=Path,
        action="append",
        help="a checkout whose code runs (again for each, in turn: before and after a change);"
        " default: this one",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as small_dir, tempfile.TemporaryDirectory() as large_dir:
        kbs = {
            "small": make_knowledge_base(Path(small_dir), 0),
            "large": make_knowledge_base(Path(large_dir), args.passages),
        }
        runs = [measure_code(repo.resolve(), args.sessions, kbs) for repo in args.repo or [ROOT]]
    print(json.dumps({"sessions": args.sessions, "runs": runs, "machine": machine()}, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
