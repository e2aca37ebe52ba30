"""A minimal Language Server Protocol client for the tests: JSON-RPC over a
subprocess's stdin/stdout with Content-Length framing, as an editor speaks it."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional


class LspClient:
    def __init__(self, cwd: Optional[Path] = None) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "planner", "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.next_id = 0
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.notifications: list[dict] = []
        self.first: dict = {}  # (uri, version) -> the first diagnostics read of it (diagnostics(final=False))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # ---- framing ---------------------------------------------------------------------------
    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body.decode("utf-8")))

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
        self.proc.stdin.flush()

    # ---- messages -----------------------------------------------------------------------------
    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 60) -> dict:
        """Send a request; the whole response (``result`` or ``error``)."""
        self.next_id += 1
        ident = self.next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return self._wait(lambda m: m.get("id") == ident and "method" not in m, timeout)

    def wait_notification(self, method: str, where: Callable[[dict], bool] = lambda p: True,
                          timeout: float = 60) -> dict:
        for i, m in enumerate(self.notifications):
            if m["method"] == method and where(m["params"]):
                return self.notifications.pop(i)["params"]
        return self._wait(lambda m: m.get("method") == method and "id" not in m and where(m["params"]),
                          timeout)["params"]

    def _wait(self, match: Callable[[dict], bool], timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from the language server; stderr:\n" + self._stderr())
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if "method" in m and "id" in m:  # a request from the server (registerCapability ...): accept it
                self._send({"jsonrpc": "2.0", "id": m["id"], "result": None})
                continue
            if match(m):
                return m
            if "method" in m:
                self.notifications.append(m)

    def _stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode("utf-8", "replace")

    # ---- a session --------------------------------------------------------------------------------
    def initialize(self, root: Path, encodings: tuple[str, ...] = ("utf-16",)) -> dict:
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {
                "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                                 "rename": {"prepareSupport": True},
                                 "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                                 "publishDiagnostics": {"relatedInformation": True}},
                "general": {"positionEncodings": list(encodings)}}})
        self.notify("initialized", {})
        return result["result"]

    def open(self, path: Path, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "plan",
                                                              "version": version, "text": text}})

    def change(self, path: Path, text: str, version: int) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": path.as_uri(), "version": version},
                                               "contentChanges": [{"text": text}]})

    def diagnostics(self, path: Path, version: Optional[int] = None, timeout: float = 60,
                    final: bool = True, uri: Optional[str] = None) -> list[dict]:
        """The diagnostics of a document (of ``version``, if given). ``final``: the last ones published,
        once the server says it is done with that version (after the values and the checks); else the
        first ones (the syntax and the names, published on every keystroke)."""
        uri = uri or path.as_uri()

        def mine(p):
            return p["uri"] == uri and (version is None or p.get("version") == version)

        if not final:
            got = self.wait_notification("textDocument/publishDiagnostics", mine, timeout)
            self.first[(uri, got.get("version"))] = got
            return got["diagnostics"]
        done = self.wait_notification("$/planner/analysed", mine, timeout)
        found = [m for m in self.notifications if m["method"] == "textDocument/publishDiagnostics"
                 and m["params"]["uri"] == uri and m["params"].get("version") == done["version"]]
        if not found and (uri, done["version"]) in self.first:  # only the first ones, read already
            found = [{"params": self.first[(uri, done["version"])]}]
        assert found, "the server said it was done before publishing"
        self.notifications = [m for m in self.notifications if not (
            m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)]
        return found[-1]["params"]["diagnostics"]

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=20)
                self.notify("exit", None)
                return self.proc.wait(timeout=20)
            except (TimeoutError, BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
