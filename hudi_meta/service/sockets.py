"""The listening socket the web UI is served on (`serve`, the quickstart): bound before anything else starts, so
an address that cannot be had is one line up front."""

from __future__ import annotations

import socket

from hudi_meta.errors import HudiMetaError


def listening_socket(host: str, port: int) -> socket.socket:
    """Bind the address now, so a bad one is one clear line before the server starts."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise HudiMetaError(f"--host {host!r}: {e.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise HudiMetaError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(128)
    return sock
