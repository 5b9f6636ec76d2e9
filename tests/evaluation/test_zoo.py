"""The model zoo (evaluation/zoo): every shipped agent loads, matches its recorded SHA-256 and beats
random in a few duplicate matches; a changed file is refused; `zoo:GAME` and `zoo` are agent specs
of every command (one parser: evaluation/agents.py, and fowlplay-check's --policy)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

pytest.importorskip("torch")

from fowlplay import envs
from fowlplay.evaluation import zoo
from fowlplay.evaluation.agents import AgentSpecError, make_agent, parse_spec, resolve_spec
from fowlplay.evaluation.check_cli import _looks_like_module_callable
from fowlplay.evaluation.matches import EvalConfig
from fowlplay.evaluation.tournament import evaluate
from fowlplay.training.checkpoint import read_metadata

#: Duplicate matches against random per game: few, since each is every seating of one deal.
MATCHES = 2


def test_the_zoo_holds_an_agent_for_every_game_at_a_few_megabytes():
    assert zoo.games() == sorted(envs.ENV_NAMES)
    size = sum(f.stat().st_size for f in zoo.FOLDER.iterdir() if f.suffix in (".npz", ".json"))
    assert size < 8 * 2**20


@pytest.mark.parametrize("game", sorted(envs.ENV_NAMES))
def test_each_shipped_agent_loads_matches_its_hash_and_beats_random(game, tmp_path):
    entry = zoo.entry(game)
    stem = zoo.path(game)
    assert zoo.file_sha256(stem.with_suffix(".npz")) == entry["npz_sha256"]
    metadata = read_metadata(stem)
    assert (metadata["game"], metadata["env_options"]["num_players"]) == (game, entry["players"])
    env = envs.make(game, num_players=entry["players"])
    agent = zoo.load(game, env=env, seed=0)
    env.reset(seed=0)
    observation, *_ = env.last()
    action = agent.act(observation["observation"], observation["action_mask"])
    assert observation["action_mask"][action] == 1

    specs = (resolve_spec(parse_spec(f"zoo:{game}"), env), parse_spec("random"))
    config = EvalConfig(game, specs, MATCHES, entry["players"], seed=0)
    summary = evaluate(config, tmp_path / "eval", progress=False, bootstrap=10)
    (pair,) = [p for p in summary["pairwise"] if (p["agent"], p["opponent"]) == (f"zoo:{game}", "random")]
    assert pair["score"] > 0.5, pair


def _copy_of_the_zoo(tmp_path, monkeypatch):
    """The zoo's files in a folder of their own, which the zoo module then reads."""
    folder = tmp_path / "zoo"
    shutil.copytree(zoo.FOLDER, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(zoo, "FOLDER", folder)
    monkeypatch.setattr(zoo, "INDEX", folder / zoo.INDEX.name)
    return folder


@pytest.mark.parametrize("suffix", ["npz", "json"])
def test_a_changed_file_is_refused_before_it_is_played(tmp_path, monkeypatch, suffix):
    folder = _copy_of_the_zoo(tmp_path, monkeypatch)
    file = folder / f"chicken_v1.{suffix}"
    data = bytearray(file.read_bytes())
    data[-2] ^= 1  # one bit of the file's end: the weights' last bytes, or the metadata's closing text
    file.write_bytes(bytes(data))
    with pytest.raises(zoo.ZooError, match=re.escape(f"chicken_v1.{suffix} does not match its SHA-256")):
        zoo.load("chicken_v1")
    with pytest.raises(AgentSpecError, match="does not match its SHA-256") as raised:
        parse_spec("zoo:chicken_v1")
    assert "\n" not in str(raised.value)
    assert zoo.path("murder_she_crows_v1")  # the other agents still load


def test_a_missing_file_or_index_is_one_clear_line(tmp_path, monkeypatch):
    folder = _copy_of_the_zoo(tmp_path, monkeypatch)
    (folder / "chicken_v1.npz").unlink()
    with pytest.raises(zoo.ZooError, match=re.escape("chicken_v1.npz is missing")):
        zoo.path("chicken_v1")
    (folder / "zoo.json").write_text(json.dumps({"chicken_v1": {"players": 2}}))
    with pytest.raises(zoo.ZooError, match=re.escape("index zoo.json is malformed")):
        zoo.games()


def test_zoo_specs_resolve_to_the_shipped_checkpoint_and_name_what_is_allowed():
    spec = parse_spec("zoo:murder_she_crows_v1")
    assert (spec.kind, spec.label, spec.zoo) == (
        "checkpoint",
        "zoo:murder_she_crows_v1",
        "murder_she_crows_v1",
    )
    assert spec.path == str(zoo.path("murder_she_crows_v1"))
    assert parse_spec("z=zoo:chicken_v1").label == "z"
    with pytest.raises(AgentSpecError, match="no agent for 'chess'; it has: chicken_v1, "):
        parse_spec("zoo:chess")
    # `zoo` alone: the zoo agent of the game being played, once the game is known.
    alone = parse_spec("zoo")
    assert (alone.kind, alone.label) == ("zoo", "zoo")
    resolved = resolve_spec(alone, envs.make("murder_she_crows_v1"))
    assert (resolved.kind, resolved.zoo, resolved.path) == ("checkpoint", "murder_she_crows_v1", spec.path)
    assert resolved.model["weights_sha256"] == read_metadata(spec.path)["policy"]["weights_sha256"]
    # Another game, or another player count, than the agent plays: one line naming what it plays.
    with pytest.raises(
        AgentSpecError, match="plays it with 2 players; this game is murder_she_crows_v1 with 3"
    ):
        make_agent("zoo", envs.make("murder_she_crows_v1", num_players=3))
    with pytest.raises(
        AgentSpecError, match="the zoo agent of chicken_v1 plays it with 2 players; this game is"
    ):
        make_agent("zoo:chicken_v1", envs.make("murder_she_crows_v1"))
    # fowlplay-check --policy reads zoo:GAME as an agent spec, not as MODULE:CALLABLE.
    assert not _looks_like_module_callable("zoo:chicken_v1")
