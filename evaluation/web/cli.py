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
    return parser


def serve(app, host: str, port: int):
    """A threaded WSGI server for `app` on host:port (Werkzeug's), not yet serving."""
    from werkzeug.serving import make_server

    return make_server(host, port, app, threaded=True)


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.runs.exists() and not args.runs.is_dir():
        parser.error(f"--runs {args.runs} is a file; give the folder of runs")
    try:
        from fowlplay.evaluation.web.app import create_app
    except ImportError as err:
        parser.error(str(err))
    app = create_app(args.runs)
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
