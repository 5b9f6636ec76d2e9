"""A warm start for `trainer: jax`: behaviour cloning of the rule-based baseline (`jax.imitate`).

Before its first PPO update a fresh run records `jax.imitate` decisions of the game's baseline in
every seat (reference env, games seeded from the run's seed) and fits both networks to them for
`jax.imitate_epochs` passes: the policy by the masked cross-entropy of the baseline's action, the
value by each decision's discounted final reward for the player who made it. PPO then starts from
that policy with a fresh optimizer. These decisions are not the learner's and do not count in its
budget (`total_timesteps`); `logs/imitation.json` records them and what the fit reached.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from fowlplay import envs

#: Decisions per gradient step, and the share kept out of the fit to measure it.
MINIBATCH = 256
HELD_OUT = 0.1


def baseline_decisions(config, decisions: int) -> dict[str, np.ndarray]:
    """`decisions` decisions (whole games, the last one cut) of the baseline in every seat: the
    observation, mask and action of each, its value target (the deciding player's final reward,
    discounted by the learner's gamma once per later decision of that player), and its game and seat."""
    env = envs.make(config.game, **config.training_options())
    agent = envs.env_module(config.game).BaselineAgent(env.unwrapped.options, seed=config.seed)
    seeds = np.random.default_rng([config.seed, 0x1417])  # the run's own stream, apart from the learner's
    gamma = config.gamma()
    obs, masks, actions, values, games, players = [], [], [], [], [], []
    game = 0
    while len(actions) < decisions:
        env.reset(seed=int(seeds.integers(2**63)))
        agent.reset(seed=int(seeds.integers(2**63)))
        mine: dict[str, list[int]] = {name: [] for name in env.possible_agents}
        returns = dict.fromkeys(env.possible_agents, 0.0)
        for name in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            returns[name] += float(reward)
            if terminated or truncated:
                env.step(None)
                continue
            action = agent.act(observation["observation"], observation["action_mask"])
            mine[name].append(len(actions))
            obs.append(np.asarray(observation["observation"], np.float32))
            masks.append(np.asarray(observation["action_mask"], bool))
            actions.append(action)
            values.append(0.0)
            games.append(game)
            players.append(env.possible_agents.index(name))
            env.step(action)
        for name, rows in mine.items():
            for later, row in enumerate(reversed(rows)):
                values[row] = returns[name] * gamma**later
        game += 1
    n = decisions
    return {
        "obs": np.stack(obs[:n]),
        "mask": np.stack(masks[:n]),
        "action": np.asarray(actions[:n], np.int32),
        "value": np.asarray(values[:n], np.float32),
        "game": np.asarray(games[:n], np.int32),
        "player": np.asarray(players[:n], np.int32),
    }


def imitate(params: dict, data: dict[str, np.ndarray], s, learning_rate: float, epochs: int, key):
    """`params` fitted to `data` for `epochs` passes; (params, report). `s` is the run's
    `ppo.Settings` (network, value weight, gradient clipping)."""
    import jax
    import jax.numpy as jnp
    import optax
    from fowlplay.training.jitted import ppo as J  # noqa: N812 - the module read as one short name

    n = len(data["action"])
    split_key, key = jax.random.split(key)
    order = np.asarray(jax.random.permutation(split_key, n))
    held = max(1, int(n * HELD_OUT))
    fitted = ("obs", "mask", "action", "value")  # (a row's game and seat are for reading, not fitting)
    test = {k: jnp.asarray(data[k][order[:held]]) for k in fitted}
    train = {k: jnp.asarray(data[k][order[held:]]) for k in fitted}
    size = min(MINIBATCH, n - held)
    steps = (n - held) // size
    optimizer = J.make_optimizer(learning_rate, s.max_grad_norm)

    def losses(p, batch):
        logits, value = J.forward(p, batch["obs"], batch["mask"], s.depth, s.activation, s.embedding)
        log_probs = jax.nn.log_softmax(logits)
        cross_entropy = -jnp.take_along_axis(log_probs, batch["action"][:, None], axis=1).mean()
        value_loss = ((value - batch["value"]) ** 2).mean()
        agreement = (logits.argmax(-1) == batch["action"]).mean()
        return cross_entropy + s.vf_coef * value_loss, (cross_entropy, value_loss, agreement)

    grad = jax.value_and_grad(losses, has_aux=True)

    @jax.jit
    def epoch(p, opt_state, key):
        perm = jax.random.permutation(key, n - held)[: steps * size].reshape(steps, size)

        def step(carry, rows):
            p, opt_state = carry
            batch = jax.tree_util.tree_map(lambda x: x[rows], train)
            _, grads = grad(p, batch)
            updates, opt_state = optimizer.update(grads, opt_state, p)
            return (optax.apply_updates(p, updates), opt_state), None

        (p, opt_state), _ = jax.lax.scan(step, (p, opt_state), perm)
        return p, opt_state

    measure = jax.jit(lambda p: losses(p, test)[1])

    def said(p) -> dict:
        cross_entropy, value_loss, agreement = (float(x) for x in measure(p))
        return {"cross_entropy": cross_entropy, "value_loss": value_loss, "agreement": agreement}

    began = time.monotonic()
    before = said(params)
    opt_state = optimizer.init(params)
    for _ in range(epochs):
        key, epoch_key = jax.random.split(key)
        params, opt_state = epoch(params, opt_state, epoch_key)
    report = {
        "decisions": n,
        "held_out": held,
        "epochs": epochs,
        "before": before,
        "after": said(params),
        "fit_seconds": round(time.monotonic() - began, 1),
    }
    return params, report


def warm_start(config, params: dict, s, learning_rate: float, key, run_dir: Path, verbose: bool = True):
    """The run's initial params fitted to `config.jax.imitate` baseline decisions (unchanged when it
    is 0); writes `logs/imitation.json`."""
    jx = config.jax
    if not jx.imitate:
        return params
    began = time.monotonic()
    data = baseline_decisions(config, jx.imitate)
    recorded = time.monotonic() - began
    params, report = imitate(params, data, s, learning_rate, jx.imitate_epochs, key)
    report["record_seconds"] = round(recorded, 1)
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (run_dir / "logs" / "imitation.json").write_text(json.dumps(report, indent=2) + "\n")
    if verbose:
        b, a = report["before"], report["after"]
        print(
            f"fowlplay-train (jax): imitated {report['decisions']:,} baseline decisions "
            f"({jx.imitate_epochs} epochs, {recorded + report['fit_seconds']:.0f} s): agreement with the "
            f"baseline on {report['held_out']:,} held-out decisions {b['agreement']:.1%} -> {a['agreement']:.1%}, "
            f"cross-entropy {b['cross_entropy']:.3f} -> {a['cross_entropy']:.3f}"
        )
    return params
