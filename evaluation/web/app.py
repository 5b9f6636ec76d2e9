"""The Flask application of `fowlplay-web`: play, replay and results pages over `tables`.

Routes (every error is a page with a one-line message and a 4xx status, never a traceback):

    GET  /                          the new-game form and the runs under the runs folder
    POST /play                      start a game (game, players, seat, opponents, seed, options)
    GET  /play/<id>                 the human seat's page: its picture, text view, what it was told
    POST /play/<id>/move            the human's move (action, at = the decision it was made at)
    GET  /play/<id>/picture.png     the human seat's picture (the whole table once the game is over)
    GET  /replay?run=R[&start=K]    the games of run R's games.jsonl
    GET  /replay/view?run=R&game=T-M-A&step=K&viewer=V   one step of a recorded game
    GET  /replay/picture.png?...    its picture, as V (spectator, umpire or player_K) sees it
    GET  /results?run=R             run R's report.md (or a league's leaderboard.md) with its plots
    GET  /results/file?run=R&name=F a plot of that report (a .png of the run folder)
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

from fowlplay import envs
from fowlplay.envs.core.picture import draw
from fowlplay.evaluation.web.pages import STYLE, TEMPLATES
from fowlplay.evaluation.web.tables import (
    GAMES_PER_PAGE,
    Replays,
    RunsFolder,
    Tables,
    WebError,
    parse_viewer,
    png,
    read_rows,
    report_file,
)

#: The largest plot the results page serves.
MAX_PLOT_BYTES = 32 * 2**20
#: A plot's file name as a report links it.
PLOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}\.png")
#: The largest form a request may send.
MAX_FORM_BYTES = 64 * 1024


def markdown_html(text: str, link_file) -> str:
    """A report's markdown as HTML (raw HTML in it is shown as text); images point at `link_file(name)`."""
    from markdown_it import MarkdownIt

    def local(match: re.Match) -> str:
        alt, target = match.group(1), match.group(2)
        return f"![{alt}]({link_file(target)})" if PLOT_NAME.fullmatch(target) else match.group(0)

    text = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", local, text)
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def create_app(runs: str | Path = "runs", tables: Tables | None = None):
    """The web table's Flask app, reading runs (evaluations, leagues, checkpoints) under `runs`."""
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


def _play_routes(app, page, picture_response, folder: RunsFolder, store: Tables) -> None:
    """The new-game form, and a human's seat at a table: its page, its moves and its picture."""
    from flask import redirect, request

    @app.get("/")
    def index():
        return page(
            "index.html", title="fowlplay", games=envs.ENV_NAMES, runs=folder.listing(), root=folder.root
        )

    @app.post("/play")
    def new_game():
        form = request.form
        table = store.new(
            form.get("game", ""),
            form.get("players", ""),
            form.get("seat", "0"),
            form.get("opponents", ""),
            form.get("seed", "0"),
            form.get("options", ""),
        )
        return redirect(f"/play/{table.id}", code=303)

    @app.get("/play/<table_id>")
    def play(table_id: str):
        table = store.get(table_id)
        with table.lock:
            return page("play.html", title=table.game_name, t=table.page(), message="")

    @app.post("/play/<table_id>/move")
    def move(table_id: str):
        table = store.get(table_id)
        with table.lock:
            try:
                table.move(request.form.get("action", ""), request.form.get("at", ""))
            except WebError as err:  # the same page, the game as it was, and what was wrong
                return page(
                    "play.html", err.status, title=table.game_name, t=table.page(), message=err.message
                )
        return redirect(f"/play/{table.id}", code=303)

    @app.get("/play/<table_id>/picture.png")
    def play_picture(table_id: str):
        table = store.get(table_id)
        with table.lock:
            return picture_response(table.picture())


def _replay_routes(app, page, picture_response, folder: RunsFolder, replays: Replays) -> None:
    """A run's recorded games, and any step of one as a spectator, the umpire or a player sees it."""
    from flask import request

    @app.get("/replay")
    def games():
        run = folder.run(request.args.get("run"))
        start = _number(request.args.get("start", "0"), "start")
        rows, more = read_rows(run / "games.jsonl", start, GAMES_PER_PAGE)
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
    made = replays.get(args.get("run", ""), args.get("game", ""))
    step_text = args.get("step")
    step = len(made.frames) - 1 if step_text in (None, "") else _number(step_text, "step")
    frame = made.frame(step)
    viewer_text = args.get("viewer", "spectator")
    viewer, reveal = parse_viewer(viewer_text, len(made.seats))
    return made, step, frame, viewer_text, viewer, reveal


def _results_routes(app, page, picture_response, folder: RunsFolder) -> None:
    """A run's report (or a league's leaderboard) as HTML with its plots, and each plot."""
    from flask import request

    @app.get("/results")
    def results():
        run = folder.run(request.args.get("run"))
        source = report_file(run)
        name = folder.name(run)
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise WebError(422, f"{source.name} cannot be read: {err.strerror}") from None

        def link(file: str) -> str:
            return "/results/file?" + urlencode({"run": name, "name": file})

        body = markdown_html(text, link)
        # A league's leaderboard.md names its plots without showing them: every plot of the folder
        # that the report does not show already is shown below it.
        others = [
            (plot.name, link(plot.name))
            for plot in sorted(run.glob("*.png"))
            if PLOT_NAME.fullmatch(plot.name) and plot.is_file() and f"({plot.name})" not in text
        ]
        return page(
            "results.html",
            title=f"results of {name}",
            run=name,
            source=source.name,
            body=body,
            plots=others,
            games=(run / "games.jsonl").is_file(),
        )

    @app.get("/results/file")
    def results_file():
        run = folder.run(request.args.get("run"))
        name = request.args.get("name", "")
        if not PLOT_NAME.fullmatch(name):
            raise WebError(400, f"file {name[:40]!r} is not a plot of the report (a NAME.png)")
        path = folder.inside(run / name, f"file {name!r}")
        from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

        try:
            data = read_bytes(path, MAX_PLOT_BYTES)
        except FileNotFoundError:
            raise WebError(404, f"this run has no {name}") from None
        except (OSError, UntrustedFileError) as err:
            raise WebError(422, f"{name} cannot be read: {err}") from None
        return picture_response(data)


def _number(text: str, what: str) -> int:
    if not re.fullmatch(r"[0-9]{1,9}", text or ""):
        raise WebError(400, f"{what} {str(text)[:20]!r} is not a count (0, 1, 2, ...)")
    return int(text)
