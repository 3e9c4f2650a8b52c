"""asyncio client for the openturn app-server: spawn the daemon, run threads and turns, stream
their notifications, answer approvals and client-tool calls.

Typed models of every protocol message live in :mod:`openturn_client.models`, generated from the
project's JSON Schema (``schema/openturn_protocol.schema.json``).
"""

from . import models
from .client import OpenturnClient, Thread, Turn, TurnResult
from .connection import Connection, Notification, decline_every_command
from .errors import DaemonExited, JsonRpcError, OpenturnError, ProtocolError

__all__ = [
    "Connection",
    "DaemonExited",
    "JsonRpcError",
    "Notification",
    "OpenturnClient",
    "OpenturnError",
    "ProtocolError",
    "Thread",
    "Turn",
    "TurnResult",
    "decline_every_command",
    "models",
]
