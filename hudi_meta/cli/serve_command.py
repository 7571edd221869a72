"""`serve`: the web UI (docs/service-and-ui.md section 2) on waitress, a production WSGI server, over the metadata
store; with `--config FILE` (or $HUDI_META_CONFIG) also the service loop over the configured tables (section 10).

Actions need `HUDI_META_UI_TOKEN` or the config's `[ui] token` (without one the UI is read-only); "sync now"
needs a catalog (`--sync-mode` and `--sync-uri`, or the config's `[catalog]`). The address is checked before
anything starts: a port in use or a host that is not this machine's is one line and exit 2. SIGTERM (or
Ctrl-C) stops the service after its current step and releases its tables; a compaction under way is left
pending between two tasks, and the next start finishes it first.

`config check FILE` reads and checks a configuration (every table path too) without starting anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import socket
import threading

from sqlalchemy import Engine

from hudi_meta.api import MODES, SyncTarget, open_store
from hudi_meta.cli.common import TEXT, Subparsers, add_command, whole
from hudi_meta.cli.terminal import log_to_stderr
from hudi_meta.errors import HudiMetaError
from hudi_meta.service.config import CONFIG_ENV, TOKEN_ENV, ServiceConfig, UiSettings, config_path, load_config
from hudi_meta.service.loop import Service
from hudi_meta.service.runner import make_runner
from hudi_meta.service.sockets import listening_socket

WEB_EXTRA = "pip install 'hudi-meta[web]'"
WEB_MODULES = ("flask", "waitress")


PORT = whole(0, 65535)  # 0: any free port
THREADS = whole(1, 64)


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(sub, "serve", serve_command, "serve the web UI, its JSON API and /metrics (and the service)")
    cmd.add_argument(
        "--config",
        type=TEXT,
        help=f"service configuration (TOML) to run the loop over its tables (default: ${CONFIG_ENV})",
    )
    cmd.add_argument("--host", type=TEXT, help="address to listen on (default: the config's [ui] host, else 127.0.0.1)")
    cmd.add_argument("--port", type=PORT, help="port to listen on, 0 for any free one (default: [ui] port, else 8080)")
    cmd.add_argument("--threads", type=THREADS, default=8, help="request threads")
    cmd.add_argument("--sync-mode", choices=MODES, help="catalog for the UI's 'sync now' action")
    cmd.add_argument("--sync-uri", type=TEXT, help="its URI: thrift://host:9083 (hms) or host:10000 (hiveserver2)")

    config = add_command(sub, "config", None, "service configuration files")
    csub = config.add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    check = add_command(csub, "check", config_check_command, "read and check a configuration file")
    check.add_argument("file", type=TEXT, help="the TOML file")


def require_web() -> None:
    missing = [m for m in WEB_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise HudiMetaError(f"serve needs the web extra ({', '.join(missing)} not installed): {WEB_EXTRA}")


def serve_command(args: argparse.Namespace) -> int:
    require_web()
    if (args.sync_mode is None) != (args.sync_uri is None):
        raise HudiMetaError("--sync-mode and --sync-uri go together")
    if args.sync_mode is not None:
        SyncTarget(args.sync_mode, args.sync_uri).validate(labels=("--sync-uri", "database", "table name"))
    config = load_config(config_path(args.config)) if args.config or os.environ.get(CONFIG_ENV) else None
    from waitress import serve
    from waitress.server import create_server

    from hudi_meta.web import create_app

    ui = config.ui if config is not None else UiSettings(token=os.environ.get(TOKEN_ENV) or None)
    host = args.host or ui.host
    port = args.port if args.port is not None else ui.port
    store = args.db or (config.store_url if config is not None else None)
    catalog = {"mode": args.sync_mode, "uri": args.sync_uri} if args.sync_mode else None
    if catalog is None and config is not None and config.catalog is not None:
        c = config.catalog
        catalog = {"mode": c.mode, "uri": c.uri, "database": c.database, "timeout_s": c.timeout_s}
    sock = listening_socket(host, port) if ui.enabled else None  # a bad address is said before the store opens
    try:
        engine = open_store(store)
        options = {t.path: t.storage_options for t in config.tables} if config is not None else {}
        settings = {"STORE_URL": store, "UI_TOKEN": ui.token, "CATALOG": catalog, "STORAGE_OPTIONS": options}
        app = create_app(settings) if ui.enabled else None
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    if sock is not None:
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        mode = "actions enabled" if ui.token else "read-only"
        print(f"hudi-meta UI on http://{shown}:{bound_port}/ ({mode})", flush=True)
    if config is None:
        serve(app, sockets=[sock], threads=args.threads, ident="hudi-meta")
        return 0
    if app is not None and sock is not None:
        server = create_server(app, sockets=[sock], threads=args.threads, ident="hudi-meta")
        threading.Thread(target=server.run, name="hudi-meta-ui", daemon=True).start()
    return run_service(config, engine)


def run_service(config: ServiceConfig, engine: Engine) -> int:
    """The loop in this thread until SIGTERM or Ctrl-C; then the current step ends and the leases go."""
    log_to_stderr()
    service = Service(config, engine, make_runner(config.spark), worker=f"{socket.gethostname()}:{os.getpid()}")

    def stop(signum: int, _: object) -> None:
        print(f"hudi-meta service: {signal.Signals(signum).name}: stopping after the current step", flush=True)
        service.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"hudi-meta service: {len(config.tables)} tables from {config.source} ({service.worker})", flush=True)
    service.run()
    print("hudi-meta service: stopped", flush=True)
    return 0


def config_check_command(args: argparse.Namespace) -> int:
    config = load_config(config_path(args.file))
    c = config.catalog
    print(f"config {config.source}: ok")
    print(f"  store: {config.store_url or 'the default SQLite store'}")
    print(f"  spark: {config.spark.engine}" + (f" on {config.spark.master}" if config.spark.engine != "local" else ""))
    print(f"  catalog: {f'{c.mode} {c.uri}' if c else 'none (sync off)'}")
    print(f"  ui: {'off' if not config.ui.enabled else f'{config.ui.host}:{config.ui.port}'}"
          f"{', actions enabled' if config.ui.token else ', read-only'}")  # fmt: skip
    for t in config.tables:
        what = ["compact", *(["clean"] if t.clean else []), *(["sync"] if t.sync else [])]
        print(f"  table {t.path}: {', '.join(what)} ({t.mode}{', exact' if t.exact else ''})")
    return 0
