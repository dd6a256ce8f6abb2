"""Turn `bench/run.py`'s JSON into the Markdown table kept in bench/README.md.

python bench/run.py --quick > /tmp/bench.json && python bench/report.py /tmp/bench.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Check = Callable[[dict[str, Any]], bool]

# key -> (what, goal as written in issues 6 and 13, whether the figure meets it)
GOALS: dict[str, tuple[str, str, Check]] = {
    "rerank_ratio_k5": ("judge 5 passages ÷ one judgment (300 ms server)", "≤ 1.2",
                        lambda r: r["rerank_ratio_k5"] <= 1.2),
    "rerank_ratio_k20": ("judge 20 passages ÷ one judgment", "≤ 1.5",
                         lambda r: r["rerank_ratio_k20"] <= 1.5),
    "rerank_ratio_kmax": ("judge 50 passages (largest k) ÷ one judgment", "≤ 1.5",
                          lambda r: r["rerank_ratio_kmax"] <= 1.5),
    "rerank_floor_ratio_kmax": ("bare asyncio + httpx, 50 ÷ one", "(floor)", lambda r: True),
    "concurrent_50_ratio": ("50 questions at once, k=5, wall ÷ bare asyncio + httpx", "≤ 1.3",
                            lambda r: r["concurrent_50_ratio"] <= 1.3),
    "concurrent_50_s": ("50 questions at once, k=5, 300 ms Valen, wall s", "—", lambda r: True),
    "concurrent_50_floor_s": ("bare asyncio + httpx, same 250 requests, wall s", "(floor)",
                              lambda r: True),
    "concurrent_50_aiohttp_floor_s": ("bare asyncio + aiohttp, same 250 requests, wall s",
                                      "(floor)", lambda r: True),
    "concurrent_50_aiohttp_ratio": ("50 questions at once, wall ÷ bare asyncio + aiohttp", "—",
                                    lambda r: True),
    "concurrent_50_transport_floor_s": ("bare httpx loop over the app's transport, wall s",
                                        "(floor)", lambda r: True),
    "valen_cpu_ms_per_request": ("client CPU per request, 50 questions at once, ms", "≤ 0.5",
                                 lambda r: r["valen_cpu_ms_per_request"] <= 0.5),
    "valen_cpu_floor_ms_per_request": ("bare asyncio + httpx CPU per request, ms", "(floor)",
                                       lambda r: True),
    "valen_cpu_aiohttp_floor_ms_per_request": ("bare asyncio + aiohttp CPU per request, ms",
                                               "(floor)", lambda r: True),
    "valen_cpu_transport_floor_ms_per_request": ("bare httpx loop over the app's transport, "
                                                 "CPU ms", "(floor)", lambda r: True),
    "retrieval_p50_ms_1m": ("BM25 top-5 query, 1,000,000 passages, p50 ms", "≤ 1.5",
                            lambda r: r["retrieval_p50_ms_1m"] <= 1.5),
    "retrieval_peer_p50_ms_1m": ("best exact peer (scipy CSR / numpy MaxScore), p50 ms",
                                 "(floor)", lambda r: True),
    "retrieval_p90_ms_1m": ("the same, p90 ms (queries of only common words)", "—",
                            lambda r: True),
    "retrieval_peer_p90_ms_1m": ("that peer, p90 ms", "(floor)", lambda r: True),
    "retrieval_p99_ms_1m": ("the same, p99 ms", "—", lambda r: True),
    "retrieval_peer_p99_ms_1m": ("that peer, p99 ms", "(floor)", lambda r: True),
    "retrieval_cpu_p50_ms_1m": ("p50 in thread CPU time (less moved by load than wall), ms", "—",
                                lambda r: True),
    "retrieval_peer_cpu_p50_ms_1m": ("that peer, p50 CPU ms", "(floor)", lambda r: True),
    "retrieval_identical_1m": ("top 5 identical to the peers' (and to BM25Okapi at 10k)", "true",
                               lambda r: r["retrieval_identical_1m"] is True
                               and r.get("retrieval_okapi_identical_10k", True) is True),
    "index_memory_mb_1m": ("BM25 index retained, 1,000,000 passages, MB", "≤ 400",
                           lambda r: r["index_memory_mb_1m"] <= 400),
    "index_peak_mb_1m": ("BM25 index build peak, 1,000,000 passages, MB", "≤ 800",
                         lambda r: r["index_peak_mb_1m"] <= 800),
    "index_build_s_100k": ("build the index from text (tokenizing included), 100,000, s", "≤ 3",
                           lambda r: r["index_build_s_100k"] <= 3),
    "index_build_cpu_s_100k": ("the same build's CPU time, s", "—", lambda r: True),
    "index_build_s_zh_100k": ("the same for 100,000 Chinese passages, s", "—", lambda r: True),
    "reindex_after_edit_ms_10k": ("one edited passage searchable, 10,000 passages, ms", "≤ 100",
                                  lambda r: r["reindex_after_edit_ms_10k"] <= 100),
    "ask_replay_hit_ms": ("Engine.answer, recorded judgments, in-process, ms", "≤ 5",
                          lambda r: r["ask_replay_hit_ms"] <= 5),
    "startup_ratio": ("process start to a focused question box ÷ a bare Textual app's", "≤ 1.5",
                      lambda r: r["startup_ratio"] <= 1.5),
    "startup_s": ("process start to the first screen, s", "—", lambda r: True),
    "startup_panels_s": ("process start to the whole screen (settings, desk, panels), s", "—",
                         lambda r: True),
    "startup_floor_s": ("the same for a bare Textual app (Static, Input, Footer), s", "(floor)",
                        lambda r: True),
    "help_s": ("`helpdesk --help`, a fresh process, wall s", "≤ 0.15",
               lambda r: r["help_s"] <= 0.15),
    "ask_replay_s": ("`helpdesk ask` on recorded answers, a fresh process, wall s", "≤ 0.3",
                     lambda r: r["ask_replay_s"] <= 0.3),
    "cli_floor_s": ("`python -c pass`, the same way, s", "(floor)", lambda r: True),
    "open_1000_message_conversation_s": ("open a 1,000-message conversation, s", "≤ 0.3",
                                         lambda r: r["open_1000_message_conversation_s"] <= 0.3),
    "queue_lost": ("conversations lost (8 escalating + 4 claiming processes)", "0",
                   lambda r: r["queue_lost"] == 0),
    "queue_double_claimed": ("conversations claimed twice", "0",
                             lambda r: r["queue_double_claimed"] == 0),
    "queue_claims_per_s": ("claim capacity: 4 processes claiming 2,000 waiting, claims/s",
                           "≥ 300", lambda r: r["queue_claims_per_s"] >= 300),
    "queue_pipeline_claims_per_s": ("the escalate-and-poll pipeline (8 + 4 processes), claims/s",
                                    "—", lambda r: True),
    "db_bytes_per_conversation": ("database bytes per conversation (question, decision, k=5)",
                                  "≤ 800", lambda r: r["db_bytes_per_conversation"] <= 800),
    "db_decision_share": ("share of those bytes in decisions' bodies", "—", lambda r: True),
    "bot_vs_bare": ("one bot worker ÷ bare asyncio + httpx, 50 questions outstanding, k=5",
                    "≥ 0.8", lambda r: r["bot_vs_bare"] >= 0.8),
    "bot_one_worker_qps": ("questions/s through one worker (in-process), 300 ms Valen", "—",
                           lambda r: True),
    "bot_bare_loop_qps": ("bare asyncio + httpx, the same requests, questions/s", "(floor)",
                          lambda r: True),
    "bot_qps_1_worker": ("questions/s, 1 `helpdesk bot` process, 50 at once", "—",
                         lambda r: True),
    "bot_qps_2_workers": ("questions/s, 2 processes, 50 at once each", "—", lambda r: True),
    "bot_qps_4_workers": ("questions/s, 4 processes, 50 at once each", "—", lambda r: True),
    "bot_qps_1_worker_c5": ("questions/s, 1 process, 5 at once (Valen-bound)", "—",
                            lambda r: True),
    "bot_qps_2_workers_c5": ("questions/s, 2 processes, 5 at once each", "—", lambda r: True),
    "bot_qps_4_workers_c5": ("questions/s, 4 processes, 5 at once each", "—", lambda r: True),
    "queue_change_ms_10k": ("queue panel, one commit by another process, 10k waiting, CPU ms",
                            "≤ 5", lambda r: r["queue_change_ms_10k"] <= 5),
    "queue_change_floor_ms_10k": ("the same reads as bare SQL + as many plain lines drawn, ms",
                                  "(floor)", lambda r: True),
    "datatable_change_ms_10k": ("the same change in Textual's DataTable with 10k rows, ms", "—",
                                lambda r: True),
    "queue_idle_cpu_pct_10k": ("app CPU %, another process commits 2/s, 10k waiting", "≤ 5",
                               lambda r: r["queue_idle_cpu_pct_10k"] <= 5),
    "queue_idle_cpu_floor_pct_10k": ("bare loop watching the same database, CPU %", "(floor)",
                                     lambda r: True),
    "queue_max_stall_ms_10k": ("longest event-loop stall in that window, ms", "≤ 50",
                               lambda r: r["queue_max_stall_ms_10k"] <= 50),
    "queue_max_stall_floor_ms_10k": ("bare loop, same window, ms", "(floor)", lambda r: True),
    "open_10000_message_conversation_s": ("open a 10,000-message conversation, s", "≤ 0.15",
                                          lambda r: r["open_10000_message_conversation_s"] <= 0.15),
    "open_10000_newest_page_floor_s": ("read its newest 100 entries, bare SQL, s", "(floor)",
                                       lambda r: True),
    "kb_load_ratio": ("load a knowledge base ÷ read, parse and validate each file", "≤ 1.3",
                      lambda r: r["kb_load_ratio"] <= 1.3),
    "kb_import_ratio": ("all-or-nothing import ÷ atomic writes one by one", "≤ 1.5",
                        lambda r: r["kb_import_ratio"] <= 1.5),
    "kb_notify_woke_p50_ms": ("PostgreSQL: another process's KB save to a follower woken by "
                              "NOTIFY, p50 ms", "≤ 50", lambda r: r["kb_notify_woke_p50_ms"] <= 50),
    "kb_notify_woke_p99_ms": ("the same, p99 ms", "≤ 100",
                              lambda r: r["kb_notify_woke_p99_ms"] <= 100),
    "kb_notify_live_p50_ms": ("the same to the follower's rebuilt index in place, p50 ms", "—",
                              lambda r: True),
    "kb_notify_live_p99_ms": ("the same, p99 ms", "—", lambda r: True),
    "kb_files_poll_live_p50_ms": ("files: a save to the follower's rebuilt index, polled every "
                                  "second, p50 ms", "—", lambda r: True),
    "kb_files_poll_live_p99_ms": ("the same, p99 ms", "—", lambda r: True),
    "web_first_paint_s": ("browser page load to the app's first paint, s", "—", lambda r: True),
    "web_first_paint_floor_s": ("the same with textual-serve and a bare Textual app, s",
                                "(floor)", lambda r: True),
    "web_first_paint_ratio": ("first paint ÷ the floor's", "—", lambda r: True),
    "web_session_pss_mb": ("memory of one idle browser session (PSS of its processes), MB", "—",
                           lambda r: True),
    "web_session_pss_floor_mb": ("the same for a bare Textual app, MB", "(floor)",
                                 lambda r: True),
    "web_session_pss_ratio": ("session memory ÷ the floor's", "—", lambda r: True),
    "web_session_rss_mb": ("the same as RSS (pages shared with the zygote counted whole), MB",
                           "—", lambda r: True),
    "web_server_pss_mb": ("`helpdesk serve`, its session zygote and one bot worker, MB", "—",
                          lambda r: True),
    "web_server_pss_floor_mb": ("textual-serve's own server, MB", "(floor)", lambda r: True),
    "web_sessions_per_24gib_host": ("idle sessions on 24 GiB (2 GiB kept back), estimated", "—",
                                    lambda r: True),
}  # fmt: skip


def table(results: dict[str, Any]) -> str:
    lines = ["| key | what | goal | latest | met |", "|---|---|---|---|---|"]
    for key, (what, goal, check) in GOALS.items():
        if key not in results:
            continue
        value = results[key]
        shown = json.dumps(value)
        met = "—" if goal in ("(floor)", "—") else "yes" if check(results) else "**no**"
        lines.append(f"| `{key}` | {what} | {goal} | {shown} | {met} |")
    return "\n".join(lines)


def main() -> None:
    source = Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else sys.stdin.read()
    print(table(json.loads(source)))


if __name__ == "__main__":
    main()
