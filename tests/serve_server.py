"""A `planner serve` server on a thread, for the tests and benchmarks that talk to the real server."""

import threading
import time

import uvicorn

from planner.outputs.serve.app import create_app, hosts_for, listen, url_of


class Running:
    """A server on a thread: ``url``; ``stop()`` ends it."""

    def __init__(self, session, host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0) -> None:
        self.sock = listen(host, port)
        self.url = url_of(self.sock)
        config = uvicorn.Config(create_app(session, hosts_for(host)), log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.server.install_signal_handlers = lambda: None  # not the main thread (uvicorn < 0.29)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self.server.started:
            self.stop()
            raise RuntimeError(f"the server did not start within {timeout} s")

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        self.sock.close()
