"""`trainer: dqn`: stable-baselines3's DQN, taught the action mask.

SB3's DQN knows nothing of illegal actions. Three small pieces make it a masked learner without
copying its training loop:

- `MaskedObservations` hands the learner `{"observation", "action_mask"}` dicts, so the mask of
  every state (and of every next state) is stored in the replay buffer with it.
- `MaskedQNetwork` computes Q-values from the observation alone and sets those of illegal actions
  to `ILLEGAL_Q`; SB3's greedy action (its `argmax`) and its TD target (the `max` over the next
  state's actions, from the target network, which is the same class) then never see an illegal
  action. A state with no legal action (the learner's game is over; SB3 keeps such a state as the
  next state of a game cut off by its cap) is worth 0.
- `MaskedDQN` explores epsilon-greedily among the legal actions only (per environment), from its
  own generator.

The replay buffer is not saved with a checkpoint (full, it would take up to 1.7 GB for Murder Most
Fowl's observations). A resumed run instead refills it: for `learning_starts` decisions it plays its
epsilon-greedy policy and stores what it sees, without an update (`MaskedDQN.refill_until`), so no
update samples a buffer of a few hundred transitions.

For play, a checkpoint's weights go into `QValuePolicy` (the same layers, nothing of SB3's), whose
action is the argmax of the masked Q-values (`training.policy.batch_probabilities`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, create_mlp
from stable_baselines3.common.vec_env import VecEnvWrapper
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork

#: The Q-value an illegal action gets: far below any return, yet finite (so 0 * it is 0, not NaN).
ILLEGAL_Q = -1e9


def masked_q(q_values: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """Q-values with illegal actions at ILLEGAL_Q; a row with no legal action is all 0."""
    legal = action_mask.bool()
    masked = torch.where(legal, q_values, torch.full_like(q_values, ILLEGAL_Q))
    return torch.where(legal.any(dim=1, keepdim=True), masked, torch.zeros_like(q_values))


class ObservationOnly(BaseFeaturesExtractor):
    """The features of a masked observation: its `observation` part (the mask is not an input)."""

    def __init__(self, observation_space: spaces.Dict) -> None:
        super().__init__(observation_space, int(observation_space["observation"].shape[0]))

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        """The observation vector."""
        return observations["observation"].float()


class MaskedQNetwork(QNetwork):
    """SB3's Q-network with illegal actions' values pushed to ILLEGAL_Q (greedy action and target)."""

    def forward(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Masked Q-values of a batch of `{"observation", "action_mask"}` observations."""
        return masked_q(super().forward(obs), obs["action_mask"])


class MaskedDQNPolicy(DQNPolicy):
    """DQNPolicy whose online and target networks are `MaskedQNetwork`s on the observation part."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", ObservationOnly)
        super().__init__(*args, **kwargs)

    def make_q_net(self) -> MaskedQNetwork:
        """A fresh MaskedQNetwork (SB3 builds the online and the target network with this)."""
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return MaskedQNetwork(**net_args).to(self.device)


class MaskedDQN(DQN):
    """DQN that explores among legal actions only; the mask comes in the observation dict."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.explore_rng = np.random.default_rng(self.seed)
        #: No update before this many decisions: a resumed run refills its empty replay buffer first.
        self.refill_until = 0

    def set_random_seed(self, seed: int | None = None) -> None:
        """Seed SB3's generators and the exploration generator."""
        super().set_random_seed(seed)
        self.explore_rng = np.random.default_rng(seed)

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = False):
        """The greedy legal action; unless deterministic, each row is a uniformly random legal
        action with probability `exploration_rate`."""
        actions, state = self.policy.predict(observation, state, episode_start, deterministic=True)
        if not deterministic and self.exploration_rate > 0:
            shape = np.shape(actions)
            actions = np.array(actions).reshape(-1)
            masks = np.asarray(observation["action_mask"]).reshape(len(actions), -1)
            for i in np.flatnonzero(self.explore_rng.random(len(actions)) < self.exploration_rate):
                actions[i] = random_legal(masks[i], self.explore_rng)
            actions = actions.reshape(shape)
        return actions, state

    def _sample_action(self, learning_starts: int, action_noise=None, n_envs: int = 1):
        if self.num_timesteps < learning_starts:
            # Warm-up: uniformly random legal actions (SB3 would sample the whole action space).
            masks = np.asarray(self._last_obs["action_mask"])
            actions = np.array([random_legal(mask, self.explore_rng) for mask in masks])
        else:
            actions, _ = self.predict(self._last_obs, deterministic=False)
        return actions, actions

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """SB3's update, skipped while a resumed run refills its replay buffer."""
        if self.num_timesteps < self.refill_until:
            return
        super().train(gradient_steps, batch_size)

    def _excluded_save_params(self) -> list[str]:
        # The generator is reseeded on load (set_random_seed), not pickled into the zip; the refill
        # mark belongs to one session.
        return [*super()._excluded_save_params(), "explore_rng", "refill_until"]


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of one mask."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))]) if len(legal) else 0


class MaskedObservations(VecEnvWrapper):
    """A SelfPlayEnv VecEnv whose observations are `{"observation", "action_mask"}` dicts."""

    def __init__(self, venv) -> None:
        n = int(venv.action_space.n)
        space = spaces.Dict(
            {"observation": venv.observation_space, "action_mask": spaces.Box(0, 1, (n,), np.int8)}
        )
        super().__init__(venv, observation_space=space)
        self._no_actions = np.zeros(n, dtype=np.int8)

    def reset(self):
        """Reset every environment; masked observations."""
        return self._with_masks(self.venv.reset())

    def step_wait(self):
        """Step every environment; masked observations (a game's last one has no legal action)."""
        observations, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = {
                    "observation": info["terminal_observation"],
                    "action_mask": self._no_actions,
                }
        return self._with_masks(observations), rewards, dones, infos

    def _with_masks(self, observations: np.ndarray) -> dict[str, np.ndarray]:
        masks = np.stack(self.venv.env_method("action_masks")).astype(np.int8)
        return {"observation": observations, "action_mask": masks}


class QValuePolicy(torch.nn.Module):
    """The layers of a MaskedQNetwork, for play: the same weights' names, no SB3 machinery."""

    #: `batch_probabilities` plays this network greedily (argmax of the masked Q-values).
    greedy = True

    def __init__(
        self, observation_size: int, action_count: int, net_arch: list[int], activation: str
    ) -> None:
        super().__init__()
        activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
        if activation not in activations:
            raise ValueError(f"activation must be one of {list(activations)}; got {activation!r}")
        self.q_net = torch.nn.Sequential(
            *create_mlp(observation_size, action_count, list(net_arch), activations[activation])
        )

    def q_values(self, observations: torch.Tensor) -> torch.Tensor:
        """Unmasked Q-values of a batch of observations."""
        return self.q_net(observations)

    def set_training_mode(self, mode: bool) -> None:
        """Train or eval mode (as SB3 policies have it)."""
        self.train(mode)
