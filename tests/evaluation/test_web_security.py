"""The web table against crafted run folders and requests (issue 56): nothing read from outside
`--runs` (links followed), outside answered as missing, every value a request or a run.json may
give held to its limit with a 4xx (never a 5xx), Host and Origin checked, slow clients timed out,
and checkpoints whose files link out of their folder refused by fowlplay-eval as well.

The headless-browser side of the same checks (a second origin posting, a rebinding host name, a
report's remote image) is in test_web_browser.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("flask")

from fowlplay.evaluation.web.app import create_app
from fowlplay.evaluation.web.cli import serve

SECRET = "the-secret-outside-the-runs-folder"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A runs folder with a checkpoint and an evaluation that plays it, and a secret outside."""
    from fowlplay import envs
    from fowlplay.evaluation.agents import parse_specs
    from fowlplay.evaluation.matches import EvalConfig, run_games
    from fowlplay.training.checkpoint import export_checkpoint
    from fowlplay.training.config import TrainConfig
    from fowlplay.training.policy import build_policy, policy_state
    from gymnasium import spaces
    from PIL import Image

    base = tmp_path_factory.mktemp("web-security")
    runs, outside = base / "runs", base / "outside"
    runs.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(f"# {SECRET}\n")
    aec = envs.make("chicken_v1", target=10)
    config = TrainConfig(game="chicken_v1", trainer="jax")
    config.ppo.net_arch, config.ppo.activation = [8], "tanh"
    size = aec.observation_space("player_0")["observation"].shape[0]
    policy = build_policy(
        spaces.Box(-1e9, 1e9, (size,)), spaces.Discrete(aec.action_space("player_0").n), [8], "tanh"
    )
    export_checkpoint(
        aec, config, runs / "trained" / "final", policy_state(policy), 0, "final", {}, trainer="jax"
    )
    specs = parse_specs([str(runs / "trained"), "baseline"])
    run_games(
        EvalConfig("chicken_v1", tuple(specs), 1, 2, options={"target": 10}), runs / "eval", progress=False
    )
    (runs / "eval" / "report.md").write_text("# report\n\n![ratings](ratings.png)\n")
    Image.new("RGB", (4, 4)).save(runs / "eval" / "ratings.png")
    return {"runs": runs, "outside": outside, "base": base}


@pytest.fixture
def client(world):
    app = create_app(world["runs"])
    client = app.test_client()
    client.store = app.extensions["fowlplay"]
    return client


def message(response) -> str:
    text = response.get_data(as_text=True)
    assert "Traceback" not in text and SECRET not in text
    found = re.search(r'id="error">([^<]*)<', text)
    assert found, text[:300]
    return found.group(1).replace("&#39;", "'")


def crafted_run(world, name: str) -> Path:
    """A fresh copy of the evaluation's folder to edit."""
    folder = world["runs"] / name
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(world["runs"] / "eval", folder, symlinks=True)
    return folder


@pytest.mark.parametrize("file", ["report.md", "games.jsonl", "run.json", "ratings.png"])
def test_a_file_that_links_out_of_the_runs_folder_answers_as_a_missing_one(world, client, file):
    linked, missing = crafted_run(world, f"linked-{file}"), crafted_run(world, f"missing-{file}")
    target = world["outside"] / ("secret.md" if file != "ratings.png" else "secret.png")
    shutil.copy(world["outside"] / "secret.md", target) if not target.exists() else None
    (linked / file).unlink()
    (linked / file).symlink_to(target)
    (missing / file).unlink()
    url = {
        "report.md": "/results?run={}",
        "games.jsonl": "/replay?run={}",
        "run.json": "/replay/view?run={}&game=0-0-0",
        "ratings.png": "/results/file?run={}&name=ratings.png",
    }[file]
    answers = [client.get(url.format(run)) for run in (linked.name, missing.name)]
    assert [a.status_code for a in answers] == [404, 404]
    assert message(answers[0]) == message(answers[1]).replace("missing-", "linked-")


def test_a_run_folder_that_links_out_or_climbs_out_is_no_run(world, client):
    (world["runs"] / "away").symlink_to(world["outside"], target_is_directory=True)
    for name in ("away", "../outside", str(world["outside"])):
        answer = client.get(f"/results?run={name}")
        assert answer.status_code == 404
        assert message(answer).startswith(f"no run {name[:80]!r} under the runs folder")
    assert "away" not in client.get("/").get_data(as_text=True)


def test_checkpoints_are_named_relative_to_the_runs_folder_and_only_inside_it(world, client):
    form = {"game": "chicken_v1", "players": "2", "seat": "0", "seed": "1", "options": "target=10"}
    assert client.post("/play", data=form | {"opponents": "ckpt:trained"}).status_code == 303
    table = client.store["tables"].get(
        client.post("/play", data=form | {"opponents": "ckpt:trained/final.npz"})
        .headers["Location"]
        .rsplit("/", 1)[-1]
    )
    assert table.specs[1] == "ckpt:trained/final.npz"
    outside = world["outside"] / "ckpt"
    shutil.copytree(world["runs"] / "trained", outside, dirs_exist_ok=True)
    answers = {
        spec: client.post("/play", data=form | {"opponents": spec})
        for spec in (
            f"ckpt:{outside}",
            "ckpt:../outside/ckpt",
            "ckpt:nowhere",
            str(world["runs"] / "trained"),
        )
    }
    for spec, answer in answers.items():
        assert answer.status_code == 400, spec
    texts = [message(a) for a in list(answers.values())[:3]]
    assert all("inside the runs folder" in t for t in texts) and "name a checkpoint as ckpt:PATH" in message(
        answers[str(world["runs"] / "trained")]
    )


def test_a_checkpoint_whose_weights_link_elsewhere_is_refused_by_the_web_and_fowlplay_eval(
    world, client, capsys
):
    from fowlplay.evaluation import cli as eval_cli

    folder = world["runs"] / "linked-ckpt"
    shutil.copytree(world["runs"] / "trained", folder, dirs_exist_ok=True)
    elsewhere = world["outside"] / "weights.npz"
    shutil.copy(folder / "final.npz", elsewhere)
    (folder / "final.npz").unlink()
    (folder / "final.npz").symlink_to(elsewhere)
    form = {
        "game": "chicken_v1",
        "players": "2",
        "seed": "1",
        "opponents": "ckpt:linked-ckpt",
        "options": "target=10",
    }
    answer = client.post("/play", data=form)
    assert answer.status_code == 400 and "no checkpoint at 'linked-ckpt' inside the runs folder" in message(
        answer
    )
    periodic = world["runs"] / "linked-periodic"
    periodic.mkdir(exist_ok=True)
    (world["outside"] / "periodic").mkdir(exist_ok=True)
    for suffix in (".json", ".npz"):
        shutil.copy(
            world["runs"] / "trained" / f"final{suffix}", world["outside"] / "periodic" / f"step_5{suffix}"
        )
    (periodic / "checkpoints").symlink_to(world["outside"] / "periodic", target_is_directory=True)
    answer = client.post("/play", data=form | {"opponents": "ckpt:linked-periodic"})
    assert answer.status_code == 400 and "inside the runs folder" in message(answer)
    argv = [
        "--game",
        "chicken_v1",
        "--option",
        "target=10",
        "--agents",
        str(folder),
        "random",
        "--matches",
        "1",
    ]
    code = eval_cli.main([*argv, "--out", str(world["base"] / "eval-linked"), "--no-progress"])
    assert code != 0
    assert "leads outside its folder" in capsys.readouterr().err


def test_a_copied_runs_folder_replays_its_checkpoint_games(world):
    record = json.loads((world["runs"] / "eval" / "run.json").read_text())
    assert record["weights"] == {"trained": "../trained/final.npz"}
    copy = world["base"] / "copied"
    shutil.copytree(world["runs"], copy, symlinks=True, ignore=shutil.ignore_patterns("linked-*", "away"))
    moved = world["base"] / "original-gone"
    os.rename(world["runs"] / "trained", moved)  # the absolute path run.json also holds leads nowhere
    try:
        client = create_app(copy).test_client()
        answer = client.get("/replay/view?run=eval&game=0-0-0&step=1")
        assert answer.status_code == 200, message(answer)
    finally:
        os.rename(moved, world["runs"] / "trained")


@pytest.mark.parametrize(
    ("change", "text"),
    [
        (
            lambda i: i.update(players=10**9),
            "players '1000000000' is not allowed for chicken_v1; allowed: 2..4",
        ),
        (lambda i: i["options"].update(target=1e300), "option target=1e+300: give an integer of at most 200"),
        (lambda i: i["options"].update(colour="red"), "chicken_v1 has no rule option 'colour'"),
        (lambda i: i.update(game="go_v9"), "unknown game 'go_v9'"),
        (lambda i: i["agents"][1].update(spec="ismcts:1000000000"), "at most 200 is allowed here"),
        (lambda i: i.update(seating="everyone"), "the seating must be one of"),
        (lambda i: i.update(agents="x" * 10), "it must list 1..64 agents"),
    ],
)
def test_an_edited_run_json_is_a_4xx_naming_its_limit(world, client, change, text):
    folder = crafted_run(world, "edited")
    record = json.loads((folder / "run.json").read_text())
    change(record["identity"])
    (folder / "run.json").write_text(json.dumps(record))
    answer = client.get("/replay/view?run=edited&game=0-0-0")
    assert 400 <= answer.status_code < 500
    assert text in message(answer)


def test_files_larger_than_their_limit_are_refused_unread(world, client):
    folder = crafted_run(world, "big")
    with open(folder / "report.md", "wb") as handle:
        handle.truncate(100 * 2**20)  # 100 MiB, sparse
    answer = client.get("/results?run=big")
    assert answer.status_code == 422 and "more than the 262,144 such a file may have" in message(answer)
    (folder / "games.jsonl").write_bytes(b"{" + b" " * 70_000 + b"}\n")
    answer = client.get("/replay?run=big")
    assert answer.status_code == 422 and "line 1 is longer than 65,536 bytes" in message(answer)


def test_a_foreign_host_or_a_post_from_another_site_is_refused(client):
    assert client.get("/", headers={"Host": "rebind.test"}).status_code == 403
    assert client.get("/", headers={"Host": "localhost:81"}).status_code == 403
    page = client.get("/")
    assert page.status_code == 200 and "img-src 'self'" in page.headers["Content-Security-Policy"]
    form = {"game": "chicken_v1", "players": "2", "seat": "0", "seed": "1", "opponents": "random"}
    before = len(client.store["tables"]._tables)
    for headers in ({"Origin": "http://evil.test"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}):
        answer = client.post("/play", data=form, headers=headers)
        assert answer.status_code == 403 and "another site" in message(answer)
    assert len(client.store["tables"]._tables) == before
    assert client.post("/play", data=form, headers={"Origin": "http://localhost"}).status_code == 303
    from fowlplay.evaluation.web.app import LOCAL_HOSTS

    named = create_app(client.store["runs"].root, hosts=(*LOCAL_HOSTS, "table.lan")).test_client()
    assert named.get("/", headers={"Host": "table.lan"}).status_code == 200  # fowlplay-web --allow-host


def test_slow_and_half_open_clients_hold_no_thread_and_no_game(world):
    app = create_app(world["runs"])
    web = serve(app, "127.0.0.1", 0, timeout=1.0, connections=8)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port = web.server_port

    def request(raw: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(raw)
            return sock.recv(65536)

    try:
        started = request(
            b"POST /play HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 61\r\n\r\ngame=chicken_v1&players=2&seat=0&opponents=random&seed=100000" % port
        )
        location = re.search(rb"Location: (\S+)", started).group(1).decode()
        threads = threading.active_count()
        half_open = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        for sock in half_open[:4]:  # a move whose body never finishes arriving
            sock.sendall(
                b"POST %s/move HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 100\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\n\r\nat=0&act" % (location.encode(), port)
            )
        time.sleep(0.3)
        assert threading.active_count() <= threads + 8
        time.sleep(1.5)  # every silent connection timed out
        answer = request(
            b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (location.encode(), port)
        )
        assert answer.startswith(b"HTTP/1.1 200")
        assert threading.active_count() <= threads + 1
        for sock in half_open:
            sock.close()
    finally:
        web.shutdown()
        web.server_close()


def test_agents_stop_at_the_time_limit_and_go_on_when_asked(client, monkeypatch):
    from fowlplay.evaluation.web import limits

    monkeypatch.setattr(limits, "MAX_AGENT_SECONDS", 0.0)
    form = {"game": "murray_frog_v0", "seat": "2", "seed": "4", "opponents": "random"}
    url = client.post("/play", data=form).headers["Location"]
    table = client.store["tables"].get(url.rsplit("/", 1)[-1])
    assert table.waiting and table.game.current_player != 2 and table.decisions == 0
    page = client.get(url).get_data(as_text=True)
    assert 'id="continue"' in page and 'id="moves"' not in page
    client.post(f"{url}/move", data={"action": "0", "at": "0"})
    assert "the other seats are still thinking" in message(client.get(url))
    monkeypatch.setattr(limits, "MAX_AGENT_SECONDS", 20.0)
    assert client.post(f"{url}/continue").status_code == 303
    assert not table.waiting and table.game.current_player == 2
    assert 'id="moves"' in client.get(url).get_data(as_text=True)


def test_agents_stop_when_the_client_goes_away(world):
    app = create_app(world["runs"])
    web = serve(app, "127.0.0.1", 0)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    body = b"game=murray_frog_v0&players=6&seat=5&seed=2&opponents=ismcts:30"
    try:
        with socket.create_connection(("127.0.0.1", web.server_port)) as sock:
            sock.sendall(
                b"POST /play HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (web.server_port, len(body), body)
            )
            time.sleep(0.5)
        store = app.extensions["fowlplay"]["tables"]
        deadline = time.monotonic() + 30
        while not store._tables and time.monotonic() < deadline:
            time.sleep(0.05)
        (table,) = store._tables.values()
        assert table.lock.acquire(timeout=30)  # the request let go of the game
        table.lock.release()
        assert table.waiting and table.game.current_player != 5, "the agents played on for a client that left"
    finally:
        web.shutdown()
        web.server_close()


@pytest.mark.parametrize(
    ("change", "status"),
    [({"table": 7}, 404), ({"arrangement": 9}, 404), ({"deal_seed": -1}, 409), ({"deal_seed": "x"}, 409)],
)
def test_an_edited_games_row_is_a_4xx(world, client, change, status):
    folder = crafted_run(world, "rows")
    row = json.loads((folder / "games.jsonl").read_text().splitlines()[0]) | change
    (folder / "games.jsonl").write_text(json.dumps(row) + "\n")
    answer = client.get(f"/replay/view?run=rows&game={row['table']}-{row['match']}-{row['arrangement']}")
    assert answer.status_code == status, message(answer)


def test_a_replay_longer_than_its_limit_is_a_503(world, client, monkeypatch):
    from fowlplay.evaluation.web import tables

    monkeypatch.setattr(tables, "MAX_REPLAY_DECISIONS", 3)
    answer = client.get("/replay/view?run=eval&game=0-0-1")
    assert answer.status_code == 503 and "or 3 decisions: it is not shown" in message(answer)


def test_reading_a_long_games_file_stops_at_its_time_limit(world, client, monkeypatch):
    from fowlplay.evaluation.web import runs

    folder = crafted_run(world, "long")
    rows = (folder / "games.jsonl").read_text()
    (folder / "games.jsonl").write_text("\n" * 1500 + rows)
    monkeypatch.setattr(runs, "MAX_GAMES_SECONDS", -1.0)
    answer = client.get("/replay/view?run=long&game=0-0-0")
    assert answer.status_code == 503 and "takes longer than" in message(answer)


def test_an_evaluation_with_a_zoo_agent_replays_from_the_package_file(world):
    """A zoo agent's weights live in the package, not in --runs: its games replay by its verified file."""
    from fowlplay.evaluation.agents import parse_specs
    from fowlplay.evaluation.matches import EvalConfig, run_games

    runs = world["base"] / "zoo-runs"
    run_games(
        EvalConfig("chicken_v1", tuple(parse_specs(["zoo:chicken_v1", "baseline"])), 1, 2),
        runs / "eval",
        progress=False,
    )
    client = create_app(runs).test_client()
    answer = client.get("/replay/view?run=eval&game=0-0-0&step=1")
    assert answer.status_code == 200, message(answer)
    assert json.loads((runs / "eval" / "run.json").read_text())["weights"] == {}  # no path out of the run
