"""Agents as pure JAX functions: a checkpoint's weights as a Pgx-style policy, and the actors the
batched games seat (a policy sampled or played greedily, uniform random, the baseline's twin).

`jax_policy(weights, network)` turns the weights of any fowlplay checkpoint (the `.npz` of
`training.checkpoint`, under SB3's layer names; `network` is its JSON's `policy` entry) into
`policy(observation, legal_action_mask) -> logits`, as Pgx's baseline models are called: a pure,
jit- and vmap-safe function of one observation or a batch, whose masked softmax is exactly the
distribution `training.agent.PolicyAgent` draws from (a masked DQN's logits put all probability on
its legal actions of highest Q-value, shared on a tie, as `training.policy` plays it).
`load_jax_policy(path)` reads a checkpoint's weights (no torch, nothing unpickled; the weights'
SHA-256 checked against the JSON) and returns the policy with its metadata.

An *actor* is `actor(observation, legal_action_mask, key) -> int32 action`: what
`training.jitted.duplicate` seats at its tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay import envs
from fowlplay.envs.core.twin import key_words
from fowlplay.training.jitted.ppo import MASKED_LOGIT, policy_logits

Policy = Callable[[jax.Array, jax.Array], jax.Array]
Actor = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]


def jax_policy(weights: Mapping[str, Any], network: Mapping[str, Any]) -> Policy:
    """A checkpoint's weights as a pure JAX `policy(observation, legal_action_mask) -> logits`
    (float32, illegal actions at -1e8: probability exactly 0 after a softmax).

    `network` is the checkpoint JSON's `policy` entry: `net_arch` (hidden widths), `activation`
    ('tanh' or 'relu') and `head` ('actor_critic', the default, or 'q_values' for the masked DQN).
    """
    net_arch, activation = list(network["net_arch"]), network["activation"]
    head = network.get("head", "actor_critic")
    if activation not in ("tanh", "relu"):
        raise ValueError(f"activation must be 'tanh' or 'relu'; got {activation!r}")
    params = {name: jnp.asarray(np.asarray(value), jnp.float32) for name, value in weights.items()}
    depth = len(net_arch)
    if head == "actor_critic":

        def policy(observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
            return policy_logits(params, observation, legal_action_mask, depth, activation)

        return policy
    if head != "q_values":
        raise ValueError(f"head must be 'actor_critic' or 'q_values'; got {head!r}")
    act = jax.nn.relu if activation == "relu" else jnp.tanh

    def greedy(observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
        x = jnp.asarray(observation, jnp.float32)
        for i in range(depth + 1):
            x = x @ params[f"q_net.{2 * i}.weight"].T + params[f"q_net.{2 * i}.bias"]
            x = act(x) if i < depth else x
        q = jnp.where(legal_action_mask, x, -jnp.inf)
        best = legal_action_mask & (q == q.max(axis=-1, keepdims=True))
        return jnp.where(best, 0.0, MASKED_LOGIT).astype(jnp.float32)

    return greedy


def load_jax_policy(path: str | Path, expect_sha256: str | None = None) -> tuple[Policy, dict[str, Any]]:
    """(policy, metadata) of a checkpoint (a `.json`/`.npz` stem or a run directory, whose best
    checkpoint is read): its weights read without torch and refused unless their SHA-256 is the
    one its JSON records (and `expect_sha256`, when given)."""
    from fowlplay.training import checkpoint as ckpt

    metadata = ckpt.read_metadata(path)
    stem = Path(metadata["stem"])
    json_path, weights_path = stem.with_suffix(".json"), stem.with_suffix(".npz")
    if not weights_path.exists():
        raise ckpt.CheckpointError(
            f"checkpoint {stem} has no weights file {weights_path.name}; "
            + ckpt.CONVERT_HINT.format(path=stem)
        )
    network = ckpt._network(metadata, json_path)
    weights = ckpt._read_weights(
        weights_path, ckpt._bounded_shapes(network, metadata, json_path), json_path.name
    )
    digest = ckpt.weights_sha256(weights)
    if digest != network["weights_sha256"] or (expect_sha256 is not None and digest != expect_sha256):
        raise ckpt.CheckpointError(
            f"checkpoint weights {weights_path} do not match {json_path.name} (their sha256 differs): "
            "one of the two was replaced or damaged"
        )
    return jax_policy(weights, network), {
        **metadata,
        "weights_file": str(weights_path),
        "weights_sha256": digest,
    }


# ----- actors: what a batched table seats ---------------------------------------------------------
# Actors draw from their key through the twins' integer hash (`envs.core.twin.key_words`) and one
# uniform per decision (inverse CDF), where `jax.random.categorical` runs a threefry hash per
# action: on a CPU that cost as much as a game's whole step.
def _uniform01(key: jax.Array) -> jax.Array:
    """A float32 uniform in [0, 1) from a key (24 bits of its hash)."""
    (word,) = key_words(key, 1)
    return (word >> 8).astype(jnp.float32) * jnp.float32(2.0**-24)


def _inverse_cdf(weights: jax.Array, key: jax.Array) -> jax.Array:
    """The index drawn with probability proportional to `weights` (>= 0, not all 0)."""
    cumulative = jnp.cumsum(weights)
    target = _uniform01(key) * cumulative[-1]
    return jnp.argmax(cumulative > target).astype(jnp.int32)  # the first index past it: weight > 0


def sampling(policy: Policy) -> Actor:
    """An actor drawing from the policy's masked softmax (`PolicyAgent`'s default play)."""

    def actor(observation: jax.Array, legal_action_mask: jax.Array, key: jax.Array) -> jax.Array:
        probs = jax.nn.softmax(policy(observation, legal_action_mask))
        return _inverse_cdf(jnp.where(legal_action_mask, probs, 0.0), key)

    return actor


def greedy(policy: Policy) -> Actor:
    """An actor playing the policy's most likely legal action (`ckpt-det:`; the first on a tie)."""

    def actor(observation: jax.Array, legal_action_mask: jax.Array, key: jax.Array) -> jax.Array:
        del key
        return jnp.argmax(policy(observation, legal_action_mask), axis=-1).astype(jnp.int32)

    return actor


def uniform(observation: jax.Array, legal_action_mask: jax.Array, key: jax.Array) -> jax.Array:
    """The random agent: a legal action drawn uniformly."""
    del observation
    return _inverse_cdf(legal_action_mask.astype(jnp.float32), key)


def baseline(game: str, **options: Any) -> Actor:
    """The game's rule-based baseline as an actor (its JAX twin, `envs.make_jax_baseline`: the
    reference's decisions, which depend on the observation and mask alone)."""
    decide = envs.make_jax_baseline(game, **options)

    def actor(observation: jax.Array, legal_action_mask: jax.Array, key: jax.Array) -> jax.Array:
        del key
        return decide(observation, legal_action_mask).astype(jnp.int32)

    return actor
