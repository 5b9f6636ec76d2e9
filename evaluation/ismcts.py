"""Information-set Monte Carlo tree search: an agent that plans with the game's own rules.

Single-observer ISMCTS (Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE Transactions on Computational Intelligence and AI in Games 4(2), 2012). Before each of its
decisions the agent runs N simulations, each of which

1. **determinizes**: clones the environment and re-deals everything the deciding player cannot
   see (`CardGameEnv.clone()`, then `resample_hidden(agent, seed)` with a seed from the agent's
   own generator), so every simulated state is one the deciding player cannot tell from the real
   one;
2. **selects** down one tree shared by all determinizations, whose edges are the (player, action)
   pairs taken. At a node only the actions legal in this determinization compete; each of them
   gains one *availability*, and the choice maximises UCB1 with availability counts,
   `mean + c * sqrt(ln(availability) / visits)`, where `mean` is the average reward, scaled to
   [0, 1], of the player who took that action;
3. **expands** the first node that has an untried legal action: the rollout policy's own choice
   when it is untried, else a random untried one;
4. **rolls out** to the end of the game with the game's rule-based `BaselineAgent` in every seat
   (or, with `rollout="random"`, uniformly random legal actions);
5. **backs up** the environment's zero-sum terminal rewards: every node on the path adds the
   reward of the player who acted there, which is what makes the search multi-player.

It plays the root's most visited action (ties: the higher mean reward, then the lower action id);
a decision with a single legal action is played without searching. The budget is a number of
simulations, never a time, and all its randomness comes from its own generator, reseeded by
`reset(seed)`, so a match seed fixes its play on any number of worker processes.

What it reads. The agent is built on the environment it plays in (`evaluation.agents.build_agent`
already receives it), because the `Agent` interface hands it only an observation vector. From the
real environment it reads which agent is deciding, that agent's own action mask, and `clone()`;
every state it simulates comes out of `resample_hidden`, which keeps only what the deciding player
has seen. Its decision is therefore a function of the information set and its seed alone when the
game's `resample_hidden` deals the same cards from every state of one information set for one
seed (it shuffles the unseen cards in a canonical order); see docs/evaluation.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import envs
from envs.core.agents import Agent

ROLLOUTS = ("baseline", "random")
SPEC_PREFIX = "ismcts:"
SPEC_FORMS = "ismcts:N (baseline rollouts) or ismcts:N:random (random rollouts), N >= 1 simulations"
#: UCB1 exploration constant on rewards scaled to [0, 1] (the value Cowling et al. use).
DEFAULT_EXPLORATION = 0.7
_SEED_HIGH = 2**63


@dataclass(frozen=True)
class ISMCTSSettings:
    """How an ISMCTS agent searches: simulations per decision, rollout policy, exploration constant."""

    simulations: int
    rollout: str = "baseline"
    exploration: float = DEFAULT_EXPLORATION

    def __post_init__(self) -> None:
        if not isinstance(self.simulations, int) or self.simulations < 1:
            raise ValueError(f"ISMCTS needs at least 1 simulation per decision; got {self.simulations!r}")
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"ISMCTS rollout must be one of {ROLLOUTS}; got {self.rollout!r}")
        if not self.exploration >= 0:
            raise ValueError(f"ISMCTS exploration must be >= 0; got {self.exploration!r}")


def parse_settings(kind: str) -> ISMCTSSettings:
    """`ismcts:N` or `ismcts:N:random` (also `ismcts:N:baseline`) as settings; ValueError otherwise."""
    parts = kind.split(":")
    if parts[0] != SPEC_PREFIX[:-1] or len(parts) not in (2, 3):
        raise ValueError(f"{kind!r} is not an ISMCTS spec; accepted: {SPEC_FORMS}")
    count = parts[1]
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"{kind!r}: the simulation count {count!r} is not a positive integer; {SPEC_FORMS}")
    rollout = parts[2] if len(parts) == 3 else "baseline"
    if rollout not in ROLLOUTS:
        raise ValueError(f"{kind!r}: unknown rollout {rollout!r}, allowed: {', '.join(ROLLOUTS)}")
    return ISMCTSSettings(int(count), rollout)


class _Node:
    """Statistics of one (player, action) edge of the tree and the node it leads to."""

    __slots__ = ("agent", "available", "children", "reward", "visits")

    def __init__(self, agent: str | None) -> None:
        self.agent = agent  # who took the action leading here; None at the root
        self.visits = 0
        self.reward = 0.0  # sum of that agent's terminal rewards
        self.available = 1  # simulations in which the action was legal when its parent was reached
        self.children: dict[tuple[str, int], _Node] = {}

    def ucb(self, exploration: float) -> float:
        """UCB1 with availability counts, on the acting agent's mean reward scaled to [0, 1]."""
        mean = (self.reward / self.visits + 1.0) / 2.0
        return mean + exploration * math.sqrt(math.log(self.available) / self.visits)


class ISMCTSAgent(Agent):
    """Single-observer information-set MCTS over determinizations of the environment it plays in."""

    name = "ismcts"

    def __init__(self, env, settings: ISMCTSSettings, seed: int | None = None) -> None:
        self.env = env.unwrapped
        self.settings = settings
        self._policies: dict[str, Agent] = {}
        if settings.rollout == "baseline":
            module = envs.env_module(self.env.metadata["name"])
            if not hasattr(module, "BaselineAgent"):
                raise ValueError(f"{self.env.metadata['name']} has no baseline agent for ISMCTS rollouts")
            self._policies = {
                a: module.BaselineAgent(self.env.options, seed=None) for a in self.env.possible_agents
            }
        #: Root statistics of the last search, {action: (visits, mean reward)}, for reports and tests.
        self.last_search: dict[int, tuple[int, float]] = {}
        #: Simulations whose determinization disagreed with the real legal actions at the root (an
        #: inexact `resample_hidden`); such actions are never searched.
        self.root_mismatches = 0
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the search and the rollout agents; None keeps the current generator going."""
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
            for policy in self._policies.values():
                policy.reset(int(self.rng.integers(_SEED_HIGH)))

    # ----- one decision -------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The most visited root action after `settings.simulations` simulations."""
        env = self.env
        if env.game is None or env.game.over:
            raise ValueError("the ISMCTS agent was asked to act, but its environment has no game in progress")
        me = env.agent_selection
        if not np.array_equal(np.asarray(action_mask) != 0, env.observe(me)["action_mask"] != 0):
            raise ValueError(
                f"the action mask given to the ISMCTS agent is not {me}'s in the environment it was "
                "built on; build the agent on the environment it plays in"
            )
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("the action mask is empty: this agent has no decision to make")
        self.last_search = {}
        if legal.size == 1:
            return int(legal[0])
        root = _Node(None)
        allowed = np.asarray(action_mask) != 0
        for _ in range(self.settings.simulations):
            self._simulate(root, me, allowed)
        stats = {a: root.children.get((me, int(a))) for a in legal}
        self.last_search = {
            a: (node.visits, node.reward / node.visits) for a, node in stats.items() if node and node.visits
        }
        if not self.last_search:  # every determinization disagreed with the real legal actions
            return int(legal[0])
        return min(self.last_search, key=lambda a: (-self.last_search[a][0], -self.last_search[a][1], a))

    def _simulate(self, root: _Node, me: str, allowed: np.ndarray) -> None:
        """One determinization, selection, expansion, rollout and backup."""
        world = self._determinize(me)
        game = world.game
        node, path = root, []
        while not game.over:
            agent = world.agent_selection
            mask = game.legal_mask()
            if node is root and (agent != me or not np.array_equal(mask != 0, allowed)):
                self.root_mismatches += 1
                if agent != me or not np.any(mask * allowed):
                    return  # this determinization is no state of the real decision
                mask = mask * allowed
            untried = []
            for action in np.flatnonzero(mask).tolist():
                child = node.children.get((agent, action))
                if child is None:
                    untried.append(action)
                else:
                    child.available += 1
            if untried:
                action = self._expansion(world, agent, untried)
                child = node.children[(agent, action)] = _Node(agent)
                path.append(child)
                world.step(action)
                break
            action, child = self._select(node, agent, mask)
            path.append(child)
            world.step(action)
            node = child
        self._rollout(world)
        rewards = world.rewards  # the env pays the zero-sum returns on the game's last step
        for child in path:
            child.visits += 1
            child.reward += rewards[child.agent]

    def _determinize(self, me: str):
        """A copy of the real environment with everything `me` cannot see re-dealt."""
        world = self.env.clone()
        world.render_mode = None  # a clone of a 'human' env would print every simulated move
        world.resample_hidden(me, int(self.rng.integers(_SEED_HIGH)))
        return world

    def _select(self, node: _Node, agent: str, mask: np.ndarray) -> tuple[int, _Node]:
        """The legal child with the highest UCB value (the lowest action id among equals)."""
        c = self.settings.exploration
        best, best_value = None, -math.inf
        for action in np.flatnonzero(mask).tolist():
            child = node.children[(agent, action)]
            value = child.ucb(c)
            if value > best_value:
                best, best_value = (action, child), value
        return best

    def _expansion(self, world, agent: str, untried: list[int]) -> int:
        """The rollout policy's choice if it is untried (searching it first), else a random untried action."""
        if self._policies:
            obs = world.observe(agent)
            choice = int(self._policies[agent].act(obs["observation"], obs["action_mask"]))
            if choice in untried:
                return choice
        return untried[int(self.rng.integers(len(untried)))]

    def _rollout(self, world) -> None:
        """Play the determinization to its end with the rollout policy in every seat."""
        game = world.game
        if not self._policies:
            while not game.over:
                legal = np.flatnonzero(game.legal_mask())
                world.step(int(legal[self.rng.integers(legal.size)]))
            return
        while not game.over:
            agent = world.agent_selection
            obs = world.observe(agent)
            world.step(int(self._policies[agent].act(obs["observation"], obs["action_mask"])))


def make_ismcts_agent(kind: str, env, seed: int | None = None) -> ISMCTSAgent:
    """An ISMCTS agent from its spec (`ismcts:N` or `ismcts:N:random`) for the env it plays in."""
    return ISMCTSAgent(env, parse_settings(kind), seed=seed)
