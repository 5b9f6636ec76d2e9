"""`fowlplay-web`: serve the browser table (play, replay, results) on a local port."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fowlplay.envs.runtime.cli import integer

PROG = "fowlplay-web"


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A browser table: play a game against any agent, replay an evaluation's games, "
        "read its report. Open the printed address in a browser.",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on [127.0.0.1: this machine only]"
    )
    parser.add_argument("--port", type=integer(0, 65535), default=8000, help="port (0: any free one) [8000]")
    parser.add_argument(
        "--runs",
        type=Path,
        default=Path("runs"),
        help="folder of runs to replay and show, and of the checkpoints a game may name [runs]",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the browser may use to reach the table besides localhost, 127.0.0.1, ::1 "
        "and --host (repeatable; a request naming any other Host is refused)",
    )
    return parser


#: Seconds a connection may stay silent (a slow or half-open client) before it is closed.
REQUEST_TIMEOUT = 10.0
#: Connections served at once; one more is closed at once (a flood of half-open ones holds no
#: more threads than this, each for at most `REQUEST_TIMEOUT` of silence).
MAX_CONNECTIONS = 32


def serve(app, host: str, port: int, timeout: float = REQUEST_TIMEOUT, connections: int = MAX_CONNECTIONS):
    """A threaded WSGI server for `app` on host:port (Werkzeug's), not yet serving: each
    connection times out after `timeout` seconds of silence, and at most `connections` are served
    at once."""
    import threading

    from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

    class Handler(WSGIRequestHandler):
        pass

    Handler.timeout = timeout  # socketserver sets it on each connection's socket
    slots = threading.BoundedSemaphore(connections)

    class Server(ThreadedWSGIServer):
        def process_request(self, request, client_address):
            if not slots.acquire(blocking=False):
                self.shutdown_request(request)  # too many at once: this one is closed unserved
                return
            try:
                super().process_request(request, client_address)
            except BaseException:
                slots.release()
                raise

        def process_request_thread(self, request, client_address):
            try:
                super().process_request_thread(request, client_address)
            finally:
                slots.release()

    return Server(host, port, app, handler=Handler)


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.runs.exists() and not args.runs.is_dir():
        parser.error(f"--runs {args.runs} is a file; give the folder of runs")
    try:
        from fowlplay.evaluation.web.app import LOCAL_HOSTS, create_app
    except ImportError as err:
        parser.error(str(err))
    hosts = LOCAL_HOSTS + ((args.host,) if args.host not in ("0.0.0.0", "::") else ())
    app = create_app(args.runs, hosts=hosts + tuple(args.allow_host))
    try:
        server = serve(app, args.host, args.port)
    except OSError as err:
        parser.error(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}")
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"{PROG}: serving on http://{host}:{server.server_port} (runs from {args.runs}); Ctrl-C stops",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"{PROG}: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
