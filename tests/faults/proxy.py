"""A TCP proxy that can cut kandev off from its database (the fault runs)."""

import selectors
import socket
import threading


class TcpProxy:
    """Forwards 127.0.0.1:<port> to `target`. `cut()` drops every open connection and
    refuses new ones (what clients see while PostgreSQL restarts); `cut(hang=True)` instead
    leaves new connections unanswered (a partitioned network); `restore()` ends either."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut_off = False
        self.hang = False
        self.held: list[socket.socket] = []
        self.pairs: set[tuple[socket.socket, socket.socket]] = set()
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut_off:
                if self.hang:
                    self.held.append(client)
                else:
                    client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            pair = (client, upstream)
            with self.lock:
                self.pairs.add(pair)
            threading.Thread(target=self._pump, args=(pair,), daemon=True).start()

    def _pump(self, pair) -> None:
        client, upstream = pair
        peer = {client: upstream, upstream: client}
        with selectors.DefaultSelector() as selector:
            for s in pair:
                selector.register(s, selectors.EVENT_READ)
            try:
                while True:
                    for key, _ in selector.select(timeout=0.5):
                        data = key.fileobj.recv(65536)
                        if not data:
                            raise ConnectionError
                        peer[key.fileobj].sendall(data)
                    if self.cut_off or self.stopping:
                        raise ConnectionError
            except (OSError, ConnectionError):
                pass
            finally:
                with self.lock:
                    self.pairs.discard(pair)
                for s in pair:
                    s.close()

    def cut(self, *, hang: bool = False) -> None:
        self.hang = hang
        self.cut_off = True
        with self.lock:
            pairs = list(self.pairs)
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def restore(self) -> None:
        self.cut_off = False
        held, self.held = self.held, []
        for s in held:
            s.close()

    def close(self) -> None:
        self.stopping = True
        self.cut()
        self.listener.close()
        self.thread.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
