"""The web table's server (evaluation/web) through Flask's test client: every game played from a
seat's own view, bad input answered by a message and a 4xx status with the game unchanged,
replays that end as recorded, reports, and the `fowlplay-web` command."""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flask")

from fowlplay import envs
from fowlplay.evaluation.web.app import create_app
from fowlplay.evaluation.web.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: Decisions of each game whose page is held to the seat's view (each costs two pictures).
CHECKED_DECISIONS = 20


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A runs folder with one small evaluation (random vs baseline, 2 deals of Chicken to 10)."""
    from fowlplay.evaluation.agents import parse_specs
    from fowlplay.evaluation.matches import EvalConfig
    from fowlplay.evaluation.tournament import evaluate

    folder = tmp_path_factory.mktemp("runs")
    config = EvalConfig(
        "chicken_v1", tuple(parse_specs(["random", "baseline"])), 2, 2, options={"target": 10}
    )
    evaluate(config, folder / "eval", progress=False, bootstrap=20)
    (folder / "empty").mkdir()
    return folder


@pytest.fixture
def client(runs):
    app = create_app(runs)
    client = app.test_client()
    client.store = app.extensions["fowlplay"]
    return client


def start(client, **fields):
    form = {"game": "chicken_v1", "players": "2", "seat": "0", "opponents": "baseline", "seed": "1"} | fields
    return client.post("/play", data=form)


def table_of(client, response):
    return client.store["tables"].get(response.headers["Location"].rsplit("/", 1)[-1])


def error_of(response) -> str:
    text = response.get_data(as_text=True)
    assert "Traceback" not in text
    found = re.search(r'id="error">([^<]*)<', text)
    assert found, text[:400]
    return found.group(1)


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_every_game_is_played_from_the_seats_own_view_until_it_ends(client, name):
    """At each of the first decisions the page and picture stay the same when everything the seat
    cannot see is re-dealt; at the end the page shows the umpire's table."""
    players = envs.player_counts(name)[0]
    response = start(client, game=name, players=str(players), seat="1", opponents="random")
    assert response.status_code == 303
    table = table_of(client, response)
    url = response.headers["Location"]
    changed, rng = 0, random.Random(0)
    for decision in range(400):
        page = client.get(url).get_data(as_text=True)
        if table.over:
            break
        if decision < CHECKED_DECISIONS:
            picture = client.get(f"{url}/picture.png").data
            umpire = table.game.render()
            table.env.resample_hidden(table.agent, seed=decision)
            changed += table.game.render() != umpire
            assert client.get(url).get_data(as_text=True) == page
            assert client.get(f"{url}/picture.png").data == picture
        legal = re.findall(r'name="action" value="(\d+)"', page)
        at = re.search(r'name="at" value="(\d+)"', page).group(1)
        assert client.post(f"{url}/move", data={"action": rng.choice(legal), "at": at}).status_code == 303
    assert table.over, "the game did not end in 400 decisions"
    assert "the whole table" in page and table.game.render().splitlines()[0] in page
    assert changed > 0 or name == "murder_she_crows_v1"  # Crows hides only the deck's order


def test_an_illegal_or_malformed_or_stale_move_is_refused_and_changes_nothing(client):
    response = start(client)
    table = table_of(client, response)
    url = response.headers["Location"]
    before = table.game.state_dict()
    cases = [
        ({"action": "99", "at": "0"}, 409, "action 99 is not legal now; legal: 0 (pass), 1 (bid 1)"),
        ({"action": "bid", "at": "0"}, 400, "'bid' is not an action id"),
        ({"action": "1", "at": "7"}, 409, "this page shows decision 7, the game is at decision 0"),
        ({"action": "1"}, 400, "the move names no decision number"),
    ]
    for form, _status, message in cases:
        # A refused move answers with a redirect to the page (a reload never sends it again),
        # which says once what was wrong.
        answer = client.post(f"{url}/move", data=form)
        assert answer.status_code == 303 and answer.headers["Location"] == url
        assert message in error_of(client.get(url)).replace("&#39;", "'")
        assert 'id="error"' not in client.get(url).get_data(as_text=True)
        assert table.game.state_dict() == before and table.decisions == 0
    assert client.post(f"{url}/move", data={"action": "1", "at": "0"}).status_code == 303
    assert table.decisions >= 1


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({"game": "go_v9"}, 400, "unknown game 'go_v9'; allowed: chicken_v1"),
        ({"players": "7"}, 400, "players '7' is not allowed; allowed: 2..4"),
        ({"seat": "2"}, 400, "your seat '2' is not allowed; allowed: 0..1"),
        ({"opponents": "bogus"}, 400, "unknown agent spec 'bogus'"),
        ({"opponents": "random random"}, 400, "give one agent spec for every other seat"),
        ({"opponents": "probe:nope"}, 400, "chicken_v1 has no probe 'nope'"),
        ({"opponents": "ckpt:/etc"}, 400, "no checkpoint at '/etc' inside the runs folder"),
        ({"opponents": "ckpt:missing"}, 400, "no checkpoint at 'missing' inside the runs folder"),
        ({"opponents": "ismcts:1000000000"}, 400, "budget of 1,000,000,000 per decision; at most 200 is"),
        ({"opponents": "oracle:1000000"}, 400, "budget of 1,000,000 per decision; at most 200 is"),
        (
            {"options": "feet=100000000"},
            400,
            "chicken_v1 option feet=100000000: give an integer of at most 40",
        ),
        ({"options": "target=1e300"}, 400, "chicken_v1 option target=1e300: give an integer"),
        ({"options": "target=" + "[" * 5000}, 400, "the rule options are at most 1000 characters"),
        ({"options": "target=" + "[" * 200}, 400, "rule option target: its value is longer than 100"),
        ({"options": "target=" + "[" * 90}, 400, "its value nests lists"),
        ({"players": "1" + "0" * 5000}, 400, "is not allowed; allowed: 2..4"),
        ({"options": "target"}, 400, "rule option 'target' is not KEY=VALUE"),
        ({"options": "colour=red"}, 400, "chicken_v1 has no rule option 'colour'; its options: "),
        ({"seed": "-3"}, 400, "seed '-3' is not allowed"),
    ],
)
def test_a_bad_new_game_is_a_message_and_a_4xx(client, fields, status, message):
    answer = start(client, **fields)
    assert answer.status_code == status
    assert message in error_of(answer).replace("&#39;", "'")


def test_agents_of_every_kind_sit_at_a_table(client):
    for spec in ("ismcts:8", "probe:pass", "random baseline", "baseline-v0"):
        players = str(len(spec.split()) + 1)
        answer = start(client, opponents=spec, players=players)
        assert answer.status_code == 303, error_of(answer)


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        ("/play/nosuchtable", 404, "no such game on this server"),
        ("/replay?run=missing", 404, "no run 'missing' under the runs folder"),
        ("/replay?run=../..", 404, "no run '../..' under the runs folder"),
        ("/replay?run=empty", 404, "this run has no games.jsonl"),
        ("/replay/view?run=eval&game=0-0", 400, "is not TABLE-MATCH-ARRANGEMENT"),
        ("/replay/view?run=eval&game=0-9-0", 404, "game 0-9-0 is not in this run's games.jsonl"),
        ("/replay/view?run=eval&game=0-0-0&step=9999", 404, "step 9999 is not in this game; steps: 0.."),
        ("/replay/view?run=eval&game=0-0-0&viewer=player_5", 400, "viewer 'player_5' is not allowed"),
        ("/results?run=empty", 404, "this run has no report"),
        ("/results/file?run=eval&name=../run.json", 400, "is not a plot of the report"),
        ("/results/file?run=eval&name=missing.png", 404, "this run has no missing.png"),
        ("/nowhere", 404, "no such page"),
    ],
)
def test_a_bad_address_is_a_message_and_a_4xx(client, url, status, message):
    answer = client.get(url)
    assert answer.status_code == status
    assert message in error_of(answer).replace("&#39;", "'")


def test_a_failure_inside_the_server_is_one_line_not_a_traceback(client, monkeypatch):
    from fowlplay.evaluation.web import tables

    monkeypatch.setattr(tables.PlayTable, "page", lambda self: 1 / 0)
    answer = client.get(start(client).headers["Location"])
    assert answer.status_code == 500
    assert error_of(answer) == "ZeroDivisionError: division by zero"


def test_a_replay_ends_as_the_evaluation_recorded_and_shows_each_view(client, runs):
    import json

    row = json.loads((runs / "eval" / "games.jsonl").read_text().splitlines()[1])
    key = f"{row['table']}-{row['match']}-{row['arrangement']}"
    made = client.store["replays"].get("eval", key)
    assert made.frames[-1].game.returns() == row["returns"]
    assert len(made.frames) == row["length"] + 1
    first = client.get(f"/replay/view?run=eval&game={key}&step=1&viewer=player_0").get_data(as_text=True)
    assert "you are player_0" in first
    umpire = client.get(f"/replay/view?run=eval&game={key}&step=1&viewer=umpire").get_data(as_text=True)
    assert made.frames[1].game.render().splitlines()[0] in umpire
    for viewer in ("spectator", "umpire", "player_1"):
        picture = client.get(f"/replay/picture.png?run=eval&game={key}&step=2&viewer={viewer}")
        assert picture.status_code == 200 and picture.data.startswith(b"\x89PNG")


def test_a_games_list_and_a_report_with_its_plots(client):
    games = client.get("/replay?run=eval").get_data(as_text=True)
    assert (
        len(re.findall(r'href="/replay/view\?run=eval&game=\d+-\d+-\d+&step=0"', games)) == 4
    )  # 2 deals x 2 seatings
    report = client.get("/results?run=eval").get_data(as_text=True)
    plots = re.findall(r'<img src="([^"]+)"', report)
    assert len(plots) >= 2
    for plot in plots:
        assert client.get(plot.replace("&amp;", "&")).data.startswith(b"\x89PNG")


def test_a_leagues_leaderboard_shows_the_plots_of_its_folder(client, runs):
    folder = runs / "league"
    folder.mkdir(exist_ok=True)
    (folder / "leaderboard.md").write_text("# Leaderboard\n\n| agent | Elo |\n|---|---|\n| random | 0 |\n")
    (folder / "ratings.png").write_bytes((runs / "eval" / "ratings.png").read_bytes())
    page = client.get("/results?run=league").get_data(as_text=True)
    assert "<table>" in page and "<td>random</td>" in page
    plots = re.findall(r'<img src="([^"]+)"', page)
    assert plots == ["/results/file?run=league&amp;name=ratings.png"]
    assert client.get(plots[0].replace("&amp;", "&")).data.startswith(b"\x89PNG")


def test_raw_html_in_a_report_is_shown_as_text(client, runs):
    folder = runs / "html"
    folder.mkdir(exist_ok=True)
    (folder / "report.md").write_text("# r\n\n<script>alert(1)</script> | a |\n")
    page = client.get("/results?run=html").get_data(as_text=True)
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_the_command_refuses_a_bad_port_and_serves_on_a_free_one(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--port", "70000"])
    assert exit_info.value.code == 2
    assert "--port: must be an integer in 0..65535, got 70000" in capsys.readouterr().err
    server = subprocess.Popen(
        [sys.executable, "-m", "fowlplay.evaluation.web.cli", "--port", "0", "--runs", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert re.fullmatch(
            r"fowlplay-web: serving on http://127\.0\.0\.1:\d+ \(runs from .*\); Ctrl-C stops\n", line
        )
        from urllib.request import urlopen

        port = int(re.search(r":(\d+) ", line).group(1))
        with urlopen(f"http://127.0.0.1:{port}/") as page:
            assert b"Play a game" in page.read()
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 0
        server.stdout.close()
        server.stderr.close()


def test_no_seed_deals_a_fresh_game_and_the_smallest_table_of_each_game(client):
    made = [table_of(client, start(client, seed="", players="")) for _ in range(2)]
    assert made[0].seed != made[1].seed and len(made[0].specs) == 2
    murray = table_of(client, start(client, game="murray_frog_v0", players="", seed=""))
    assert len(murray.specs) == 3
