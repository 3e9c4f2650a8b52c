"""Exceptions raised by the client. Every one derives from :class:`OpenturnError`."""

from __future__ import annotations

from typing import Any


class OpenturnError(Exception):
    """Base class of every error this package raises."""


class JsonRpcError(OpenturnError):
    """The daemon answered a request with a JSON-RPC error.

    ``code`` is the JSON-RPC code (-32602 for bad params, -32601 for an unknown method,
    -32001 for overload, ...) and ``data`` the error's optional ``data`` member, e.g.
    ``{"reason": "thread_busy"}``.
    """

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class DaemonExited(OpenturnError):
    """The daemon process ended (or closed its stdout) while the client still needed it.

    ``stderr_tail`` holds the last lines it logged, which usually say why.
    """

    def __init__(self, returncode: int | None, stderr_tail: list[str]) -> None:
        detail = "\n".join(stderr_tail[-20:])
        super().__init__(
            f"openturn exited (status {returncode})" + (f"; its last log lines:\n{detail}" if detail else "")
        )
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class ProtocolError(OpenturnError):
    """The daemon sent something this client cannot read (a bug on one side or the other)."""
