"""Information-set Monte Carlo tree search: an agent that plans with the game's own rules.

Single-observer ISMCTS (Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE Transactions on Computational Intelligence and AI in Games 4(2), 2012). Before each of its
decisions the agent runs N simulations over one tree. Below the root, a node is an information
set of the player to act there: its edges are keyed by (player, that player's observation and
action mask, action), so a card revealed by chance or dealt to the player leads to another node,
while a move the player cannot see (another player's hidden card, Murray's face-down pass between
two others) does not split its nodes. (Keyed by actions alone, as in plain single-observer ISMCTS,
the searching player's later choices would be made blind to the cards chance reveals, and the
line followed below a node would be whatever the first determinization's rollout policy chose;
that version won 2 of the first 8 games of Murder, She Crows against the baseline.) Each
simulation

1. **chooses the root move**: an untried legal move first (the rollout policy's own move before
   the others), then UCB1 (below). The deciding player's legal moves are the same in every
   determinization of its information set, so this choice comes before the deal;
2. **determinizes**: clones the environment and re-deals everything the deciding player cannot
   see (`CardGameEnv.clone()`, then `resample_hidden(agent, seed)`), so every simulated state is
   one the player cannot tell from the real one. The k-th visit of every root move uses the k-th
   deal of this decision (common random numbers: root moves are compared on the same deals);
3. **selects** down the tree: only the actions legal in this determinization compete; each of them
   gains one *availability*, and the choice maximises UCB1 with availability counts,
   `mean + c * sqrt(ln(availability) / visits)`, `mean` being the average reward, scaled to
   [0, 1], of the player who took that action (c = 0.7);
4. **expands** the first node that may try a new legal action: the rollout policy's own choice
   when it is untried, else a random untried one. Below the root, progressive widening: an
   information set reached v times tries a new action only while it has tried at most
   sqrt(v / 4), so a line follows the rollout policy until the search has seen it often;
5. **rolls out** with the game's rule-based `BaselineAgent` in every seat (or, with
   `rollout="random"`, uniformly random legal actions drawn from the deal's seed), stepping the
   game engine of its private copy directly (no AEC bookkeeping; an observation is encoded only
   where a node or the baseline reads one): for `horizon` decisions (10 by default), then on to
   the end of the round (Chicken) or turn in progress, where a *leaf* estimates each seat's win
   reward as tanh(gain x lead) from the scores (`LEAVES`); `horizon=0` rolls out to the end;
6. **backs up** the environment's zero-sum terminal rewards: every node on the path adds the
   reward of the player who acted there, which is what makes the search multi-player.

It plays the root's most visited move (ties: the higher mean reward, then the lower action id),
with one exception under baseline rollouts: the baseline's own move stands unless the most
visited move beat it, deal by deal on at least 5 common deals, by `margin` standard errors of
the mean difference (per game, `DEFAULT_MARGINS`: 2 for Chicken, 1 for the others). One
decision moves a player's chance of winning by a few hundredths while one rollout scores +1 or
-1, so with tens of simulations per move the most visited move is often a slightly worse one,
and many such steps lose to the very policy the search rolls out with. With `validation` K > 0
the search uses N - K simulations, and when its choice differs from the baseline's move the two
play K / 2 fresh deals each, on which alone the margin is tested (the deals that made a move the
most visited flatter it: the winner's curse). A decision with a single legal action is played
without searching. The spec `ismcts:N[:ROLLOUT][:hK][:mX][:vK]` sets these (`parse_settings`).
The budget is a number of simulations, never a time, and all randomness comes from the agent's
own generator, reseeded by `reset(seed)`, so a match seed fixes its play on any number of worker
processes.

What it reads. The agent is built on the environment it plays in (`evaluation.agents.build_agent`
already receives it), because the `Agent` interface hands it only an observation vector. From the
real environment it reads which agent is deciding, that agent's own action mask, and `clone()`;
every state it simulates comes out of `resample_hidden`, which keeps only what the deciding player
has seen. Its decision is therefore a function of the information set and its seed alone, because
every game's `resample_hidden` deals the same cards from every state of one information set for
one seed (it shuffles the unseen cards from sorted order); see docs/evaluation.md.

The omniscient reference. `oracle:N[...]` (same options) is the same search with every hand face
up: its determinizations re-deal only what no player has seen (`resample_hidden(None, seed)`: the
deck's order), never the other players' hidden cards. It cheats on purpose, to measure how much
the hidden cards are worth (the headroom above what a fair search reaches); it is never a rung of
the ladder, and no fair agent should be compared with it as with a player.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.agents import Agent
from fowlplay.envs.core.errors import RedealError
from fowlplay.envs.core.rewards import score_rewards

ROLLOUTS = ("baseline", "random")
SPEC_PREFIX = "ismcts:"
#: The same search with every hand face up (the omniscient reference; never a ladder rung).
ORACLE_PREFIX = "oracle:"
SPEC_FORMS = (
    "ismcts:N[:ROLLOUT][:hK][:mX][:vK]: N >= 1 simulations per decision; ROLLOUT baseline (default) "
    "or random; hK: a rollout plays K >= 0 decisions, then to the end of the round or turn, before "
    "its leaf (h0: to the end of the game; default: the game's DEFAULT_HORIZONS); mX: the "
    "baseline's move stands unless a move beats it by X >= 0 standard errors (default: the game's "
    "DEFAULT_MARGINS); vK: K of the N simulations (0 <= K < N, default 0) test the search's choice "
    "against the baseline's move on fresh deals; e.g. ismcts:200, ismcts:50:random, ismcts:400:h20:m1:v100; "
    "oracle:N[...] takes the same options and sees every hand"
)
#: UCB1 exploration constant on rewards scaled to [0, 1] (the value Cowling et al. use).
DEFAULT_EXPLORATION = 0.7
#: Deals both moves must have seen before the search may overrule the rollout policy's own move
#: (with fewer, a run of equal outcomes has no spread and would pass any margin).
MIN_PAIRED_DEALS = 5
_SEED_HIGH = 2**63


#: Rollout decisions before the leaf, per game, for `ISMCTSSettings(horizon=None)` (the spec's agents).
DEFAULT_HORIZONS = {
    "chicken_v1": 10,
    "murder_she_crows_v1": 10,
    "murder_most_fowl_v0": 10,
    "murray_frog_v0": 10,
}
#: The margin per game for `ISMCTSSettings(margin=None)` (docs/evaluation.md has the measurements).
DEFAULT_MARGINS = {
    "chicken_v1": 2.0,
    "murder_she_crows_v1": 1.0,
    "murder_most_fowl_v0": 1.0,
    "murray_frog_v0": 1.0,
}


# ----- leaves: where a truncated rollout stops, an estimate of the returns -------------------------
def _chicken_lead(game) -> list[float]:
    return score_rewards(game.scores, game.options.target)


def _crows_lead(game) -> list[float]:
    return score_rewards(game.track, game.options.track_length)


def _fowl_lead(game) -> list[float]:
    return [game.potential(p) for p in range(game.num_players)]


def _murray_lead(game) -> list[float]:
    return score_rewards(game.scores(), 20.0)  # the scale of Murray's score-mode returns


#: Per game, the counter of rounds (Chicken) or turns (the others): a truncated rollout stops only
#: where it changes, so that no provisional points of a round or turn in progress are left unscored.
PHASES = {
    "chicken_v1": lambda game: game.round,
    "murder_she_crows_v1": lambda game: game.turns,
    "murder_most_fowl_v0": lambda game: game.turn,
    "murray_frog_v0": lambda game: game.turn,
}

#: Per game: each seat's lead (zero-sum score differences on the scale of the game's score-mode
#: returns; Murder Most Fowl: its public `potential`) and the gain of tanh(gain x lead), the leaf's
#: estimate of a seat's win reward. Each gain is the least-squares fit of tanh(gain x lead) to the
#: final reward over the states where a round or turn begins (`PHASES`) in 150 baseline-vs-baseline
#: games (seeds 0-149; 2 players, Murray 3).
LEAVES = {
    "chicken_v1": (_chicken_lead, 0.3),
    "murder_she_crows_v1": (_crows_lead, 4.0),
    "murder_most_fowl_v0": (_fowl_lead, 0.8),
    "murray_frog_v0": (_murray_lead, 0.2),
}


@dataclass(frozen=True)
class ISMCTSSettings:
    """How an ISMCTS agent searches (see the module docstring for what each setting does)."""

    simulations: int
    rollout: str = "baseline"
    exploration: float = DEFAULT_EXPLORATION
    widening: bool = True
    #: Standard errors by which a move must beat the rollout policy's own move on common deals to
    #: be played instead; None takes the game's `DEFAULT_MARGINS` entry.
    margin: float | None = None
    #: Decisions a rollout plays before a leaf estimates the returns; 0 plays to the end of the
    #: game; None takes the game's `DEFAULT_HORIZONS` entry.
    horizon: int | None = None
    #: Of the simulations, how many (0: none) check the search's choice against the baseline's move
    #: on fresh deals, half each, when the two differ; the margin then applies to those deals only.
    validation: int = 0
    #: True: every hand face up (`oracle:N`): determinizations re-deal only what no player has seen.
    oracle: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.simulations, int) or self.simulations < 1:
            raise ValueError(f"ISMCTS needs at least 1 simulation per decision; got {self.simulations!r}")
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"ISMCTS rollout must be one of {ROLLOUTS}; got {self.rollout!r}")
        if not self.exploration >= 0:
            raise ValueError(f"ISMCTS exploration must be >= 0; got {self.exploration!r}")
        if self.margin is not None and not self.margin >= 0:
            raise ValueError(f"ISMCTS margin must be >= 0; got {self.margin!r}")
        if self.horizon is not None and (not isinstance(self.horizon, int) or self.horizon < 0):
            raise ValueError(
                f"ISMCTS horizon must be None or an int >= 0 (0: to the end); got {self.horizon!r}"
            )
        if not isinstance(self.validation, int) or not 0 <= self.validation < self.simulations:
            raise ValueError(
                f"ISMCTS validation must be an int from 0 to simulations - 1 = {self.simulations - 1}; "
                f"got {self.validation!r}"
            )
        if self.validation and self.rollout != "baseline":
            raise ValueError("ISMCTS validation checks the baseline's move: it needs baseline rollouts")


def parse_settings(kind: str) -> ISMCTSSettings:
    """`ismcts:N[:ROLLOUT][:hK][:mX][:vK]` (or `oracle:N...`) as settings (options in any order);
    ValueError naming what is wrong."""
    parts = kind.split(":")
    if parts[0] not in (SPEC_PREFIX[:-1], ORACLE_PREFIX[:-1]) or len(parts) < 2:
        raise ValueError(f"{kind!r} is not an ISMCTS spec; accepted: {SPEC_FORMS}")
    found: dict[str, object] = {"oracle": True} if parts[0] == ORACLE_PREFIX[:-1] else {}
    count = parts[1]
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"{kind!r}: the simulation count {count!r} is not a positive integer; {SPEC_FORMS}")
    for part in parts[2:]:
        if part in ROLLOUTS:
            key, value = "rollout", part
        elif part[:1] == "h" and part[1:].isdigit():
            key, value = "horizon", int(part[1:])
        elif part[:1] == "m" and _is_margin(part[1:]):
            key, value = "margin", float(part[1:])
        elif part[:1] == "v" and part[1:].isdigit():
            key, value = "validation", int(part[1:])
        else:
            raise ValueError(
                f"{kind!r}: {part!r} is not a rollout ({' or '.join(ROLLOUTS)}), a horizon hK (K >= 0 "
                f"decisions, h0: to the end), a margin mX (X >= 0 standard errors) or a validation vK "
                f"(K of the simulations); {SPEC_FORMS}"
            )
        if key in found:
            raise ValueError(f"{kind!r} sets the {key} twice ({found[key]!r} and {value!r}); {SPEC_FORMS}")
        found[key] = value
    if "margin" in found and found.get("rollout") == "random":
        raise ValueError(
            f"{kind!r}: a margin mX applies to baseline rollouts only (it guards the baseline's move)"
        )
    try:
        return ISMCTSSettings(int(count), **found)
    except ValueError as err:
        raise ValueError(f"{kind!r}: {err}; {SPEC_FORMS}") from None


def _is_margin(text: str) -> bool:
    """True for a finite decimal number >= 0 (`2`, `1.5`), the forms a margin token takes."""
    return re.fullmatch(r"\d+(\.\d*)?|\.\d+", text) is not None


class _Node:
    """Statistics of one edge of the tree (a player's action in one of its information sets) and
    the node it leads to."""

    __slots__ = ("agent", "available", "children", "reward", "views", "visits")

    def __init__(self, agent: str | None) -> None:
        self.agent = agent  # who took the action leading here; None at the root
        self.visits = 0
        self.reward = 0.0  # sum of that agent's terminal rewards
        self.available = 1  # simulations in which the action was legal when its parent was reached
        # Below the root an edge is keyed (player, what that player observes, action), so that a
        # player's node is one of its information sets: a card revealed by chance, or dealt to it,
        # leads to a different node, and nothing it cannot see does.
        self.children: dict[tuple, _Node] = {}
        self.views: dict[tuple[str, bytes], int] = {}  # visits of each information set reached from here

    def ucb(self, exploration: float) -> float:
        """UCB1 with availability counts, on the acting agent's mean reward scaled to [0, 1]."""
        if not self.visits:
            return math.inf  # created, but its simulation found the action illegal: try again
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
        name = self.env.metadata["name"]
        #: Decisions a rollout plays before its leaf (0: to the end of the game).
        self.horizon = DEFAULT_HORIZONS.get(name, 0) if settings.horizon is None else settings.horizon
        #: Standard errors by which a move must beat the rollout policy's own move to be played.
        self.margin = DEFAULT_MARGINS.get(name, 2.0) if settings.margin is None else settings.margin
        self._seat_policies = [self._policies[a] for a in self.env.possible_agents] if self._policies else []
        #: Root statistics of the last search, {action: (visits, mean reward)}, for reports and tests.
        self.last_search: dict[int, tuple[int, float]] = {}
        #: Simulations whose determinization disagreed with the real legal actions at the root (an
        #: inexact `resample_hidden`); such actions are never searched.
        self.root_mismatches = 0
        #: Decisions whose search stopped because `resample_hidden` found no re-deal (RedealError).
        self.redeal_failures = 0
        self._redeal_failed = False
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
        legal = np.flatnonzero(action_mask).tolist()
        if not legal:
            raise ValueError("the action mask is empty: this agent has no decision to make")
        self.last_search = {}
        if len(legal) == 1:
            return legal[0]
        allowed = np.asarray(action_mask) != 0
        first = None  # the rollout policy's own choice, searched first
        if self._policies:
            first = self._policy_act(me, np.asarray(observation), np.asarray(action_mask))
        root = _Node(None)
        self._deals: list[int] = []
        self._outcomes: dict[int, list[float]] = {a: [] for a in legal}  # root move -> reward per deal
        validation = self.settings.validation if first is not None else 0
        self._redeal_failed = False
        for _ in range(self.settings.simulations - validation):
            self._simulate(root, me, allowed, first)
            if self._redeal_failed:  # a bounded re-deal search gave up: decide on what was searched
                break
        stats = {a: root.children.get((me, None, a)) for a in legal}
        self.last_search = {
            a: (node.visits, node.reward / node.visits) for a, node in stats.items() if node and node.visits
        }
        if not self.last_search:  # every determinization disagreed with the real legal actions,
            return legal[0] if first is None else first  # or none could be dealt
        best = min(self.last_search, key=lambda a: (-self.last_search[a][0], -self.last_search[a][1], a))
        keep_default = first is not None and best != first and first in self.last_search
        if keep_default and validation:
            better = self._validated(root, me, allowed, best, first, validation)
            stats = {a: root.children.get((me, None, a)) for a in legal}  # now with the validation's visits
            self.last_search = {
                a: (n.visits, n.reward / n.visits) for a, n in stats.items() if n and n.visits
            }
            return best if better else first
        if keep_default and not self._clearly_better(self._outcomes[best], self._outcomes[first]):
            return first
        return best

    def _validated(
        self, root: _Node, me: str, allowed: np.ndarray, best: int, first: int, budget: int
    ) -> bool:
        """True if `best` beats the baseline's move `first` by `margin` standard errors on fresh deals.

        The search chose `best` because its mean was the highest of several noisy means, so on the
        deals that chose it, it looks better than it is (the winner's curse). Here both moves play
        `budget // 2` deals that no simulation of this decision has seen, deal by deal.
        """
        fresh = len(self._deals)
        pairs: list[tuple[float, float]] = []
        for k in range(fresh, fresh + budget // 2):
            if self._redeal_failed:
                break
            a = self._simulate(root, me, allowed, first, forced=(best, k))
            b = self._simulate(root, me, allowed, first, forced=(first, k))
            if a is not None and b is not None:
                pairs.append((a, b))
        return self._clearly_better([a for a, _ in pairs], [b for _, b in pairs])

    def _clearly_better(self, outcomes: list[float], default: list[float]) -> bool:
        """True if a move's rewards beat the default move's on the deals both saw, by `margin` standard errors.

        The k-th visit of every root move saw deal k, so the two are compared deal by deal.
        """
        m = min(len(outcomes), len(default))
        if m < MIN_PAIRED_DEALS:
            return False
        diff = np.asarray(outcomes[:m]) - np.asarray(default[:m])
        return float(diff.mean()) > self.margin * float(diff.std(ddof=1)) / math.sqrt(m)

    def _simulate(
        self,
        root: _Node,
        me: str,
        allowed: np.ndarray,
        first: int | None,
        forced: tuple[int, int] | None = None,
    ) -> float | None:
        """One simulation: root action, determinization, selection, expansion, rollout, backup.

        Returns the deciding player's reward, or None where the re-deal disagreed with the real
        legal actions. `forced` = (root action, deal index) plays that action on that deal.
        """
        # The deciding player's legal actions are the same in every determinization of its
        # information set, so the root action is chosen first; its k-th visit then sees deal k
        # (common random numbers: root actions are compared on the same deals).
        action, child, k = self._root_move(root, me, allowed, first, forced)
        seed = self._deal(k)
        try:
            world = self._determinize(me, seed)
        except RedealError:  # (the real game is untouched: it is never the fallback)
            self._redeal_failed = True
            self.redeal_failures += 1
            return None
        game = world.game
        mask = game.legal_mask()
        if world.agent_selection != me or not np.array_equal(mask != 0, allowed):
            self.root_mismatches += 1  # an inexact re-deal changed what the deciding player may do
            if world.agent_selection != me or not mask[action]:
                return None
        # From here on the simulation steps the game engine itself: the determinization is a
        # private copy, so the AEC bookkeeping (legality checks, reward dicts) is not needed, and a
        # player's observation is encoded only where a node or the baseline reads it.
        path, root_action = [child], action
        game.apply(action)
        self._descend(world, child, path)
        self._rollout(world, seed)
        # The zero-sum returns the env pays on the game's last step, or the leaf's estimate of them.
        returns = game.returns() if game.over else self._leaf(game)
        rewards = {a: float(returns[i]) for i, a in enumerate(world.possible_agents)}
        root.visits += 1
        self._outcomes[root_action].append(rewards[me])
        for child in path:
            child.visits += 1
            child.reward += rewards[child.agent]
        return rewards[me]

    def _root_move(
        self, root: _Node, me: str, allowed: np.ndarray, first: int | None, forced: tuple[int, int] | None
    ) -> tuple[int, _Node, int]:
        """The root action of one simulation, its node, and the index of the deal it sees (its visit
        count: the k-th visit of every root move sees deal k); every root move counts one more
        availability. An untried move comes first (`first` if untried), then UCB selection."""
        for child in root.children.values():
            child.available += 1
        if forced is not None:
            action, k = forced
            return action, root.children[(me, None, action)], k
        untried = [a for a in np.flatnonzero(allowed).tolist() if (me, None, a) not in root.children]
        if untried:
            action = first if first in untried else untried[int(self.rng.integers(len(untried)))]
            child = root.children[(me, None, action)] = _Node(me)
        else:
            action, child = self._select(root, me, None, allowed)
        return action, child, child.visits

    def _descend(self, world, node: _Node, path: list[_Node]) -> None:
        """Selection and expansion below the root: step `world`'s game down the tree from `node`,
        appending each node visited to `path`, until the game ends or one new node is expanded."""
        game = world.game
        encode, agents = world.observer.encode, world.possible_agents
        while not game.over:
            player = game.current_player
            agent = agents[player]
            mask = game.legal_mask()
            observation = encode(game, player)
            view = observation.tobytes() + mask.tobytes()  # the acting player's information
            visits = node.views.get((agent, view), 0)
            node.views[(agent, view)] = visits + 1
            untried, tried = [], 0
            for a in np.flatnonzero(mask).tolist():
                sibling = node.children.get((agent, view, a))
                if sibling is None:
                    untried.append(a)
                else:
                    sibling.available += 1
                    tried += 1
            if untried and (not tried or self._widen(visits, tried)):
                action = self._expansion(agent, observation, mask, untried)
                child = node.children[(agent, view, action)] = _Node(agent)
                path.append(child)
                game.apply(action)
                return
            action, child = self._select(node, agent, view, mask)
            path.append(child)
            game.apply(action)
            node = child

    def _widen(self, visits: int, tried: int) -> bool:
        """Progressive widening below the root: an information set reached v times before tries a
        new action while it has tried at most sqrt(v / 4); until then the rollout policy's choice
        continues."""
        return not self.settings.widening or tried <= math.isqrt(visits // 4)

    def _deal(self, k: int) -> int:
        """The seed of the k-th determinization of this decision."""
        while len(self._deals) <= k:
            self._deals.append(int(self.rng.integers(_SEED_HIGH)))
        return self._deals[k]

    def _determinize(self, me: str, seed: int):
        """A copy of the real environment with everything `me` cannot see re-dealt from `seed`
        (an oracle's: only what no player has seen)."""
        world = self.env.clone()
        world.render_mode = None  # a clone of a 'human' env would print every simulated move
        world.resample_hidden(None if self.settings.oracle else me, seed)
        return world

    def _select(self, node: _Node, agent: str, view: bytes | None, mask: np.ndarray) -> tuple[int, _Node]:
        """The legal expanded child with the highest UCB value (the lowest action id among equals)."""
        c = self.settings.exploration
        best, best_value = None, -math.inf
        for action in np.flatnonzero(mask).tolist():
            child = node.children.get((agent, view, action))
            if child is None:
                continue  # not expanded yet (progressive widening)
            value = child.ucb(c)
            if value > best_value:
                best, best_value = (action, child), value
        return best

    def _expansion(self, agent: str, observation: np.ndarray, mask: np.ndarray, untried: list[int]) -> int:
        """The rollout policy's choice if it is untried (searching it first), else a random untried action."""
        if self._policies:
            choice = self._policy_act(agent, observation, mask)
            if choice in untried:
                return choice
        return untried[int(self.rng.integers(len(untried)))]

    def _rollout(self, world, seed: int) -> None:
        """Play the determinization with the rollout policy in every seat, stepping the engine:
        to the end of the game, or (with a horizon) for `horizon` decisions and then on to the end
        of the round or turn in progress, where the scores say most about who is winning."""
        game = world.game
        move = self._policy_mover(world) if self._policies else self._random_mover(seed)
        if not self.horizon:
            while not game.over:
                move(game)
            return
        for _ in range(self.horizon):
            if game.over:
                return
            move(game)
        phase = PHASES[self.env.metadata["name"]]
        current = phase(game)
        while not game.over and phase(game) == current:
            move(game)

    def _random_mover(self, seed: int):
        """A uniformly random legal move, drawn from a generator tied to the deal."""
        rng = np.random.default_rng([seed, 1])

        def move(game) -> None:
            legal = np.flatnonzero(game.legal_mask())
            game.apply(int(legal[rng.integers(legal.size)]))

        return move

    def _policy_mover(self, world):
        """The rollout policy's move for the seat to act (forced moves without encoding anything)."""
        encode, policies = world.observer.encode, self._seat_policies

        def move(game) -> None:
            mask = game.legal_mask()
            legal = np.flatnonzero(mask)
            if legal.size == 1:  # a forced move: the baselines are deterministic, so skip encoding
                game.apply(int(legal[0]))
                return
            player = game.current_player
            game.apply(int(policies[player].act(encode(game, player), mask)))

        return move

    def _leaf(self, game) -> list[float]:
        """Every seat's estimated return where a rollout stopped at its horizon: tanh(gain x lead)."""
        lead, gain = LEAVES[self.env.metadata["name"]]
        values = lead(game)
        if getattr(game.options, "reward_mode", "win") == "score":
            return values  # score-mode returns are the lead itself
        return [math.tanh(gain * x) for x in values]

    def _policy_act(self, agent: str, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The rollout policy's action for `agent` seeing this observation."""
        return int(self._policies[agent].act(observation, action_mask))


def make_ismcts_agent(kind: str, env, seed: int | None = None) -> ISMCTSAgent:
    """An ISMCTS agent from its spec (`ismcts:N[:ROLLOUT][:hK][:mX][:vK]`, or `oracle:N...` with every
    hand face up) for the env it plays in."""
    agent = ISMCTSAgent(env, parse_settings(kind), seed=seed)
    if agent.settings.oracle:
        agent.name = "oracle"
    return agent
