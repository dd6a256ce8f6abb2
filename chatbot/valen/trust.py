"""The CA certificates Valen's TLS trusts, and one line for a person when they cannot be used.

httpx (and so the app's transport) trusts the certificates in `SSL_CERT_FILE` when it is set, else
those in the folder `SSL_CERT_DIR`, else its bundled public CAs (certifi). A variable naming a
file that is not there, or one holding no certificate, raised Python's own error from inside
`ssl` (a traceback from `helpdesk valen check`; "unexpected FileNotFoundError while asking
Valen" for every passage of `helpdesk ask` and of a bot's questions). Here they are read once,
when the one HTTP client is made for an `https://` base URL, and a problem is a `HelpdeskError`
naming the variable. A client for an `http://` base URL makes no TLS connection and reads
neither variable.
"""

from __future__ import annotations

import functools
import os
import re
import ssl
import stat
from urllib.parse import urlsplit

import httpx

from chatbot.errors import HelpdeskError
from chatbot.text import printable

CA_FILE = "SSL_CERT_FILE"
CA_DIR = "SSL_CERT_DIR"
_ROLE = "it names the CA certificates Valen's TLS trusts"
# The names OpenSSL looks certificates up by in a folder: the subject's hash, then a number (a
# CRL's is `HASH.rN`); `openssl rehash` makes them. A PEM file under any other name is not read.
_HASHED = re.compile(r"[0-9a-f]{8}\.[0-9]+")
_SOURCE_LINE = re.compile(r"\s*\(_ssl\.c:\d+\)$")


class TrustProblem(HelpdeskError):
    """`SSL_CERT_FILE` or `SSL_CERT_DIR` names no usable CA certificates."""


def uses_tls(base_url: str) -> bool:
    """Whether requests to `base_url` go over TLS (and so read the trusted certificates)."""
    return urlsplit(base_url.strip()).scheme.lower() == "https"


def verifying_context() -> ssl.SSLContext:
    """httpx's verifying context for the environment's `SSL_CERT_FILE` / `SSL_CERT_DIR`, made once
    per process for each pair of values, and shared: loading the CA bundle costs ~20 ms of CPU,
    paid by every new client otherwise. A context is not changed once made, and may serve many
    connections at once. Raises `TrustProblem` when the variable in force names nothing usable."""
    # As httpx reads them: an empty variable is an unset one, and the folder counts only
    # without a file.
    return _context(os.environ.get(CA_FILE) or None, os.environ.get(CA_DIR) or None)


def context_for(base_url: str) -> ssl.SSLContext:
    """The context a client for `base_url` verifies servers with: `verifying_context` for an
    `https://` URL; for any other, one that trusts no certificate and reads no variable (no TLS
    connection is made to a plain `http://` Valen, and none could then pass unverified)."""
    if uses_tls(base_url):
        return verifying_context()
    return _trusting_nothing()


@functools.cache
def _trusting_nothing() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # Verifies, with no CA loaded.


@functools.cache
def _context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    # Not cached when it raises: a file put right is read at the next client.
    if cafile is not None:
        _check_file(cafile)
    elif capath is not None:
        _check_folder(capath)
    try:
        return httpx.create_ssl_context(verify=True)
    except OSError as error:  # ssl.SSLError is one.
        name, value = (CA_FILE, cafile) if cafile is not None else (CA_DIR, capath)
        raise _problem(name, value or "", _load_problem(error)) from None


def _problem(name: str, value: str, problem: str) -> TrustProblem:
    return TrustProblem(f"{name}={printable(value)}: {problem} ({_ROLE})")


def _check_file(path: str) -> None:
    """Refuse what OpenSSL would fail on, or never finish reading (a FIFO waits for a writer, a
    device such as /dev/zero never ends), before it reads."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # `/etc/passwd/ca.pem` is no file either.
        raise _problem(CA_FILE, path, "no such file") from None
    except OSError as error:
        raise _problem(CA_FILE, path, _os_problem(error)) from None
    if stat.S_ISDIR(mode):
        raise _problem(CA_FILE, path, "a folder, not a file")
    if not stat.S_ISREG(mode):
        raise _problem(CA_FILE, path, "not a regular file")


def _check_folder(path: str) -> None:
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        raise _problem(CA_DIR, path, "no such folder") from None
    except NotADirectoryError:
        raise _problem(CA_DIR, path, "a file, not a folder") from None
    except OSError as error:
        raise _problem(CA_DIR, path, _os_problem(error)) from None
    if not any(_HASHED.fullmatch(name) for name in names):
        raise _problem(
            CA_DIR,
            path,
            "holds no certificate by a hashed name, the only ones OpenSSL reads there; "
            "`openssl rehash` names them so",
        )


def _os_problem(error: OSError) -> str:
    return f"cannot be read: {error.strerror or type(error).__name__}"


def _load_problem(error: OSError) -> str:
    if isinstance(error, ssl.SSLError):
        if error.reason == "NO_CERTIFICATE_OR_CRL_FOUND":  # DER, a key alone, any other text.
            return "holds no certificate"
        # OpenSSL's words without where in CPython they came from: `[X509] PEM lib`.
        said = _SOURCE_LINE.sub("", str(error.args[1] if len(error.args) > 1 else error))
        return f"holds a certificate OpenSSL cannot read: {said}"
    if isinstance(error, FileNotFoundError):  # Gone since it was looked at.
        return "no such file"
    return _os_problem(error)
