"""A trained policy network: building it, its weights, and its masked action distribution (the
helpers the opponent pool and `training.agent.PolicyAgent` share).

The masked action distribution is computed once here, from the policy's own layers, so an agent
draws from its own generator (never torch's global one) and a seed fixes its play. A network has a
`head`: `actor_critic` (MaskablePPO: a masked softmax over its logits) or `q_values` (the masked
DQN: all probability on the legal actions of highest Q-value, shared on a tie).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("trained agents need torch: pip install 'fowlplay[train]'") from exc
    return torch


def policy_kwargs(net_arch: list[int], activation: str) -> dict[str, Any]:
    """MaskablePPO `policy_kwargs` for hidden sizes and an activation name ('tanh' or 'relu')."""
    torch = _torch()
    activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
    if activation not in activations:
        raise ValueError(f"activation must be one of {list(activations)}; got {activation!r}")
    kwargs = {"net_arch": list(net_arch), "activation_fn": activations[activation]}
    if _fused_adam_on_cpu(torch):
        # One fused kernel per step instead of a loop of small ops per tensor: the same Adam update,
        # with the eps SB3 sets when it is given no optimizer_kwargs.
        kwargs["optimizer_kwargs"] = {"eps": 1e-5, "fused": True}
    return kwargs


def _fused_adam_on_cpu(torch) -> bool:
    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 4)  # fused Adam runs on the CPU from torch 2.4


#: Network heads a checkpoint may have (`policy.head` in its metadata; absent: actor_critic).
HEADS = ("actor_critic", "q_values")


def build_policy(
    observation_space, action_space, net_arch: list[int], activation: str, head: str = "actor_critic"
):
    """A fresh MLP policy on the CPU (weights are loaded into it afterwards): MaskablePPO's, or for
    head 'q_values' the masked DQN's Q-network."""
    if head == "q_values":
        from fowlplay.training.sb3.dqn import QValuePolicy

        policy = QValuePolicy(int(observation_space.shape[0]), int(action_space.n), net_arch, activation)
        policy.set_training_mode(False)
        return policy
    if head != "actor_critic":
        raise ValueError(f"head must be one of {list(HEADS)}; got {head!r}")
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    policy = MaskableActorCriticPolicy(
        observation_space, action_space, lambda _: 0.0, **policy_kwargs(net_arch, activation)
    )
    policy.set_training_mode(False)
    return policy


def policy_state(policy) -> dict[str, np.ndarray]:
    """The policy's weights as numpy arrays (cheap to pickle to subprocess workers)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in policy.state_dict().items()}


def playing_state(model) -> dict[str, np.ndarray]:
    """The weights of the network a learner plays with (a DQN's online Q-network, else its policy)."""
    q_net = getattr(model, "q_net", None)
    return policy_state(q_net if q_net is not None else model.policy)


def head_of(model) -> str:
    """The head of a learner's network: 'q_values' for the masked DQN, else 'actor_critic'."""
    return "q_values" if getattr(model, "q_net", None) is not None else "actor_critic"


def load_policy_state(policy, state: dict[str, np.ndarray]) -> None:
    """Load weights produced by `policy_state` into `policy`."""
    torch = _torch()
    policy.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})


def action_probabilities(policy, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    """The policy's action probabilities with illegal actions masked out (float64, sums to 1)."""
    return batch_probabilities(policy, np.asarray(observation)[None], np.asarray(action_mask)[None])[0]


def batch_probabilities(policy, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """`action_probabilities` for a batch (one row per observation), in one forward pass."""
    torch = _torch()
    legal = np.asarray(action_masks).astype(bool)
    if not legal.any(axis=1).all():
        raise ValueError("the action mask is empty: this agent has no decision to make")
    greedy = getattr(policy, "greedy", False)  # a Q-network, played greedily
    layers = _plain_layers(policy, greedy)
    with torch.no_grad():
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32).reshape(len(legal), -1))
        scores = _layer_scores(torch, layers, obs) if layers else _module_scores(policy, obs, greedy)
    if greedy:
        q_values = np.where(legal, scores.astype(np.float64), -np.inf)
        best = q_values == q_values.max(axis=1, keepdims=True)
        return best / best.sum(axis=1, keepdims=True)
    logits = np.where(legal, scores.astype(np.float64), -np.inf)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    return probs / probs.sum(axis=1, keepdims=True)


def _module_scores(policy, obs, greedy: bool) -> np.ndarray:
    """The policy's logits (a `greedy` Q-network's Q-values) for a batch, through its own modules."""
    if greedy:
        return policy.q_values(obs).numpy()
    features = policy.extract_features(obs, policy.pi_features_extractor)
    return policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()


def _layer_scores(torch, layers: list[tuple[Any, Any, str | None]], obs) -> np.ndarray:
    """`_module_scores` from the layers `_plain_layers` read: the same operations on the same
    tensors (so the same numbers), without the modules' call machinery."""
    linear, x = torch.nn.functional.linear, obs
    for weight, bias, activation in layers:
        x = linear(x, weight, bias)
        if activation == "tanh":
            x = torch.tanh(x)
        elif activation == "relu":
            x = torch.relu(x)
    return x.numpy()


#: `_plain_layers` of each policy seen, read once (False: not a plain MLP). The entries hold the
#: policy's own parameter tensors, which loading weights overwrites in place, so they stay current.
_LAYERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plain_layers(policy, greedy: bool) -> list[tuple[Any, Any, str | None]] | None:
    """The network an opponent plays as (weight, bias, activation) per linear layer, or None if it
    is anything but a plain MLP on the flat observation (then its modules run as they are).

    A forward pass through the modules costs about twice the arithmetic for the small batches of
    self-play opponents (hooks and dispatch of every module), so the layers are run directly.
    """
    try:
        layers = _LAYERS.get(policy)
    except TypeError:  # not weak-referenceable: never cached
        return _read_layers(policy, greedy) or None
    if layers is None:
        layers = _LAYERS[policy] = _read_layers(policy, greedy)
    return layers or None


def _read_layers(policy, greedy: bool) -> list[tuple[Any, Any, str | None]] | bool:
    torch = _torch()
    nn = torch.nn
    if greedy:
        stack = list(getattr(policy, "q_net", []))
    else:
        from stable_baselines3.common.torch_layers import FlattenExtractor

        extractor = getattr(policy, "pi_features_extractor", None)
        mlp = getattr(getattr(policy, "mlp_extractor", None), "policy_net", None)
        head = getattr(policy, "action_net", None)
        box = type(getattr(policy, "observation_space", None)).__name__ == "Box"  # read as it is
        if not box or type(extractor) is not FlattenExtractor or not isinstance(mlp, nn.Sequential):
            return False
        stack = [*mlp, head]
    layers: list[tuple[Any, Any, str | None]] = []
    activations = {nn.Tanh: "tanh", nn.ReLU: "relu"}
    for module in stack:
        if type(module) is nn.Linear:
            layers.append((module.weight, module.bias, None))
        elif type(module) in activations and layers and layers[-1][2] is None:
            weight, bias, _ = layers[-1]
            layers[-1] = (weight, bias, activations[type(module)])
        else:
            return False
    if not layers or layers[-1][2] is not None:  # the scores come out of a linear layer
        return False
    return layers
