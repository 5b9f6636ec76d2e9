"""The Flask application of `fowlplay-web`: play, replay and results pages over `tables`.

Routes (every error is a page with a one-line message and a 4xx status, never a traceback):

    GET  /                          a new-game form for each game, and the runs under the runs folder
    POST /play                      start a game (game, players, seat, opponents, seed, options)
    GET  /play/<id>                 the human seat's page: its picture, text view, what it was told
    POST /play/<id>/move            the human's move (action, at = the decision it was made at)
    POST /play/<id>/continue        let the other seats go on thinking (after a request's time limit)
    GET  /play/<id>/picture.png     the human seat's picture (the whole table once the game is over)
    GET  /replay?run=R[&start=K]    the games of run R's games.jsonl
    GET  /replay/view?run=R&game=T-M-A&step=K&viewer=V   one step of a recorded game
    GET  /replay/picture.png?...    its picture, as V (spectator, umpire or player_K) sees it
    GET  /results?run=R             run R's report.md (or a league's leaderboard.md) with its plots
    GET  /results/file?run=R&name=F a plot of that report (a .png of the run folder)

Every request must name this server in its Host (a DNS-rebinding page names its own); a POST must
come from this server's own pages (its Origin, when a browser sends one, is this server); every
page carries a Content-Security-Policy that loads nothing from elsewhere and runs no script (a
report's remote image is never fetched). The limits of what a request may ask for are in
`evaluation.web.limits`, of what is read from `--runs` in `evaluation.web.runs`.
"""

from __future__ import annotations

import re
import select
import socket
import threading
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from fowlplay import envs
from fowlplay.envs.core.picture import draw
from fowlplay.evaluation.web.limits import MAX_SEARCH_BUDGET
from fowlplay.evaluation.web.pages import STYLE, TEMPLATES
from fowlplay.evaluation.web.runs import GAMES_PER_PAGE, MAX_PLOT_BYTES, RunsFolder, WebError, read_rows
from fowlplay.evaluation.web.tables import Replays, Tables, parse_viewer, png

#: A plot's file name as a report links it.
PLOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}\.png")
#: Reports whose HTML the results page keeps.
RENDERED_REPORTS = 8
#: The largest form a request may send.
MAX_FORM_BYTES = 64 * 1024
#: Host names a request may give (with the served port): this machine's own.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Nothing from elsewhere, no script, no frame, forms only to this server.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make a browser send Origin: null
    "Cross-Origin-Resource-Policy": "same-origin",
}


def markdown_html(text: str, link_file) -> str:
    """A report's markdown as HTML (raw HTML in it is shown as text); images point at `link_file(name)`."""
    from markdown_it import MarkdownIt

    def local(match: re.Match) -> str:
        alt, target = match.group(1), match.group(2)
        return f"![{alt}]({link_file(target)})" if PLOT_NAME.fullmatch(target) else match.group(0)

    text = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", local, text)
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def create_app(runs: str | Path = "runs", tables: Tables | None = None, hosts=LOCAL_HOSTS):
    """The web table's Flask app, reading runs (evaluations, leagues, checkpoints) under `runs`;
    a request's Host must be one of `hosts` (names or addresses) with the port served."""
    try:
        from flask import Flask, Response, render_template
        from jinja2 import DictLoader
        from werkzeug.exceptions import HTTPException
    except ImportError as err:
        raise ImportError("fowlplay-web needs Flask: pip install 'fowlplay[web]'") from err

    folder = RunsFolder(Path(runs))
    app = Flask("fowlplay.web")
    app.jinja_loader = DictLoader(TEMPLATES)
    app.config["MAX_CONTENT_LENGTH"] = MAX_FORM_BYTES
    store = tables or Tables(folder)
    replays = Replays(folder)
    app.extensions["fowlplay"] = {"tables": store, "replays": replays, "runs": folder}

    def page(name: str, status: int = 200, **values):
        return render_template(name, style=STYLE, **values), status

    def picture_response(data: bytes):
        return Response(data, mimetype="image/png", headers={"Cache-Control": "no-store"})

    _error_pages(app, page, HTTPException)
    _cross_site_checks(app, {h.strip("[]").lower() for h in hosts})
    _play_routes(app, page, picture_response, folder, store)
    _replay_routes(app, page, picture_response, folder, replays)
    _results_routes(app, page, picture_response, folder)
    return app


def _error_pages(app, page, http_exception) -> None:
    """Every error as a page with a one-line message: ours (`WebError`), HTTP's, and a server failure."""

    @app.errorhandler(WebError)
    def web_error(err: WebError):
        return page(
            "error.html", err.status, title=f"{err.status}: cannot do that", message=err.message, back="/"
        )

    @app.errorhandler(http_exception)
    def http_error(err):
        message = {404: "no such page", 405: "that page does not take this kind of request"}.get(
            err.code, err.description.splitlines()[0] if err.description else err.name
        )
        return page("error.html", err.code or 400, title=f"{err.code}: {err.name}", message=message, back="/")

    @app.errorhandler(Exception)
    def server_error(err: Exception):
        app.logger.error("fowlplay-web: %s: %s", type(err).__name__, err)
        return page(
            "error.html",
            500,
            title="500: the server failed",
            message=f"{type(err).__name__}: {err}",
            back="/",
        )


def split_host(host: str) -> tuple[str, str]:
    """A Host header as (name, port); the port is '' when none is given."""
    parts = urlsplit(f"//{host}")
    try:
        port = parts.port
    except ValueError:
        return "", "bad"
    return (parts.hostname or "").lower(), "" if port is None else str(port)


def _cross_site_checks(app, hosts: set[str]) -> None:
    """Refuse a request whose Host is not this server (DNS rebinding), and a POST from another
    site's page; add the security headers to every answer."""
    from flask import request

    @app.before_request
    def same_site():
        name, port = split_host(request.host)
        served = str(request.environ.get("SERVER_PORT", ""))
        default = "443" if request.scheme == "https" else "80"
        if name not in hosts or (port or default) != served:
            raise WebError(403, f"this server answers only to {', '.join(sorted(hosts))} on port {served}")
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        origin = request.headers.get("Origin")
        fetch_site = request.headers.get("Sec-Fetch-Site")
        if origin is not None:
            if origin != f"{request.scheme}://{request.host}":
                raise WebError(403, "a page of another site cannot act at this table")
        elif fetch_site not in (None, "same-origin", "none"):
            raise WebError(403, "a page of another site cannot act at this table")
        return None

    @app.after_request
    def headers(response):
        response.headers.update(SECURITY_HEADERS)
        return response


def client_gone(environ) -> bool:
    """True when the client of this request closed its connection (Werkzeug's server hands the
    socket over as `werkzeug.socket`; another server never says gone)."""
    sock = environ.get("werkzeug.socket")
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _play_routes(app, page, picture_response, folder: RunsFolder, store: Tables) -> None:
    """The new-game form, and a human's seat at a table: its page, its moves and its picture."""
    from flask import redirect, request

    @app.get("/")
    def index():
        return page(
            "index.html",
            title="fowlplay",
            games=game_forms(),
            runs=folder.listing(),
            root=folder.root,
            max_budget=MAX_SEARCH_BUDGET,
        )

    @app.post("/play")
    def new_game():
        form = request.form
        table = store.new(
            form.get("game", ""),
            form.get("players", ""),
            form.get("seat", ""),
            form.get("opponents", ""),
            form.get("seed", ""),
            form.get("options", ""),
        )
        with table.lock:
            table.advance(lambda: client_gone(request.environ))
        return redirect(f"/play/{table.id}", code=303)

    @app.get("/play/<table_id>")
    def play(table_id: str):
        table = store.get(table_id)
        with table.lock:
            message, table.notice = table.notice, ""
            return page("play.html", title=table.game_name, t=table.page(), message=message)

    @app.post("/play/<table_id>/move")
    def move(table_id: str):
        table = store.get(table_id)
        # The form is read whole before the lock is taken: a slow sender holds no game.
        action, at = request.form.get("action", ""), request.form.get("at", "")
        with table.lock:
            try:
                table.move(action, at)
            except WebError as err:
                # The page again, the game as it was, and what was wrong: by a redirect, so that
                # reloading it never sends the move again.
                table.notice = err.message
            else:
                table.advance(lambda: client_gone(request.environ))
        return redirect(f"/play/{table.id}", code=303)

    @app.post("/play/<table_id>/continue")
    def go_on(table_id: str):
        table = store.get(table_id)
        with table.lock:
            if table.waiting:
                table.advance(lambda: client_gone(request.environ))
        return redirect(f"/play/{table.id}", code=303)

    @app.get("/play/<table_id>/picture.png")
    def play_picture(table_id: str):
        table = store.get(table_id)
        with table.lock:
            return picture_response(table.picture())


def game_forms() -> list[dict]:
    """What the new-game form offers for each game: its player counts (the smallest first) and seats."""
    forms = []
    for name in envs.ENV_NAMES:
        counts = envs.player_counts(name)
        forms.append(
            {
                "name": name,
                "counts": list(counts),
                "seats": list(range(counts.stop - 1)),
                "default": counts.start,
            }
        )
    return forms


def _replay_routes(app, page, picture_response, folder: RunsFolder, replays: Replays) -> None:
    """A run's recorded games, and any step of one as a spectator, the umpire or a player sees it."""
    from flask import request

    @app.get("/replay")
    def games():
        run = folder.run(request.args.get("run"))
        start = _number(request.args.get("start", "0"), "start")
        rows, more = read_rows(folder, run / "games.jsonl", start, GAMES_PER_PAGE)
        shown = [
            {
                "key": f"{r['table']}-{r['match']}-{r['arrangement']}",
                "seats": r["seats"],
                "returns": ", ".join(f"{x:+.2f}" for x in r["returns"]),
                "length": r.get("length", ""),
            }
            for r in rows
        ]
        name = folder.name(run)
        return page(
            "games.html",
            title=f"games of {name}",
            run=name,
            rows=shown,
            start=start,
            more=more,
            per_page=GAMES_PER_PAGE,
        )

    @app.get("/replay/view")
    def replay_view():
        made, step, frame, viewer_text, viewer, reveal = _replay_step(replays, request.args)
        key = "-".join(map(str, made.key))

        def link(to_step: int, to_viewer: str) -> str:
            return "/replay/view?" + urlencode(
                {"run": made.run, "game": key, "step": to_step, "viewer": to_viewer}
            )

        query = urlencode({"run": made.run, "game": key, "step": step, "viewer": viewer_text})
        if reveal:
            view = frame.game.render()
        elif viewer is not None:
            view = made.observer.view(frame.game, viewer)
        else:
            view = ""
        move = ""
        if step > 0:
            actor, name = made.actions[step - 1]
            move = f"decision {step}: player_{actor} ({made.seats[actor]})" + (
                f" chose {name}" if reveal or viewer == actor else ""
            )
        told_to = None if reveal else viewer
        return page(
            "replay.html",
            title=f"replay {key}",
            r=made,
            key=key,
            step=step,
            last=len(made.frames) - 1,
            viewer=viewer_text,
            viewers=["spectator", "umpire", *(f"player_{s}" for s in range(len(made.seats)))],
            link=link,
            picture=f"/replay/picture.png?{query}",
            view=view,
            told=made.told(step, told_to),
            move=move,
        )

    @app.get("/replay/picture.png")
    def replay_picture():
        _, _, frame, _, viewer, reveal = _replay_step(replays, request.args)
        return picture_response(png(draw(frame.game, viewer, reveal=reveal)))


def _replay_step(replays: Replays, args):
    """The recorded game, step (the last if none given), frame and viewer a replay request names:
    (game, step, frame, viewer as given, seat viewing or None, whether everything is shown)."""
    from flask import request

    made = replays.get(args.get("run", ""), args.get("game", ""), lambda: client_gone(request.environ))
    step_text = args.get("step")
    step = len(made.frames) - 1 if step_text in (None, "") else _number(step_text, "step")
    frame = made.frame(step)
    viewer_text = args.get("viewer", "spectator")
    viewer, reveal = parse_viewer(viewer_text, len(made.seats))
    return made, step, frame, viewer_text, viewer, reveal


def _results_routes(app, page, picture_response, folder: RunsFolder) -> None:
    """A run's report (or a league's leaderboard) as HTML with its plots, and each plot."""
    from flask import request

    rendered: dict[tuple[str, str], str] = {}
    rendered_lock = threading.Lock()

    @app.get("/results")
    def results():
        run = folder.run(request.args.get("run"))
        source, text = folder.report(run)
        name = folder.name(run)

        def link(file: str) -> str:
            return "/results/file?" + urlencode({"run": name, "name": file})

        # Rendering is the dear part (a crafted report of the largest size takes seconds): each
        # report text is rendered once, and the last few are kept.
        with rendered_lock:
            body = rendered.get((name, text))
        if body is None:
            body = markdown_html(text, link)
            with rendered_lock:
                rendered[(name, text)] = body
                while len(rendered) > RENDERED_REPORTS:
                    rendered.pop(next(iter(rendered)))
        # A league's leaderboard.md names its plots without showing them: every plot of the folder
        # that the report does not show already is shown below it.
        others = [
            (plot.name, link(plot.name))
            for plot in sorted(run.glob("*.png"))[:100]
            if PLOT_NAME.fullmatch(plot.name) and folder.has(plot) and f"({plot.name})" not in text
        ]
        return page(
            "results.html",
            title=f"results of {name}",
            run=name,
            source=source,
            body=body,
            plots=others,
            games=folder.has(run / "games.jsonl"),
        )

    @app.get("/results/file")
    def results_file():
        run = folder.run(request.args.get("run"))
        name = request.args.get("name", "")
        if not PLOT_NAME.fullmatch(name):
            raise WebError(400, f"file {name[:40]!r} is not a plot of the report (a NAME.png)")
        return picture_response(folder.read(run / name, MAX_PLOT_BYTES))


def _number(text: str, what: str) -> int:
    if not re.fullmatch(r"[0-9]{1,9}", text or ""):
        raise WebError(400, f"{what} {str(text)[:20]!r} is not a count (0, 1, 2, ...)")
    return int(text)
