"""`serve`: the web UI (design.md section 9) on waitress, a production WSGI server, over the metadata store.

Actions need `HUDI_META_UI_TOKEN` (without it the UI is read-only); "sync now" needs a catalog
(`--sync-mode` and `--sync-uri`). The address is checked before anything starts: a port in use or a host that
is not this machine's is one line and exit 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket

from hudi_meta.cli.common import Subparsers, add_command
from hudi_meta.errors import HudiMetaError
from hudi_meta.sync.catalog import MODES

TOKEN_ENV = "HUDI_META_UI_TOKEN"
WEB_EXTRA = "pip install 'hudi-meta[web]'"
WEB_MODULES = ("flask", "waitress")


def port_number(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 (any free one) to 65535, got {text!r}")
    return int(text)


def thread_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected 1 to 64 threads, got {text!r}")
    return int(text)


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(sub, "serve", serve_command, "serve the web UI, its JSON API and /metrics")
    cmd.add_argument("--host", default="127.0.0.1", help="address to listen on")
    cmd.add_argument("--port", type=port_number, default=8080, help="port to listen on (0: any free port, printed)")
    cmd.add_argument("--threads", type=thread_count, default=8, help="request threads")
    cmd.add_argument("--sync-mode", choices=MODES, help="catalog for the UI's 'sync now' action")
    cmd.add_argument("--sync-uri", help="its URI: thrift://host:9083 (hms) or host:10000 (hiveserver2)")


def require_web() -> None:
    missing = [m for m in WEB_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise HudiMetaError(f"serve needs the web extra ({', '.join(missing)} not installed): {WEB_EXTRA}")


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


def serve_command(args: argparse.Namespace) -> int:
    require_web()
    if (args.sync_mode is None) != (args.sync_uri is None):
        raise HudiMetaError("--sync-mode and --sync-uri go together")
    from waitress import serve

    from hudi_meta.web import create_app

    token = os.environ.get(TOKEN_ENV) or None
    catalog = {"mode": args.sync_mode, "uri": args.sync_uri} if args.sync_mode else None
    app = create_app({"STORE_URL": args.db, "UI_TOKEN": token, "CATALOG": catalog})
    sock = listening_socket(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"hudi-meta UI on http://{shown}:{port}/ ({'actions enabled' if token else 'read-only'})", flush=True)
    serve(app, sockets=[sock], threads=args.threads, ident="hudi-meta")
    return 0
