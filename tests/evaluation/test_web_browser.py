"""The browser table through a real headless Chromium (Debian's `chromium`, driven by Playwright).

The server runs in this process on a free loopback port, so a test can look at the game it holds.
One whole game of Chicken is played by clicking, and at every decision of the human seat the page
is held to that seat's view: its picture is exactly `draw(game, seat)`, and re-dealing everything
the seat cannot see (`env.resample_hidden`) and loading the page again changes nothing in the DOM
or in any response body. Broken twins that send the umpire's text table, the umpire's picture or
the spectator's picture fail that check. A recorded game is replayed and a report is opened.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

pytest.importorskip("flask")
sync_api = pytest.importorskip("playwright.sync_api")

from fowlplay.envs.core.picture import draw  # noqa: E402
from fowlplay.evaluation.web.app import create_app  # noqa: E402
from fowlplay.evaluation.web.cli import serve  # noqa: E402
from fowlplay.evaluation.web.tables import PlayTable, own_moves_once, png  # noqa: E402

#: Chromium as root needs --no-sandbox; the rest keep it off the (closed) network and quick to start.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # A name that leads to this machine, as a DNS-rebinding attack's would.
    "--host-resolver-rules=MAP rebind.test 127.0.0.1",
]
#: A short game: first to 10 (the human passes at every decision: about 10 to 20 clicks).
OPTIONS = "target=10"


def chromium_path() -> str | None:
    """Debian's chromium, if installed (`make test` installs it)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def loaded_widths(page, selector: str) -> list[int]:
    """The natural widths of the images `selector` names, once each has finished loading or failed.

    A click that navigates returns before the new page's images arrive (a loaded machine makes
    that gap long); a broken image is complete with width 0, so the check still fails on one.
    """
    page.wait_for_load_state("load")
    page.wait_for_function(
        "sel => [...document.querySelectorAll(sel)].every(img => img.complete)", arg=selector
    )
    return page.locator(selector).evaluate_all("imgs => imgs.map(img => img.naturalWidth)")


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: `make test` installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed (make test installs it: apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The web table on a free loopback port, over a runs folder holding one small evaluation."""
    from fowlplay.evaluation.agents import parse_specs
    from fowlplay.evaluation.matches import EvalConfig
    from fowlplay.evaluation.tournament import evaluate

    runs = tmp_path_factory.mktemp("runs")
    config = EvalConfig(
        "chicken_v1", tuple(parse_specs(["random", "baseline"])), 2, 2, options={"target": 10}
    )
    evaluate(config, runs / "eval", progress=False, bootstrap=20)
    app = create_app(runs)
    web = serve(app, "127.0.0.1", 0)
    thread = threading.Thread(target=web.serve_forever, daemon=True)
    thread.start()
    yield {"url": f"http://127.0.0.1:{web.server_port}", "app": app, "runs": runs}
    web.shutdown()
    web.server_close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    context.close()


def load(page, responses: list, action) -> tuple[str, list[bytes]]:
    """Run `action` (a navigation) and return the DOM after it and every response body it caused."""
    responses.clear()
    action()
    page.wait_for_load_state("load")
    return page.content(), [response.body() for response in responses if response.status != 304]


def the_table(server, page) -> PlayTable:
    """The server's table behind the page's URL."""
    table_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    return server["app"].extensions["fowlplay"]["tables"].get(table_id)


def seat_view_problems(page, server, responses: list, seed: int) -> tuple[list[str], bool]:
    """What is wrong with the page as the human seat's own view now, and whether re-dealing what the
    seat cannot see moved any card (so that a leak would have shown)."""
    dom, bodies = load(page, responses, page.reload)
    table = the_table(server, page)
    problems = []
    with table.lock:
        game = table.game
        if png(draw(game, table.human)) not in bodies:
            problems.append(f"decision {table.decisions}: the picture sent is not {table.agent}'s own view")
        before = [sorted(hand) for seat, hand in enumerate(game.numbers) if seat != table.human]
        table.env.resample_hidden(table.agent, seed)
        moved = before != [
            sorted(hand) for seat, hand in enumerate(table.game.numbers) if seat != table.human
        ]
    dom_again, bodies_again = load(page, responses, page.reload)
    if dom_again != dom:
        problems.append(f"decision {table.decisions}: the page changed when hidden cards were re-dealt")
    if sorted(bodies_again) != sorted(bodies):
        problems.append(f"decision {table.decisions}: a response changed when hidden cards were re-dealt")
    return problems, moved


def play_chicken(page, server, check: bool = True, stop_at_problem: bool = False) -> dict:
    """Start a 2-player Chicken game against the baseline from the form and pass at every decision
    until it ends; with `check`, hold every decision's page to the seat's own view."""
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(server["url"] + "/")
    form = "#new-chicken_v1 "
    page.select_option(form + "select[name=players]", "2")
    page.fill(form + "input[name=opponents]", "baseline")
    page.fill(form + "input[name=options]", OPTIONS)
    page.fill(form + "input[name=seed]", "0")  # the same game every run
    page.click(form + "button")
    page.wait_for_load_state("load")
    problems, moved, clicks = [], 0, 0
    while page.locator("#result").count() == 0:
        assert clicks < 200, "the game did not end after 200 clicks"
        if check:
            found, did_move = seat_view_problems(page, server, responses, seed=clicks)
            problems += found
            moved += did_move
            if found and stop_at_problem:
                break
        page.locator("#moves button").first.click()  # pass (or the only legal move)
        page.wait_for_load_state("load")
        clicks += 1
    return {"problems": problems, "moved": moved, "clicks": clicks, "page": page}


def test_a_whole_game_of_chicken_by_clicking_shows_the_seat_only_its_own_view(page, server):
    played = play_chicken(page, server)
    assert played["problems"] == []
    assert played["moved"] > 0, "no decision had a hidden card to re-deal: the check proved nothing"
    # The end: the whole table, the outcome, and what the seat was told along the way.
    result = page.inner_text("#result")
    assert "wins" in result or "draw" in result
    table = the_table(server, page)
    assert f"Deal seed {table.seed}: give it to play the same deal again" in result
    assert "the whole table" in page.content()
    assert table.game.over
    told = page.locator("#told li").all_inner_texts()
    assert told == own_moves_once(table.narrator.history[table.human], table.human) and any(
        "bids" in line or "passes" in line for line in told
    )
    assert loaded_widths(page, "#picture")[0] > 0


#: Broken twins of the server: what each sends instead of the human seat's own view.
TWINS = {
    "umpire-text-table": ("page", lambda table: {**PlayTable.page(table), "view": table.game.render()}),
    "umpire-picture": ("picture", lambda table: png(draw(table.game, table.human, reveal=True))),
    "spectator-picture": ("picture", lambda table: png(draw(table.game, None))),
}


@pytest.mark.parametrize("twin", list(TWINS))
def test_broken_twins_that_send_another_table_fail_the_check(page, server, monkeypatch, twin):
    method, replacement = TWINS[twin]
    monkeypatch.setattr(PlayTable, method, replacement)
    played = play_chicken(page, server, stop_at_problem=True)
    assert played["problems"], f"the {twin} twin passed the seat-view check"


def test_a_recorded_game_is_replayed_step_by_step_from_any_seat(page, server):
    page.goto(server["url"] + "/")
    page.click('a[href^="/replay?run=eval"]')
    page.locator("#games a").first.click()
    page.wait_for_load_state("load")
    assert page.inner_text("#step").startswith("step 0 of ")
    last = int(page.inner_text("#step").rsplit(" ", 1)[-1])
    for expected in (1, 2, 3):
        page.click("#next")
        assert page.inner_text("#step") == f"step {expected} of {last}"
    replays = server["app"].extensions["fowlplay"]["replays"]
    made = replays.get("eval", page.url.split("game=")[1].split("&")[0])
    assert page.locator("#told li").all_inner_texts() == made.told(3, None)  # a spectator: public lines
    page.click("#viewer-player_1")
    assert "you are player_1" in page.inner_text("#view")
    assert page.locator("#told li").all_inner_texts() == made.told(3, 1)
    assert loaded_widths(page, "#picture")[0] > 0
    page.click("#last")
    assert page.inner_text("#step") == f"step {last} of {last}"
    assert made.frames[-1].game.over


def test_a_report_opens_with_its_plots(page, server):
    page.goto(server["url"] + "/")
    page.click('a[href^="/results?run=eval"]')
    page.wait_for_load_state("load")
    report = page.inner_text("#report")
    assert "baseline" in report and "random" in report
    widths = loaded_widths(page, "#report img")
    assert len(widths) >= 2 and all(width > 0 for width in widths)
    assert Path(server["runs"], "eval", "report.md").is_file()


# ----- cross-site safety, from a second origin on another loopback port ------------------------------
@pytest.fixture(scope="module")
def elsewhere(server):
    """Another site on another loopback port: an attack page that posts to the table, and an image
    that a report may name; every path asked of it is recorded."""
    import http.server

    table = server["url"]
    form = "".join(
        f'<input name="{k}" value="{v}">'
        for k, v in {"game": "chicken_v1", "players": "2", "opponents": "ismcts:200", "seed": "1"}.items()
    )
    pages = {
        "/form.html": f'<form id="f" method="post" action="{table}/play">{form}</form>'
        "<script>document.getElementById('f').submit()</script>",
        "/fetch.html": f"<script>fetch('{table}/play', {{method: 'POST', mode: 'no-cors', body: "
        "new URLSearchParams({game: 'chicken_v1', players: '2', opponents: 'random'})})"
        ".finally(() => document.title = 'sent')</script>",
    }
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            body = pages.get(self.path, "").encode() or png(draw_any())
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if self.path in pages else "image/png")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    yield {"url": f"http://127.0.0.1:{other.server_port}", "asked": asked}
    other.shutdown()
    other.server_close()


def draw_any():
    from fowlplay import envs

    env = envs.make("chicken_v1")
    env.reset(seed=0)
    return draw(env.unwrapped.game, None)


def tables_held(server) -> int:
    return len(server["app"].extensions["fowlplay"]["tables"]._tables)


def test_a_page_of_another_site_cannot_start_a_game(page, server, elsewhere):
    before = tables_held(server)
    page.goto(elsewhere["url"] + "/form.html")
    page.wait_for_url(server["url"] + "/play")
    assert "a page of another site cannot act at this table" in page.inner_text("#error")
    page.goto(elsewhere["url"] + "/fetch.html")
    page.wait_for_function("document.title === 'sent'")
    assert tables_held(server) == before


def test_a_rebinding_host_name_is_refused(page, server):
    port = server["url"].rsplit(":", 1)[1]
    answer = page.goto(f"http://rebind.test:{port}/")
    assert answer.status == 403 and "this server answers only to" in page.inner_text("#error")


def test_a_reports_remote_image_is_never_fetched(page, server, elsewhere):
    folder = Path(server["runs"], "remote")
    folder.mkdir(exist_ok=True)
    (folder / "report.md").write_text(f"# remote\n\n![tracker]({elsewhere['url']}/tracker.png)\n")
    page.goto(server["url"] + "/results?run=remote")
    page.wait_for_load_state("load")
    assert page.locator("#report img").count() == 1
    assert "/tracker.png" not in elsewhere["asked"]


# ----- the table for people ----------------------------------------------------------------------------
def start_game(page, server, game: str, **fields) -> None:
    page.goto(server["url"] + "/")
    for name, value in fields.items():
        page.fill(f"#new-{game} input[name={name}]", value)
    page.click(f"#new-{game} button")
    page.wait_for_load_state("load")


def test_every_games_moves_and_view_are_in_sight_at_1366x768_and_the_picture_fits_a_phone(browser, server):
    from fowlplay import envs

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(20_000)
    for game in envs.ENV_NAMES:
        start_game(page, server, game, seed="3")
        assert page.locator("#error").count() == 0, page.inner_text("#error")
        loaded_widths(page, "#picture")
        moves = page.locator("#moves").bounding_box()
        first = page.locator("#moves button").first.bounding_box()
        assert moves["y"] + moves["height"] <= 768 and first["y"] + first["height"] <= 768, game
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), game
        assert page.eval_on_selector("#view", "e => e.scrollWidth <= e.clientWidth"), game
        table = the_table(server, page)
        assert len(table.specs) == envs.player_counts(game).start  # Murray's smallest table is 3
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    loaded_widths(page, "#picture")
    # At its own size (readable), in a box that scrolls sideways: the page itself does not.
    natural = page.eval_on_selector("#picture", "img => img.naturalWidth")
    assert page.locator("#picture").bounding_box()["width"] == natural
    assert page.evaluate("document.documentElement.scrollWidth <= 390")
    context.close()


def test_a_stale_move_is_refused_once_and_a_reload_sends_nothing(page, server):
    # The baseline: the default opponent, the zoo agent, plays only its own rules (target 50).
    start_game(page, server, "chicken_v1", seed="5", options=OPTIONS, opponents="baseline")
    old = page.url
    page.locator("#moves button").first.click()
    page.wait_for_load_state("load")
    page.goto(old)
    page.go_back()  # the page of the decision before: its form names an old decision
    page.go_forward()
    table = the_table(server, page)
    decisions = table.decisions
    # A move from a page that is out of date: the answer is the page again, saying so.
    page.evaluate("document.querySelector('#moves input[name=at]').value = '0'")
    page.locator("#moves button").first.click()
    page.wait_for_load_state("load")
    assert "this page shows decision 0" in page.inner_text("#error")
    posts = []
    page.on("request", lambda request: posts.append(request.method))
    page.reload()
    page.wait_for_load_state("load")
    assert "POST" not in posts and page.locator("#error").count() == 0
    assert table.decisions == decisions
