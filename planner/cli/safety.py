"""SIGTERM handled as Ctrl-C is, while a command runs (every temporary removed)."""

from __future__ import annotations




class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (every temporary removed), with its own exit status (143)."""


def _on_sigterm():
    """Handle SIGTERM as Ctrl-C while the command runs; returns what puts the default back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM") \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def terminated(signum, frame):
        raise _Terminated()

    signal.signal(signal.SIGTERM, terminated)
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)
