"""Which origins may sign in and open websockets."""

from __future__ import annotations

from chatbot.web.security import allowed_origins, origin_of


def test_origins_are_normalised() -> None:
    assert origin_of("HTTP://LocalHost:8000/path?q") == "http://localhost:8000"
    assert origin_of("https://help.example.com:443") == "https://help.example.com"
    assert origin_of("http://[::1]:8000") == "http://[::1]:8000"


def test_loopback_on_our_port_and_the_public_url_only() -> None:
    allowed = allowed_origins(host="127.0.0.1", port=8000, public_url=None)
    assert allowed == {"http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"}
    behind_proxy = allowed_origins(
        host="0.0.0.0", port=8000, public_url="https://help.example.com/"
    )
    assert "https://help.example.com" in behind_proxy
    assert "http://0.0.0.0:8000" not in behind_proxy
    assert "http://help.example.com" not in behind_proxy  # The plain-HTTP twin is another origin.
    specific = allowed_origins(host="10.1.2.3", port=9000, public_url=None)
    assert "http://10.1.2.3:9000" in specific and "http://10.1.2.3:8000" not in specific
