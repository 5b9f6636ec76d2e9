"""Config files: one per registered game, every key checked, mistakes named with the valid keys."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fowlplay import envs
from fowlplay.training.cli import main
from fowlplay.training.config import ConfigError, TrainConfig, from_dict, help_table, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_every_registered_game_has_a_valid_config(game):
    config = load_config(CONFIGS / f"{game}.yaml")
    assert config.game == game
    aec = envs.make(game, **config.env_options)
    smallest = envs.player_counts(game)[0]
    assert len(aec.possible_agents) == smallest, (
        "default configs train the smallest table (2 players where allowed)"
    )
    # Every key is spelled out in the file, so a reader sees the whole run.
    data = yaml.safe_load((CONFIGS / f"{game}.yaml").read_text())
    defaults = TrainConfig().to_dict()
    assert set(data) == set(defaults)
    assert set(data["ppo"]) == set(defaults["ppo"])
    assert set(data["opponents"]) == set(defaults["opponents"])


def test_unknown_key_lists_the_valid_ones_and_the_closest():
    with pytest.raises(ConfigError) as error:
        from_dict({"game": "chicken_v1", "total_timestep": 10})
    message = str(error.value)
    assert "unknown key 'total_timestep'" in message and "did you mean 'total_timesteps'" in message
    assert "'n_envs'" in message and "'ppo'" in message


def test_unknown_nested_key_names_its_section():
    with pytest.raises(
        ConfigError, match=r"unknown key 'ppo\.learning_rat'.*did you mean 'learning_rate'.*valid keys in ppo"
    ):
        from_dict({"ppo": {"learning_rat": 0.1}})
    with pytest.raises(ConfigError, match=r"unknown key 'opponents\.randm'"):
        from_dict({"opponents": {"randm": 0.1}})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"n_envs": "four"}, "n_envs must be an int"),
        ({"n_envs": 2.5}, "n_envs must be an int"),
        ({"progress_bar": "yes"}, "progress_bar must be true or false"),
        ({"ppo": {"net_arch": 64}}, "ppo.net_arch must be a list"),
        ({"ppo": {"learning_rate": "fast"}}, "ppo.learning_rate must be a number"),
        ({"ppo": []}, "ppo must be a mapping"),
        ({"game": "chess_v0"}, "unknown game 'chess_v0'"),
        ({"env_options": {"num_players": 9}}, "env_options: chicken_v1 supports 2-4 players"),
        ({"env_options": {"players": 2}}, r"unknown option\(s\) \['players'\]"),
        ({"learner_seat": 5}, "learner_seat must be 'random' or an int 0..1"),
        ({"learner_seat": "first"}, "learner_seat must be 'random'"),
        ({"vec_env": "ray"}, r"vec_env must be one of \['subproc', 'dummy', 'batched'\]"),
        ({"total_timesteps": 0}, "total_timesteps must be > 0"),
        ({"ppo": {"activation": "gelu"}}, "ppo.activation must be one of"),
        ({"ppo": {"lr_schedule": "cosine"}}, r"ppo.lr_schedule must be one of \['constant', 'linear'\]"),
        ({"opponents": {"random": 0, "baseline": 0, "latest": 0, "snapshot": 1}}, "snapshots do not exist"),
        ({"opponents": {"random": -1}}, "weights must be >= 0"),
        ({"reward_options": {"num_players": 3}}, "change the observation or action space"),
        ({"reward_options": {"reward_mode": "fun"}}, "reward_options: reward_mode must be"),
        ({"shaping": -0.5, "game": "murder_most_fowl_v0"}, "shaping must be >= 0"),
        ({"shaping": 1.0}, r"chicken_v1 defines no potential.*\['murder_most_fowl_v0'\]"),
    ],
)
def test_bad_values_are_named(data, message):
    with pytest.raises(ConfigError, match=message):
        from_dict(data)


def test_yaml_scientific_notation_and_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("game: chicken_v1\nppo:\n  learning_rate: 1e-4\n")
    config = load_config(path, {"ppo.n_steps": 64, "seed": 9, "max_minutes": 1})
    assert (config.ppo.learning_rate, config.ppo.n_steps, config.seed, config.max_minutes) == (
        1e-4,
        64,
        9,
        1.0,
    )
    assert config.run_dir() == Path("runs/chicken_v1")


def test_cli_reports_config_mistakes_with_status_2(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("game: chicken_v1\nn_env: 2\n")
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'n_env'" in err and "did you mean 'n_envs'" in err and str(path) in err
    assert main(["--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read config" in capsys.readouterr().err
    assert main(["--config", str(CONFIGS / "chicken_v1.yaml"), "--set", "ppo.gamma"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_list_keys_shows_every_key_with_help(capsys):
    assert main(["--list-keys"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == help_table()
    for key in ("total_timesteps", "ppo.n_steps", "opponents.snapshot_window", "max_minutes"):
        assert key in out


def test_reward_options_shape_training_only():
    from fowlplay.training.sb3.trainer import make_vec_env

    config = from_dict({"reward_options": {"reward_mode": "score"}, "vec_env": "dummy", "n_envs": 1})
    vec = make_vec_env(config)
    try:
        assert vec.envs[0].unwrapped.aec.options.reward_mode == "score"
    finally:
        vec.close()
    assert config.env_options == {} and config.training_options() == {"reward_mode": "score"}


@pytest.mark.parametrize(("schedule", "halfway"), [("constant", 1e-3), ("linear", 5e-4)])
def test_lr_schedule_reaches_the_learner(schedule, halfway):
    from fowlplay.training.sb3.trainer import make_model, make_vec_env

    config = from_dict(
        {
            "vec_env": "dummy",
            "n_envs": 1,
            "ppo": {"lr_schedule": schedule, "learning_rate": 1e-3, "n_steps": 64, "batch_size": 64},
        }
    )
    vec_env = make_vec_env(config)
    try:
        model = make_model(config, vec_env)
        # SB3 asks the schedule with the fraction of training still to go
        assert model.lr_schedule(1.0) == pytest.approx(1e-3)
        assert model.lr_schedule(0.5) == pytest.approx(halfway)
    finally:
        vec_env.close()
