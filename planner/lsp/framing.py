"""The server's input, checked before it is answered: a client that sends garbage gets an answer.

:class:`Frames` sits between stdin and the server (:mod:`planner.lsp.protocol`).
It reads the client's messages (``Content-Length`` headers, then a JSON body)
and hands on only messages that are whole, of a sane size and valid JSON-RPC
(:meth:`Frames.next_message`).
What it refuses is answered as the protocol says, on stdout, and the server
reads on:

* a header without a usable ``Content-Length`` (missing, not a number, larger
  than :data:`MAX_MESSAGE_BYTES`): -32600 *Invalid Request*, then the input is
  read line by line until the next ``Content-Length`` header (nothing of a
  huge body is kept in memory);
* a body that is not JSON (or not UTF-8): -32700 *Parse error*;
* JSON that is not a request, a notification or a response: -32600;
* a request before ``initialize``: -32002 *Server not initialized* (notifications
  before it are dropped, as the protocol says, except ``exit``).
"""

from __future__ import annotations

import json
import re
import threading
from typing import BinaryIO, Optional

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a plan is at most 8 MB (planner.language.limits); JSON escapes add some
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\S*)[ \t]*\n\Z", re.IGNORECASE)  # (searched: a refused
# body has no newline of its own, so the next message's header may follow it on the same line)

PARSE_ERROR, INVALID_REQUEST, NOT_INITIALIZED = -32700, -32600, -32002


class LockedOutput:
    """stdout for the server and for :class:`Frames`' own answers: each message written whole, under one lock."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.lock = threading.Lock()

    def write(self, data: bytes) -> int:
        with self.lock:
            self.raw.write(data)
            self.raw.flush()
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.raw.close()


class Frames:
    """A reader of stdin that gives only checked messages (:meth:`next_message`)."""

    def __init__(self, raw: BinaryIO, out: LockedOutput) -> None:
        self.raw = raw
        self.out = out
        self.initialized = False

    def next_message(self) -> Optional[dict]:
        """The next acceptable message, parsed; None at the end of the input."""
        while True:
            body = self._next_body()
            if body is None:
                return None
            message = self._check(body)
            if message is not None:
                return message

    # ---- the client's messages -----------------------------------------------------------------

    def _next_body(self) -> Optional[bytes]:
        """The next message's body, its headers read and checked; None at the end of the input."""
        length: Optional[int] = None
        bad: Optional[str] = None
        seen = False  # a header line read (blank lines between messages are not headers)
        while True:
            line = self.raw.readline(65536)
            if not line:
                return None
            if line.strip() == b"":
                if not seen:
                    continue
                if length is not None and bad is None:
                    body = self._read_exactly(length)
                    if body is None:
                        return None
                    return body
                self._error(None, INVALID_REQUEST, bad or "a message without a Content-Length header")
                length, bad, seen = None, None, False  # read on to the next header
                continue
            seen = True
            m = _LENGTH.search(line.rstrip(b"\r\n") + b"\n")
            if m is None:
                if b":" not in line:  # not a header: the rest of a refused body; wait for the next header
                    seen = False
                continue  # another header (Content-Type ...): ignored
            value = m.group(1)
            if not value.isdigit():
                bad = f"Content-Length is not a number: {value[:40].decode('ascii', 'replace')!r}"
            elif len(value) > 12 or int(value) > MAX_MESSAGE_BYTES:
                bad = f"Content-Length {value[:40].decode('ascii', 'replace')} is larger than the limit " \
                      f"({MAX_MESSAGE_BYTES:,} bytes)"
            else:
                length = int(value)

    def _read_exactly(self, n: int) -> Optional[bytes]:
        parts, left = [], n
        while left:
            part = self.raw.read(left)
            if not part:
                return None
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    def _check(self, body: bytes) -> Optional[dict]:
        """The message, when the server may have it; else answered here and None."""
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self._error(None, PARSE_ERROR, f"the message is not valid JSON: {exc}")
            return None
        if not isinstance(message, dict) or not ("method" in message or "id" in message) \
                or ("method" in message and not isinstance(message["method"], str)) \
                or ("id" in message and not isinstance(message["id"], (int, str, type(None)))):
            ident = message.get("id") if isinstance(message, dict) and isinstance(message.get("id"), (int, str)) \
                else None
            self._error(ident, INVALID_REQUEST, "not a JSON-RPC request, notification or response")
            return None
        method = message.get("method")
        if not self.initialized:
            if method == "initialize":
                self.initialized = True
            elif method == "exit" or method is None:
                return message
            else:
                if "id" in message:
                    self._error(message["id"], NOT_INITIALIZED, f"{method}: the server is not initialized yet "
                                "(send `initialize` first)")
                return None
        return message

    def _error(self, ident, code: int, text: str) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}}).encode("utf-8")
        self.out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
