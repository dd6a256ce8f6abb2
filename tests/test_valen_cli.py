"""`helpdesk ask` under every Valen fault, and secrets kept out of everything a run leaves.

The CLI runs in-process through `chatbot.cli.main.main` for the whole fault table, and as a real
subprocess for a few faults and for the secrets check, where what matters is every byte the
process printed or wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatbot.cli.main import main
from tests.conftest import ROOT, SHIPPED_CACHE
from tests.valen_faults import FAST, FAULTS, QUESTION, Fault, err, fault_id
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    closed_port_url,
    html_reply,
    probability_reply,
    scripted,
)

KEY = "sk-valen-test-5f1c0ffee0ddba11"


def fast_env(monkeypatch: pytest.MonkeyPatch, **settings: Any) -> None:
    """Tiny retry waits for the CLI, through the settings' long environment names."""
    for name, value in {**FAST, **settings}.items():
        monkeypatch.setenv(f"HELPDESK_VALEN__{name.upper()}", str(value).lower())


def ask_json(capsys: pytest.CaptureFixture[str], base_url: str, tmp_path: Path,
             *extra: str) -> tuple[int, dict[str, Any], str]:  # fmt: skip
    code = main(["ask", QUESTION, "--json", "--replay", "off", "--base-url", base_url,
                 "--cache", str(tmp_path / "cache.json"), "-k", "2", *extra])  # fmt: skip
    out, err_text = capsys.readouterr()
    return code, json.loads(out), err_text


# The CLI runs on the real clock: faults whose server asks for a wait of a second or more are
# covered on a fake clock in test_valen_faults.py, and `retry-after-ms: 300` still runs here.
QUICK_FAULTS = [fault for fault in FAULTS if fault.min_wait_s < 0.5]


@pytest.mark.parametrize("fault", QUICK_FAULTS, ids=fault_id)
def test_ask_under_each_fault_gives_the_right_reason_and_status(
    fault: Fault,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    fast_env(monkeypatch, **fault.settings)
    valen_server.responder = scripted(*fault.steps)
    code, decision, stderr = ask_json(capsys, valen_server.base_url, tmp_path)
    # 1 when Valen was asked and judged nothing (as `eval`), 0 once anything was judged.
    assert code == (1 if fault.reason == "valen-error" else 0) and "Traceback" not in stderr
    assert valen_server.count() == 2 * fault.attempts
    assert decision["reason"] == fault.reason
    if fault.reason is None:
        assert decision["answer"]["probability"] == 0.9
        return
    assert decision["answer"] is None
    for candidate in decision["candidates"]:
        assert candidate["probability"] is None
        assert candidate["error"].startswith(f"{fault.kind}"), candidate["error"]


def test_ask_answers_after_a_429_with_retry_after_ms(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    fast_env(monkeypatch)
    valen_server.responder = scripted(err(429, {"error": "slow down"}, **{"retry-after-ms": "200"}))
    code = main(["ask", QUESTION, "--replay", "off", "--base-url", valen_server.base_url,
                 "--cache", str(tmp_path / "c.json")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("Answer from card-charged-twice (probability 0.900)")
    assert valen_server.count() == 2 * 5  # Five passages, each limited once then answered.


def test_ask_with_every_passage_failing_differently_reports_valen_error(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    fast_env(monkeypatch)
    replies = iter([err(400, {"error": "bad"}), err(401, {"error": "who?"}), html_reply(200)])

    def respond(received: Received, index: int) -> Reply:
        return next(replies, err(503, {"detail": "busy"}))

    valen_server.responder = respond
    code, decision, _ = ask_json(capsys, valen_server.base_url, tmp_path, "-k", "3")
    assert code == 1 and decision["reason"] == "valen-error"  # Nothing judged.
    kinds = sorted(c["error"].split(" ")[0].split(":")[0] for c in decision["candidates"])
    assert kinds == ["auth", "bad-request", "invalid-response"]


def run_helpdesk(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatbot", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def subprocess_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The test's isolated environment, with HOME inside tmp_path so nothing lands elsewhere."""
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    for name, value in FAST.items():
        env[f"HELPDESK_VALEN__{name.upper()}"] = str(value)
    return {**env, **extra}


@pytest.mark.parametrize(
    ("steps", "kind"),
    [
        pytest.param((err(503, {"detail": "engine busy"}),) * 3, "server-error", id="503"),
        pytest.param((html_reply(200, "Attention Required"),), "invalid-response", id="html"),
        pytest.param((), "connection", id="refused"),
    ],
)
def test_ask_as_a_process_under_a_fault(
    steps: tuple[Reply, ...], kind: str, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(*steps)
    base_url = valen_server.base_url if steps else closed_port_url()
    result = run_helpdesk("ask", QUESTION, "--replay", "off", "--base-url", base_url, "-k", "2",
                          cwd=tmp_path, env=subprocess_env(tmp_path))  # fmt: skip
    assert result.returncode == 1, result.stderr  # Nothing judged.
    assert "Traceback" not in result.stderr
    first, *rest = result.stdout.splitlines()
    assert first == "Escalated to a person: valen-error"
    assert sum(f"not judged  {kind}" in line for line in rest) == 2


def test_record_run_with_a_key_leaves_it_nowhere(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    """Live + record with VALEN_API_KEY set; the server echoes the key in error bodies. After the
    run, neither stdout, stderr nor any file the run wrote contains the key (or its start)."""
    seen: list[str] = []

    def respond(received: Received, index: int) -> Reply:
        seen.append(received.headers.get("authorization", ""))
        header = received.headers.get("authorization", "")
        if "temporary hold" in received.body["input"]:
            return probability_reply(received, 0.91)
        if "refund" in received.body["input"].lower():
            return err(500, {"error": {"message": f"upstream rejected {header}"}})
        return err(401, {"detail": f"Incorrect API key provided: {header.split()[-1]}"})

    valen_server.responder = respond
    shipped = SHIPPED_CACHE.read_bytes()
    cache = tmp_path / "rec" / "cache.json"
    env = subprocess_env(tmp_path, VALEN_API_KEY=KEY, VALEN_CACHE=str(cache),
                         HELPDESK_DB=str(tmp_path / "db" / "helpdesk.sqlite3"))  # fmt: skip
    outputs = []
    for extra in ([], ["--json"]):
        result = run_helpdesk("ask", QUESTION, "--replay", "record", "--base-url",
                              valen_server.base_url, *extra, cwd=tmp_path, env=env)  # fmt: skip
        assert result.returncode == 0, result.stderr
        outputs += [result.stdout, result.stderr]
    check = run_helpdesk("valen", "check", "--base-url", valen_server.base_url,
                         cwd=tmp_path, env=env)  # fmt: skip
    outputs += [check.stdout, check.stderr]

    # The key did go out on the wire, so a leak was possible; the run really recorded.
    assert seen and all(value == f"Bearer {KEY}" for value in seen)
    entries = json.loads(cache.read_text())["entries"]
    assert [e["probability"] for e in entries.values()] == [0.91]
    assert "[redacted]" in "".join(outputs)

    for text in outputs:
        assert KEY not in text and KEY[:10] not in text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert cache in written
    for path in written:
        data = path.read_bytes()
        assert KEY.encode() not in data and KEY[:10].encode() not in data, path
    assert SHIPPED_CACHE.read_bytes() == shipped
