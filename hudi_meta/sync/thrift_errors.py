"""What both Thrift-based catalog clients (`hms`, `hiveserver2`) count as "the catalog is unavailable": a
broken or refused connection, a timeout, a server that hung up. Kept out of `catalog.py`, which must import
without the `hive` extra."""

from __future__ import annotations

import socket

from thrift.transport import TTransport

UNAVAILABLE = (TTransport.TTransportException, OSError, EOFError, socket.timeout)
