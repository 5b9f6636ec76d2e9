"""`SelfPlayVecEnv`: many `SelfPlayEnv`s in the learner's process, their opponents' network moves
batched.

With one environment at a time (SB3's `DummyVecEnv`) every move of a network opponent is its own
forward pass on one observation, and each environment holds its own copy of every network. Here the
environments share one `OpponentPool`, so all of them play the same `latest` network and the same
snapshots, and each environment's `reset_moves`/`step_moves` hands its opponents' decisions out:
the decisions of all environments that wait on the same network are answered by one forward pass
over the stacked observations, and every opponent then draws its action from its own generator.
Random and rule-based opponents act at once. An environment's episodes are the ones a
`SelfPlayEnv` of its own would play (same seeds, same opponent draws, same actions up to the
rounding of a batched matrix product), and the vectorised API follows `DummyVecEnv`: environment
`i` is seeded with `seed + i`, a finished episode resets at once and leaves its last observation in
`info["terminal_observation"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from fowlplay.training.agent import PolicyAgent
from fowlplay.training.policy import batch_probabilities
from fowlplay.training.sb3.selfplay import Moves, SelfPlayEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

#: Env methods that change the shared opponent pool: called once, they reach every environment.
POOL_METHODS = ("set_latest", "add_snapshot", "set_opponent_weights")


class SelfPlayVecEnv(VecEnv):
    """`n_envs` SelfPlayEnvs (built from the same keyword arguments) sharing one opponent pool."""

    def __init__(self, n_envs: int, **env_kwargs: Any) -> None:
        if n_envs < 1:
            raise ValueError(f"n_envs must be >= 1; got {n_envs!r}")
        first = SelfPlayEnv(**env_kwargs)
        self.pool = first.pool
        self.envs = [first] + [SelfPlayEnv(**env_kwargs, pool=self.pool) for _ in range(n_envs - 1)]
        super().__init__(n_envs, first.observation_space, first.action_space)
        self.metadata = first.metadata
        self._actions: np.ndarray | None = None

    # ----- the VecEnv API ------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        """Reset every environment (seeded by `seed()` if it was called) and return the observations."""
        moves = [
            env.reset_moves(seed=self._seeds[i], options=self._options[i] or None)
            for i, env in enumerate(self.envs)
        ]
        results = play_batched(moves)
        self.reset_infos = [info for _, info in results]
        self._reset_seeds()
        self._reset_options()
        return np.stack([obs for obs, _ in results])

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the learner's actions for `step_wait`."""
        self._actions = actions

    def step_wait(self):
        """Step every environment (resetting the finished ones) with the opponents' moves batched."""
        if self._actions is None:
            raise RuntimeError("step_wait() needs step_async(actions) first")
        actions, self._actions = self._actions, None
        results = play_batched([self._step_and_reset(i, action) for i, action in enumerate(actions)])
        observations = np.stack([obs for obs, *_ in results])
        rewards = np.array([reward for _, reward, _, _ in results], dtype=np.float32)
        dones = np.array([done for _, _, done, _ in results], dtype=bool)
        return observations, rewards, dones, [info for *_, info in results]

    def _step_and_reset(self, i: int, action: Any) -> Moves:
        env = self.envs[i]
        obs, reward, terminated, truncated, info = yield from env.step_moves(action)
        info["TimeLimit.truncated"] = truncated and not terminated
        done = terminated or truncated
        if done:
            info["terminal_observation"] = obs
            obs, self.reset_infos[i] = yield from env.reset_moves()
        return obs, reward, done, info

    def close(self) -> None:
        """Close every environment."""
        for env in self.envs:
            env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each chosen environment."""
        return [getattr(env, attr_name) for env in self._chosen(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of each chosen environment."""
        for env in self._chosen(indices):
            setattr(env, attr_name, value)

    def env_method(
        self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs
    ) -> list:
        """Call a method of each chosen environment; a pool method (`POOL_METHODS`) runs once, for all."""
        chosen = self._chosen(indices)
        if method_name in POOL_METHODS:
            # The pool is shared: loading the same weights once per environment would only repeat it.
            getattr(self.envs[0], method_name)(*method_args, **method_kwargs)
            return [None] * len(chosen)
        return [getattr(env, method_name)(*method_args, **method_kwargs) for env in chosen]

    def env_is_wrapped(self, wrapper_class, indices: VecEnvIndices = None) -> list[bool]:
        """Whether each chosen environment is wrapped in `wrapper_class` (they never are)."""
        return [False] * len(self._chosen(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No images: the environments render text (render_mode='ansi')."""
        return [None] * self.num_envs

    def _chosen(self, indices: VecEnvIndices) -> list[SelfPlayEnv]:
        return [self.envs[i] for i in self._get_indices(indices)]


def play_batched(moves: list[Moves]) -> list[Any]:
    """Run every `reset_moves`/`step_moves` generator to its end; each one's result, in order.

    Each round answers every pending decision of a network opponent with one forward pass per
    network; an opponent that is not a network acts as soon as it is asked.
    """
    results: list[Any] = [None] * len(moves)
    waiting: list[tuple[int, PolicyAgent, np.ndarray, np.ndarray]] = []

    def advance(i: int, action: int | None) -> None:
        # Run generator i until it waits on a network opponent (queued) or finishes.
        try:
            opponent, observation, mask = moves[i].send(action)
            while not isinstance(opponent, PolicyAgent):
                opponent, observation, mask = moves[i].send(opponent.act(observation, mask))
            waiting.append((i, opponent, observation, mask))
        except StopIteration as done:
            results[i] = done.value

    for i in range(len(moves)):
        advance(i, None)
    while waiting:
        pending, waiting = waiting, []
        by_network: dict[int, list[tuple[int, PolicyAgent, np.ndarray, np.ndarray]]] = {}
        for decision in pending:
            by_network.setdefault(id(decision[1].policy), []).append(decision)
        for group in by_network.values():
            probs = batch_probabilities(
                group[0][1].policy, np.stack([d[2] for d in group]), np.stack([d[3] for d in group])
            )
            for (i, opponent, _, _), p in zip(group, probs):
                advance(i, opponent.choose(p))
    return results
