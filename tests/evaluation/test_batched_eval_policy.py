"""A checkpoint's weights as a pure JAX policy: the distribution its `PolicyAgent` plays (checked
against the torch network that every command loads), refused when the weights do not match their
JSON, and the example of docs/batched.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("torch")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "batched.md"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A jax-trainer checkpoint of 2-player Chicken with freshly initialised (random) weights."""
    import jax
    from fowlplay import envs
    from fowlplay.training.checkpoint import export_checkpoint
    from fowlplay.training.config import load_config
    from fowlplay.training.jitted.ppo import init_params

    config = load_config(
        Path(__file__).resolve().parents[2] / "configs" / "chicken_v1.yaml",
        {"trainer": "jax", "ppo.net_arch": [16, 8], "ppo.activation": "relu"},
    )
    aec = envs.make("chicken_v1", num_players=2)
    obs_size, actions = (
        aec.observation_space("player_0")["observation"].shape[0],
        aec.action_space("player_0").n,
    )
    params = init_params(jax.random.PRNGKey(1), obs_size, actions, [16, 8])
    # Larger action-head weights than SB3's start, so the distribution is far from uniform.
    params["action_net.weight"] = params["action_net.weight"] * 300
    weights = {name: np.asarray(value) for name, value in params.items()}
    stem = tmp_path_factory.mktemp("run") / "final"
    export_checkpoint(aec, config, stem, weights, 0, "final", {}, trainer="jax")
    return stem


def _observations(count: int):
    from fowlplay import envs
    from fowlplay.envs.core.testing import random_legal

    env = envs.make("chicken_v1", num_players=2)
    env.reset(seed=11)
    rng = np.random.default_rng(2)
    out = []
    while len(out) < count:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            env.reset(seed=int(rng.integers(1 << 30)))
            continue
        view = env.observe(name)
        out.append((view["observation"], view["action_mask"]))
        env.step(random_legal(view["action_mask"], rng))
    return out


def test_the_jax_policy_is_the_distribution_the_checkpoint_plays(checkpoint):
    import jax
    from fowlplay.training.agent import PolicyAgent
    from fowlplay.training.jitted.policies import load_jax_policy
    from fowlplay.training.policy import action_probabilities

    policy, metadata = load_jax_policy(checkpoint)
    agent = PolicyAgent.from_checkpoint(checkpoint)
    assert metadata["weights_sha256"] == agent.metadata["weights_sha256"]
    batched = jax.jit(policy)
    far_from_uniform = 0
    for observation, mask in _observations(40):
        expected = action_probabilities(agent.policy, observation, mask)
        logits = np.asarray(batched(observation, mask.astype(bool)))
        probs = np.asarray(jax.nn.softmax(logits))
        np.testing.assert_allclose(probs, expected, atol=2e-6)
        assert (probs[mask == 0] == 0).all()
        far_from_uniform += probs.max() > 0.9
    assert far_from_uniform >= 5  # the comparison is not of two near-uniform distributions


def test_weights_that_do_not_match_their_json_are_refused(checkpoint, tmp_path):
    import shutil

    from fowlplay.training.checkpoint import CheckpointError
    from fowlplay.training.jitted.policies import load_jax_policy

    stem = tmp_path / "copy"
    shutil.copy(checkpoint.with_suffix(".json"), stem.with_suffix(".json"))
    with np.load(checkpoint.with_suffix(".npz")) as data:
        weights = {name: data[name].copy() for name in data.files}
    weights["action_net.bias"][0] += 1.0
    np.savez(stem.with_suffix(".npz"), **weights)
    with pytest.raises(CheckpointError, match="sha256 differs"):
        load_jax_policy(stem)


def test_the_example_of_docs_batched_md_runs_as_written():
    from fowlplay.evaluation import zoo

    try:
        shipped = "chicken_v1" in zoo.games()
    except zoo.ZooError:
        shipped = False
    if not shipped:
        pytest.skip("the model zoo ships no chicken_v1 agent in this checkout")
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Reference agents inside JAX", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)
    scope: dict = {}
    exec(compile(code, str(DOCS), "exec"), scope)
    assert 0.0 <= scope["score"] <= 1.0
