"""``repr`` of floats in a second process, for :mod:`planner.outputs.stream`: a big sweep's text is
mostly the ``repr`` of its floats (three quarters of a 1,000,000-point CSV), and a machine has
more than one core.

The worker is this same Python (``sys.executable``) running :data:`WORKER`, which imports nothing
but :mod:`array` and :mod:`sys` (not planner: it need not be importable there, and nothing of the
parent's ``__main__`` is run again, as :mod:`multiprocessing` would). It reads requests on its
stdin and answers on its stdout, in turn: a request is a count of parts, then each part as its
length and its float64 values (machine order); the answer, each part's ``repr`` of each value, one
a line, as its length and its ASCII text. Its stderr goes nowhere: when it fails, the caller
formats the values itself."""

from __future__ import annotations

import struct
import subprocess
import sys
from typing import Optional, Sequence

WORKER = r"""
import sys
from array import array
read, write = sys.stdin.buffer.read, sys.stdout.buffer.write
def exact(n):
    data = read(n)
    if len(data) != n:
        raise SystemExit(0)
    return data
while True:
    head = read(8)
    if len(head) != 8:
        break
    parts = [exact(int.from_bytes(exact(8), "little")) for _ in range(int.from_bytes(head, "little"))]
    out = []  # (the whole request read first: the caller goes on with its share once it is sent)
    for data in parts:
        values = array("d")
        values.frombytes(data)
        text = "\n".join(map(repr, values)).encode("ascii")
        out.append(len(text).to_bytes(8, "little") + text)
    write(b"".join(out))
    sys.stdout.buffer.flush()
"""


class Worker:
    """A second process that formats floats; :meth:`send` a request, then :meth:`receive` its answer
    (meanwhile this process does its own share). Raises OSError when the worker cannot start or
    has failed; :meth:`close` stops it."""

    def __init__(self) -> None:
        self.proc: Optional[subprocess.Popen] = subprocess.Popen(
            [sys.executable, "-S", "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.count = 0

    def send(self, parts: Sequence[bytes]) -> None:
        if self.proc is None:
            raise OSError("the worker is stopped")
        head = struct.pack("<Q", len(parts)) + b"".join(struct.pack("<Q", len(p)) + p for p in parts)
        try:
            self.proc.stdin.write(head)
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise OSError(f"the worker stopped: {exc}") from None
        self.count = len(parts)

    def receive(self) -> list[str]:
        if self.proc is None:
            raise OSError("the worker is stopped")
        out = []
        for _ in range(self.count):
            size = struct.unpack("<Q", self._exact(8))[0]
            out.append(self._exact(size).decode("ascii"))
        self.count = 0
        return out

    def _exact(self, n: int) -> bytes:
        data = self.proc.stdout.read(n)
        if len(data) != n:
            raise OSError("the worker stopped")
        return data

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
