"""The RLModules of an RLlib run: the masked learner (and its frozen copies), random and baseline seats.

`MaskedMLPModule` is the network of `fowlplay.training.policy.build_policy` (SB3's
MaskableActorCriticPolicy: separate policy and value MLPs, then `action_net` and `value_net`) with
the same submodule names, so its `state_dict` is our checkpoint's weights file as it is, and
`policy.py` rebuilds it unchanged. The action mask of the observation is applied to the logits:
an illegal action gets the smallest float, so it is never sampled and never rewarded by the loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from fowlplay import envs
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

#: What a masked-out logit becomes: finite (a -inf would give NaN in the entropy), never sampled.
MASKED_LOGIT = torch.finfo(torch.float32).min
_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(inputs: int, net_arch: list[int], activation: str) -> nn.Sequential:
    """Linear + activation per hidden size: SB3's `MlpExtractor` branch, layer for layer."""
    layers: list[nn.Module] = []
    for size in net_arch:
        layers += [nn.Linear(inputs, size), _ACTIVATIONS[activation]()]
        inputs = size
    return nn.Sequential(*layers)


def masked_logits(logits: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """`logits` with every action the mask forbids set to MASKED_LOGIT."""
    return torch.where(action_mask > 0, logits, torch.full_like(logits, MASKED_LOGIT))


class MaskedMLPModule(TorchRLModule, ValueFunctionAPI):
    """PPO actor-critic over `{"observation", "action_mask"}` dicts, with the mask on the logits.

    `model_config`: `net_arch` (hidden sizes) and `activation` ('tanh' or 'relu').
    """

    def setup(self) -> None:
        """Build the layers (SB3's names) with SB3's orthogonal initialisation."""
        net_arch = list(self.model_config["net_arch"])
        activation = self.model_config["activation"]
        inputs = int(self.observation_space["observation"].shape[0])
        self.mlp_extractor = nn.Module()
        self.mlp_extractor.policy_net = _mlp(inputs, net_arch, activation)
        self.mlp_extractor.value_net = _mlp(inputs, net_arch, activation)
        self.action_net = nn.Linear(net_arch[-1], int(self.action_space.n))
        self.value_net = nn.Linear(net_arch[-1], 1)
        # SB3's gains: sqrt(2) for hidden layers, 0.01 for the action head (near-uniform start), 1 for the value.
        for module, gain in (
            (self.mlp_extractor, np.sqrt(2)),
            (self.action_net, 0.01),
            (self.value_net, 1.0),
        ):
            for layer in module.modules():
                if isinstance(layer, nn.Linear):
                    nn.init.orthogonal_(layer.weight, gain=gain)
                    layer.bias.data.fill_(0.0)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.action_net(self.mlp_extractor.policy_net(obs["observation"].float()))
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """The value estimate of each observation (PPO's critic)."""
        hidden = self.mlp_extractor.value_net(batch[Columns.OBS]["observation"].float())
        return self.value_net(hidden).squeeze(-1)


class _FixedModule(TorchRLModule):
    """A seat played by a rule, never trained. It holds one unused parameter because RLlib's learner
    builds an optimizer for every module, and torch refuses an optimizer with no parameters."""

    def setup(self) -> None:
        """The unused parameter."""
        self._unused = nn.Parameter(torch.zeros(1), requires_grad=False)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} plays by a rule and is never trained")


class RandomModule(_FixedModule):
    """Uniform over the legal actions: all legal logits equal."""

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = batch[Columns.OBS]["action_mask"]
        return {Columns.ACTION_DIST_INPUTS: masked_logits(torch.zeros(mask.shape), mask)}


class BaselineModule(_FixedModule):
    """The game's rule-based `BaselineAgent` (model_config: `game`, `env_options`); its choice is the
    only action left unmasked, so sampling returns it."""

    def setup(self) -> None:
        """The game's baseline agent for the run's rule options."""
        super().setup()
        aec = envs.make(self.model_config["game"], **self.model_config["env_options"])
        self._agent = envs.env_module(self.model_config["game"]).BaselineAgent(aec.unwrapped.options)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        observations = np.asarray(obs["observation"], dtype=np.float32)
        masks = np.asarray(obs["action_mask"])
        chosen = np.zeros(masks.shape, dtype=np.int8)
        for row, (observation, mask) in enumerate(zip(observations, masks)):
            chosen[row, self._agent.act(observation, mask)] = 1
        chosen = torch.as_tensor(chosen)
        return {Columns.ACTION_DIST_INPUTS: masked_logits(torch.zeros(chosen.shape), chosen)}


def policy_weights(module: MaskedMLPModule) -> dict[str, np.ndarray]:
    """The module's weights as numpy arrays, named as `policy.build_policy`'s network names them."""
    return {name: tensor.detach().cpu().numpy().copy() for name, tensor in module.state_dict().items()}
