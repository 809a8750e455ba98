"""Transports move JSON-RPC messages between two peers, nothing more."""

from ._base import Incoming, InvalidIncoming, Message, RequestId, Transport, TransportInfo
from ._memory import MemoryTransport, memory_pair
from ._stdio import StdioClientTransport, spawn_stdio, stdio_server
from ._stream import LineTransport

__all__ = [
    "Incoming",
    "InvalidIncoming",
    "LineTransport",
    "MemoryTransport",
    "Message",
    "RequestId",
    "StdioClientTransport",
    "Transport",
    "TransportInfo",
    "memory_pair",
    "spawn_stdio",
    "stdio_server",
]
