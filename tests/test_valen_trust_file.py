"""`SSL_CERT_FILE` or `SSL_CERT_DIR` naming no usable CA certificates is one line naming the
variable, for an `https://` Valen asked live: `helpdesk valen check` printed a traceback ending in
`FileNotFoundError` (or `ssl.SSLError: [X509: NO_CERTIFICATE_OR_CRL_FOUND]` for a file holding no
certificate), and `helpdesk ask` judged every passage "unexpected FileNotFoundError while asking
Valen", as a bot worker did every question. An `http://` Valen, or replaying only, makes no TLS
connection and does not care."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.errors import HelpdeskError
from tests.cli_run import run_cli
from tests.valen_faults import QUESTION
from tests.valen_server import ValenTestServer, closed_port_url

HTTPS = "https://127.0.0.1:9/v1"  # Never reached: the certificates are read before a request.
ROLE = "(it names the CA certificates Valen's TLS trusts)"


@pytest.fixture(autouse=True)
def live(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VALEN_API_KEY", "sk-trust-test")
    # The developer's shell may name its own bundle in either.
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def pem_certificate(folder: Path) -> Path:
    openssl = shutil.which("openssl")
    assert openssl is not None, "the openssl command makes the test's certificate: install it"
    cert = folder / "ca.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", "/CN=test CA", "-keyout", str(folder / "key.pem"),
         "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert


def bad_files(tmp_path: Path) -> list[tuple[str, str, str]]:
    """(variable, value, what is wrong) for each kind of unusable value."""
    not_pem = tmp_path / "notes.txt"
    not_pem.write_text("root:x:0:0:root:/root:/bin/bash\n")
    damaged = tmp_path / "damaged.pem"
    damaged.write_text("-----BEGIN CERTIFICATE-----\nZZZZ\n-----END CERTIFICATE-----\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # Read, it would wait for a writer for ever.
    unhashed = tmp_path / "certs"
    unhashed.mkdir()
    (unhashed / "ca.pem").write_text("x")
    return [
        ("SSL_CERT_FILE", str(tmp_path / "nope.pem"), "no such file"),
        ("SSL_CERT_FILE", str(not_pem), "holds no certificate"),
        ("SSL_CERT_FILE", str(damaged), "holds a certificate OpenSSL cannot read: [X509] PEM lib"),
        ("SSL_CERT_FILE", str(tmp_path), "a folder, not a file"),
        ("SSL_CERT_FILE", str(fifo), "not a regular file"),
        ("SSL_CERT_DIR", str(tmp_path / "nope"), "no such folder"),
        ("SSL_CERT_DIR", str(not_pem), "a file, not a folder"),
        ("SSL_CERT_DIR", str(unhashed), "holds no certificate by a hashed name"),
    ]


def test_each_unusable_value_is_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatbot.valen.trust import context_for

    for name, value, problem in bad_files(tmp_path):
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        monkeypatch.setenv(name, value)
        with pytest.raises(HelpdeskError) as caught:
            context_for(HTTPS)
        said = str(caught.value)
        assert said.startswith(f"{name}={value}: {problem}") and said.endswith(ROLE), said
        assert "\n" not in said
        context_for("http://127.0.0.1:9/v1")  # Plain HTTP reads neither.


def test_a_usable_file_or_folder_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatbot.valen.trust import context_for

    cert = pem_certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert context_for(HTTPS) is context_for(HTTPS)
    assert context_for(HTTPS).get_ca_certs()[0]["subject"] == ((("commonName", "test CA"),),)
    monkeypatch.delenv("SSL_CERT_FILE")
    hashed = tmp_path / "hashed"
    hashed.mkdir()
    (hashed / "0123abcd.0").write_bytes(cert.read_bytes())
    monkeypatch.setenv("SSL_CERT_DIR", str(hashed))
    context_for(HTTPS)


@pytest.mark.parametrize(
    ("value", "problem"), [("missing", "no such file"), ("passwd", "holds no certificate")]
)
def test_valen_check_says_which_variable_and_exits_2(
    value: str, problem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = tmp_path / value
    if value == "passwd":
        path.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(path))
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", HTTPS)
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: SSL_CERT_FILE={path}: {problem} {ROLE}\n"


def test_valen_check_names_a_bad_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "nope"))
    code, _, err = run_cli(capsys, "valen", "check", "--base-url", HTTPS)
    assert code == 2
    assert err == f"helpdesk: error: SSL_CERT_DIR={tmp_path / 'nope'}: no such folder {ROLE}\n"


def test_ask_and_eval_say_it_once_instead_of_failing_every_passage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    cache_copy: Path,
) -> None:  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nope.pem"))
    line = f"helpdesk: error: SSL_CERT_FILE={tmp_path / 'nope.pem'}: no such file {ROLE}\n"
    for replay in ("off", "record"):
        code, out, err = run_cli(capsys, "ask", QUESTION, "--replay", replay, "--base-url", HTTPS,
                                 "--cache", str(cache_copy))  # fmt: skip
        assert (code, out, err) == (2, "", line)
    data = Path(__file__).parent / "data" / "rerank_data.json"
    code, out, err = run_cli(capsys, "eval", str(data), "--replay", "off", "--base-url", HTTPS)
    assert (code, out, err) == (2, "", line)


def test_plain_http_and_replaying_do_not_care(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    valen_server: ValenTestServer, cache_copy: Path,
) -> None:  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nope.pem"))
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert (code, err) == (0, "") and "  result       ok" in out
    code, out, err = run_cli(capsys, "ask", QUESTION, "--replay", "off", "--base-url",
                             valen_server.base_url, "--cache", str(cache_copy))  # fmt: skip
    assert code == 0 and "SSL_CERT_FILE" not in out + err and "not judged" not in out, out + err
    # Replaying only sends nothing, whatever the base URL.
    code, out, err = run_cli(capsys, "ask", QUESTION, "--base-url", HTTPS,
                             "--cache", str(cache_copy))  # fmt: skip
    assert code == 0 and "SSL_CERT_FILE" not in out + err
    data = Path(__file__).parent / "data" / "rerank_data.json"
    code, out, err = run_cli(capsys, "eval", str(data), "--base-url", HTTPS,
                             "--cache", str(cache_copy))  # fmt: skip
    assert code == 0 and "SSL_CERT_FILE" not in out + err


def helpdesk_process(*args: str) -> subprocess.CompletedProcess[str]:
    """`helpdesk ARGS` in a process of its own: a worker or a server that starts runs until
    stopped, so one that does not refuse to start fails the test when the time is up."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-m", "chatbot", *args], cwd=root, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(root)}, timeout=30, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("command", [["bot"], ["serve", "--port", "0", "--bots", "0"]])
def test_a_bot_worker_or_server_says_it_at_start_and_makes_no_database(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nope.pem"))
    db = tmp_path / "desk.sqlite3"
    done = helpdesk_process(*command, "--db", str(db), "--replay", "off", "--base-url", HTTPS)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"helpdesk: error: SSL_CERT_FILE={tmp_path / 'nope.pem'}: no such file {ROLE}\n"
    )
    assert not db.exists()


def test_serve_and_bot_over_plain_http_do_not_care(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatbot.assembly import check_valen_trust
    from chatbot.config import load_settings

    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nope.pem"))
    check_valen_trust(load_settings(valen={"replay": "off", "base_url": closed_port_url()}))
    check_valen_trust(load_settings(valen={"replay": "on", "base_url": HTTPS}))
    with pytest.raises(HelpdeskError):
        check_valen_trust(load_settings(valen={"replay": "record", "base_url": HTTPS}))
