"""JSON-RPC 2.0 over stdio, as the Language Server Protocol speaks it, in plain Python.

The server used pygls for this. Importing pygls, and lsprotocol's 550 attrs
classes with it, took 0.7-1.0 s before ``initialize`` could be answered: most
of the time an editor waited for the server to start (``python -X importtime
-m planner lsp`` showed it; ``benchmarks/lsp_typing.py`` measures it through
the protocol). What planner needs of the protocol is small: requests and
notifications carrying JSON objects, the open documents' texts kept in step
with the client's edits, and answers written as plain dicts. That is this
module, with the standard library only.

:class:`Endpoint` reads the messages :class:`planner.lsp.framing.Frames` has
checked on a reader thread and runs their handlers on an asyncio loop: a
handler may return its result or a coroutine (answered when it finishes; a
``$/cancelRequest`` cancels it). A handler that raises :class:`RequestFailed`
answers with that error; any other exception is a bug, answered with
*InternalError* and logged, and the server reads on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any, Callable, Optional

from .framing import Frames, LockedOutput

METHOD_NOT_FOUND, INTERNAL_ERROR = -32601, -32603
REQUEST_FAILED, REQUEST_CANCELLED = -32803, -32800


class RequestFailed(Exception):
    """An answer that is an error the user sees (a rename that cannot be done)."""

    def __init__(self, message: str, code: int = REQUEST_FAILED) -> None:
        super().__init__(message)
        self.code = code


class TextDocument:
    """An open document as the client has it: its text and version, edits applied as they come."""

    def __init__(self, uri: str, text: str, version: Optional[int]) -> None:
        self.uri = uri
        self.source = text
        self.version = version


class Endpoint:
    """Handlers by method name; :meth:`serve` reads the client's messages and answers them."""

    def __init__(self, out: LockedOutput) -> None:
        self.out = out
        self.handlers: dict[str, Callable[[Any], Any]] = {}
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.running: dict = {}  # a request's id -> the task answering it
        self.shutdown = False
        self.exit_code: Optional[int] = None

    def handle(self, method: str) -> Callable:
        def register(fn: Callable) -> Callable:
            self.handlers[method] = fn
            return fn
        return register

    # ---- writing ---------------------------------------------------------------------------------

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def _answer(self, ident, result: Any = None, error: Optional[tuple[int, str]] = None) -> None:
        if error is None:
            self.send({"id": ident, "result": result})
        else:
            self.send({"id": ident, "error": {"code": error[0], "message": error[1]}})

    # ---- reading -----------------------------------------------------------------------------------

    def serve(self, frames: Frames) -> int:
        """Answer the messages read from ``frames`` until ``exit`` or the end of the input; the exit status
        (0 after ``shutdown``, as the protocol says; 1 otherwise)."""
        self.loop = asyncio.new_event_loop()

        def read() -> None:
            while True:
                message = frames.next_message()
                if message is None:
                    break
                self.loop.call_soon_threadsafe(self._dispatch, message)
            self.loop.call_soon_threadsafe(self._stop, 0 if self.shutdown else 1)

        threading.Thread(target=read, name="planner-read", daemon=True).start()
        try:
            self.loop.run_forever()
        finally:
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
        return self.exit_code if self.exit_code is not None else 1

    def _stop(self, code: int) -> None:
        if self.exit_code is None:
            self.exit_code = code
        self.loop.stop()

    def _dispatch(self, message: dict) -> None:
        method = message.get("method")
        ident = message.get("id")
        is_request = "id" in message
        if method is None:
            return  # a response to a request of ours (none wait for one)
        if method == "exit":
            self._stop(0 if self.shutdown else 1)
            return
        if method == "shutdown":
            self.shutdown = True
            self._answer(ident, None)
            return
        if method == "$/cancelRequest":
            task = self.running.get((message.get("params") or {}).get("id"))
            if task is not None:
                task.cancel()
            return
        handler = self.handlers.get(method)
        if handler is None:
            if is_request:
                self._answer(ident, error=(METHOD_NOT_FOUND, f"{method}: not a method this server has"))
            return  # a notification nobody handles ($/setTrace, workspace folders ...): nothing to do
        params = message.get("params")
        try:
            result = handler(params if params is not None else {})
        except RequestFailed as exc:
            self._reply(is_request, ident, error=(exc.code, str(exc)))
            return
        except Exception as exc:  # noqa: BLE001  (a bug in planner: answer, log, read on)
            logging.exception("%s failed", method)
            self._reply(is_request, ident, error=(INTERNAL_ERROR, f"{method}: {type(exc).__name__}: {exc}"))
            return
        if asyncio.iscoroutine(result):
            task = self.loop.create_task(result)
            if is_request:
                self.running[ident] = task
            task.add_done_callback(lambda done: self._finished(method, is_request, ident, done))
            return
        self._reply(is_request, ident, result)

    def _reply(self, is_request: bool, ident, result: Any = None, error: Optional[tuple[int, str]] = None) -> None:
        if is_request:
            self._answer(ident, result, error)

    def _finished(self, method: str, is_request: bool, ident, task: asyncio.Task) -> None:
        self.running.pop(ident, None)
        if task.cancelled():
            self._reply(is_request, ident, error=(REQUEST_CANCELLED, f"{method}: cancelled"))
            return
        exc = task.exception()
        if exc is None:
            self._reply(is_request, ident, task.result())
        elif isinstance(exc, RequestFailed):
            self._reply(is_request, ident, error=(exc.code, str(exc)))
        else:
            logging.error("%s failed", method, exc_info=exc)
            self._reply(is_request, ident, error=(INTERNAL_ERROR, f"{method}: {type(exc).__name__}: {exc}"))

