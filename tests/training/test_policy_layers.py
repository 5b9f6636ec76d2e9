"""`batch_probabilities` runs a plain MLP's layers directly: the same numbers as its own modules.

The oracle is the network's own forward pass (`_module_scores`, the modules as torch runs them):
every head, activation and batch size must give exactly the same scores, bit for bit, so that a
self-play or evaluation run plays the same actions with the direct path as without it.
"""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.training.policy import (
    _layer_scores,
    _module_scores,
    _plain_layers,
    batch_probabilities,
    build_policy,
    load_policy_state,
    policy_state,
)

torch = pytest.importorskip("torch")


def spaces(game: str):
    env = envs.make(game)
    agent = env.possible_agents[0]
    return env.observation_space(agent)["observation"], env.action_space(agent)


def batch(observation_space, action_space, size: int, seed: int):
    """Random observations in [0, 1) and masks with about a tenth of the actions legal (never none)."""
    rng = np.random.default_rng(seed)
    observations = rng.random((size, observation_space.shape[0]), dtype=np.float32)
    masks = (rng.random((size, action_space.n)) < 0.1).astype(np.int8)
    masks[:, rng.integers(action_space.n)] = 1
    return observations, masks


def assert_same_as_modules(policy, observations: np.ndarray, direct=_layer_scores) -> None:
    greedy = getattr(policy, "greedy", False)
    layers = _plain_layers(policy, greedy)
    assert layers, "a plain MLP policy must take the direct path"
    with torch.no_grad():
        obs = torch.as_tensor(observations)
        expected = _module_scores(policy, obs, greedy)
        got = direct(torch, layers, obs)
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected), "the direct path must give the modules' numbers exactly"


@pytest.mark.parametrize("game", ["chicken_v1", "murder_most_fowl_v0", "murray_frog_v0"])
@pytest.mark.parametrize(
    "head, activation, net_arch",
    [
        ("actor_critic", "tanh", [64, 64]),
        ("actor_critic", "relu", [32]),
        ("q_values", "relu", [64, 32]),
        ("q_values", "tanh", [16]),
    ],
)
def test_direct_layers_give_the_modules_scores_exactly(game, head, activation, net_arch):
    observation_space, action_space = spaces(game)
    torch.manual_seed(1)
    policy = build_policy(observation_space, action_space, net_arch, activation, head=head)
    # One layer per hidden size plus the output layer, each hidden one with its activation.
    assert [a for _, _, a in _plain_layers(policy, head == "q_values")] == [activation] * len(net_arch) + [
        None
    ]
    for size, seed in ((1, 0), (3, 1), (16, 2)):
        observations, masks = batch(observation_space, action_space, size, seed)
        assert_same_as_modules(policy, observations)
        probs = batch_probabilities(policy, observations, masks)
        assert np.all(probs[masks == 0] == 0) and np.allclose(probs.sum(axis=1), 1.0)


def test_new_weights_reach_the_direct_path():
    """The cached layers are the policy's own tensors: loading weights (as the pool's `latest` is
    updated in place) changes what the direct path computes."""
    observation_space, action_space = spaces("murray_frog_v0")
    torch.manual_seed(2)
    policy = build_policy(observation_space, action_space, [32], "tanh")
    observations, masks = batch(observation_space, action_space, 4, 3)
    before = batch_probabilities(policy, observations, masks)
    torch.manual_seed(3)
    load_policy_state(policy, policy_state(build_policy(observation_space, action_space, [32], "tanh")))
    after = batch_probabilities(policy, observations, masks)
    assert not np.array_equal(before, after)
    assert_same_as_modules(policy, observations)


def test_a_network_that_is_not_a_plain_mlp_runs_its_modules():
    observation_space, action_space = spaces("chicken_v1")
    torch.manual_seed(4)
    policy = build_policy(observation_space, action_space, [16], "relu", head="q_values")
    width = policy.q_net[0].out_features
    policy.q_net.insert(1, torch.nn.LayerNorm(width))  # a layer the direct path does not know
    assert _plain_layers(policy, True) is None
    observations, masks = batch(observation_space, action_space, 5, 5)
    with torch.no_grad():
        q_values = policy.q_values(torch.as_tensor(observations)).numpy()
    best = np.where(masks.astype(bool), q_values, -np.inf).argmax(axis=1)
    probs = batch_probabilities(policy, observations, masks)
    assert np.array_equal(probs.argmax(axis=1), best)


def test_a_direct_path_that_drops_an_activation_is_caught():
    """Broken twin: the comparison with the modules must fail for a subtly wrong forward pass."""
    observation_space, action_space = spaces("murder_most_fowl_v0")
    torch.manual_seed(6)
    policy = build_policy(observation_space, action_space, [32, 32], "tanh")
    observations, _ = batch(observation_space, action_space, 2, 7)

    def no_last_activation(torch_, layers, obs):
        return _layer_scores(torch_, [*layers[:-2], (*layers[-2][:2], None), layers[-1]], obs)

    with pytest.raises(AssertionError, match="exactly"):
        assert_same_as_modules(policy, observations, direct=no_last_activation)
