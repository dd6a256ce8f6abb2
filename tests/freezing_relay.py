"""A TCP relay on 127.0.0.1 that can stop passing bytes while keeping every connection open.

Frozen, it is a database server that went silent: the client's kernel still sees a live peer
(writes are accepted, nothing is reset) but no answer ever comes, as with a stopped server
process or a network path that drops packets. Thawed, it passes everything again. It can also
`cut()` every connection and refuse new ones until `restore()`: a server that went away.
"""

from __future__ import annotations

import select
import socket
import threading


class FreezingRelay:
    """Relays 127.0.0.1:`port` (chosen here) to `target`; `freeze()` and `thaw()` between."""

    def __init__(self, target: tuple[str, int]) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._flowing = threading.Event()
        self._flowing.set()
        self._closed = threading.Event()
        self._refusing = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.held = threading.Event()
        """Set once a byte waited at the relay while it was frozen: a call is being held."""
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self.held.clear()
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def cut(self) -> None:
        """Close every connection, both ways, and refuse new ones until `restore()`."""
        with self._lock:
            self._refusing = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    def restore(self) -> None:
        with self._lock:
            self._refusing = False

    def close(self) -> None:
        self._closed.set()
        self._flowing.set()
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                sock.close()

    def __enter__(self) -> FreezingRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._refusing:
                    _shut(client)
                    continue
            server = socket.create_connection(self._target)
            with self._lock:
                self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while not self._closed.is_set():
                ready, _, _ = select.select([source], [], [], 0.05)
                if not ready:
                    continue
                if not self._flowing.is_set():
                    self.held.set()
                    self._flowing.wait()  # Bytes stay in the kernel's buffer meanwhile.
                    continue
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
                self.passed(data, to_server=sink.getpeername()[1] == self._target[1])
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                _shut(sock)

    def passed(self, data: bytes, *, to_server: bool) -> None:
        """Called with each chunk once passed on (to the server, or back): a subclass may
        freeze on what it sees."""


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
