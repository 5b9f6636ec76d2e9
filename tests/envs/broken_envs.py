"""A small correct AEC env, and broken twins each with one defect `fowlplay.envs.checks` must name.

The game ("high hand"): 2-3 players, a 12-card deck (values 0-5, two of each), one card dealt to
each player face down. In turn, a player passes, draws the top card (hand of at most 3), discards
their lowest card face down (hand of 2 or more), or - from turn 4 on - stops the game. The game
stops anyway after 12 turns; the highest hand total wins (the fowlplay win reward). A player sees
their own hand, every hand's size, the deck's size and the turn.

Every factory below is importable as `tests.envs.broken_envs:NAME`, so the fresh-process check runs.
"""

from __future__ import annotations

import copy

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

PASS, DRAW, DISCARD, STOP = range(4)
#: The fifth action of the silent_fold and announced_fold twins (the correct game has four).
FOLD = 4
VALUES = 6
MAX_TURNS = 12
STOP_FROM = 4


class ToyBase(AECEnv):
    """The correct game, without clone() or resample_hidden() (so checks replay from the seed)."""

    metadata = {"name": "high_hand_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_players: int = 2, illegal_action: str = "raise") -> None:
        super().__init__()
        if num_players not in (2, 3):
            raise ValueError(f"num_players must be 2 or 3, not {num_players!r}")
        self.illegal_action = illegal_action
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        size = VALUES + num_players + 2
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 20.0, (size,), np.float32),
                "action_mask": spaces.Box(0, 1, (4,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(4) for a in self.possible_agents}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ----- dealing ------------------------------------------------------------------------------
    def _shuffle(self, cards: list[int]) -> list[int]:
        return [cards[i] for i in self.rng.permutation(len(cards))]

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(seed)
        self.deck = self._shuffle([v for v in range(VALUES) for _ in range(2)])
        self.hands = [[self.deck.pop()] for _ in self.possible_agents]
        self.discards: list[int] = []
        self.turn = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self._over = False

    # ----- rules --------------------------------------------------------------------------------
    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _legal(self) -> np.ndarray:
        """The true legal actions of the acting player."""
        hand = self.hands[self._seat(self.agent_selection)]
        mask = np.zeros(4, dtype=np.int8)
        mask[PASS] = 1
        mask[DRAW] = bool(self.deck) and len(hand) < 3
        mask[DISCARD] = len(hand) >= 2
        mask[STOP] = self.turn >= STOP_FROM
        return mask

    def _mask(self) -> np.ndarray:
        """The mask the acting player is shown (the twins that lie override this one)."""
        return self._legal()

    def _waiting_mask(self, agent: str) -> np.ndarray:
        return np.zeros(4, dtype=np.int8)

    def _accepts(self, action: int) -> bool:
        """Whether step accepts `action` (the twins that refuse override this one)."""
        return bool(self._legal()[action])

    def _encode(self, seat: int) -> np.ndarray:
        counts = np.bincount(self.hands[seat], minlength=VALUES)
        sizes = [len(h) for h in self.hands]
        return np.array([*counts, *sizes, len(self.deck), self.turn], dtype=np.float32)

    def observe(self, agent):
        acting = agent == self.agent_selection and not self._over
        mask = self._mask() if acting else self._waiting_mask(agent)
        return {"observation": self._encode(self._seat(agent)), "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if not isinstance(action, (int, np.integer)) or not 0 <= action < 4 or not self._accepts(int(action)):
            if self.illegal_action == "raise":
                raise ValueError(
                    f"action {action!r} is illegal for {agent}; legal: {np.flatnonzero(self._legal())}"
                )
            self._forfeit(agent, action)
            return
        self._cumulative_rewards[agent] = 0.0
        seat = self._seat(agent)
        hand = self.hands[seat]
        if action == DRAW:
            hand.append(self.deck.pop())
        elif action == DISCARD:
            self.discards.append(hand.pop(hand.index(min(hand))))  # face down, out of the game
        self.turn += 1
        if action == STOP or self.turn >= MAX_TURNS:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]
        self._accumulate_rewards()

    def _finish(self) -> None:
        totals = [sum(h) for h in self.hands]
        best = max(totals)
        winners = [i for i, t in enumerate(totals) if t == best]
        n, k = len(totals), len(winners)
        for i, a in enumerate(self.possible_agents):
            if k == n:
                self.rewards[a] = 0.0
            elif i in winners:
                self.rewards[a] = (n - k) / (k * (n - 1))
            else:
                self.rewards[a] = -1.0 / (n - 1)
            self.terminations[a] = True
        self._over = True

    def _forfeit(self, agent: str, action) -> None:
        """illegal_action="lose": the offender -1, the others share +1, the game ends."""
        others = len(self.agents) - 1
        for a in self.agents:
            self.rewards[a] = -1.0 if a == agent else 1.0 / others
            self.terminations[a] = True
            self.infos[a] = {"illegal_action": {"agent": agent, "action": action}}
        self._cumulative_rewards[agent] = 0.0
        self._over = True
        self._accumulate_rewards()


class ToyEnv(ToyBase):
    """The correct game with clone(), resample_hidden(), state_dict() and view() for search agents."""

    def clone(self):
        return copy.deepcopy(self)

    def resample_hidden(self, agent: str, seed=None) -> None:
        """Re-deal every card `agent` cannot see (others' hands, deck, discards), keeping the counts."""
        rng = np.random.default_rng(seed)
        me = self._seat(agent)
        others = [i for i in range(len(self.hands)) if i != me]
        pool = [c for i in others for c in self.hands[i]] + self.deck
        pool = [pool[i] for i in rng.permutation(len(pool))]
        for i in others:
            size = len(self.hands[i])
            self.hands[i], pool = pool[:size], pool[size:]
        self.deck = pool
        self.rng = np.random.default_rng(rng.integers(2**31))

    def state_dict(self) -> dict:
        return {"hands": [sorted(h) for h in self.hands], "deck": list(self.deck), "turn": self.turn}

    def view(self, agent: str) -> str:
        seat = self._seat(agent)
        sizes = [len(h) for h in self.hands]
        return f"{agent}: hand {sorted(self.hands[seat])}, hand sizes {sizes}, deck {len(self.deck)}, turn {self.turn}"


# ----- the broken twins: one defect each --------------------------------------------------------


class MaskHidesLegal(ToyEnv):
    """Lies: on odd turns from turn 5 the mask hides STOP, but step accepts it."""

    def _mask(self):
        mask = self._legal()
        if self.turn % 2:
            mask[STOP] = 0
        return mask


class MaskOffersIllegal(ToyEnv):
    """Lies: the mask offers STOP from turn 2, but step refuses it before turn 4 (the game is lost)."""

    def __init__(self, num_players: int = 2, illegal_action: str = "lose") -> None:
        super().__init__(num_players, illegal_action)

    def _mask(self):
        mask = self._legal()
        mask[STOP] = self.turn >= 2
        return mask


class WaitingHasLegal(ToyEnv):
    """A waiting agent's mask offers PASS."""

    def _waiting_mask(self, agent):
        mask = np.zeros(4, dtype=np.int8)
        mask[PASS] = 1
        return mask


class ActingNoLegal(ToyEnv):
    """On turn 3 the acting agent's mask is empty (step then takes any action as a pass)."""

    def _mask(self):
        return np.zeros(4, dtype=np.int8) if self.turn == 3 else self._legal()

    def _accepts(self, action):
        return self.turn == 3 or super()._accepts(action)

    def step(self, action):
        if self.turn == 3 and not self.terminations[self.agent_selection]:
            action = PASS
        super().step(action)


class WrongMaskDtype(ToyEnv):
    """The mask is int64 while the observation space declares int8."""

    def _mask(self):
        return self._legal().astype(np.int64)

    def _waiting_mask(self, agent):
        return np.zeros(4, dtype=np.int64)


class WrongMaskShape(ToyEnv):
    """The mask has a fifth entry the observation space does not declare."""

    def _mask(self):
        return np.append(self._legal(), np.int8(0))

    def _waiting_mask(self, agent):
        return np.zeros(5, dtype=np.int8)


class GlobalRandom(ToyEnv):
    """reset(seed) ignores its seed for the deal: the deck is shuffled with the global np.random."""

    def _shuffle(self, cards):
        return [cards[i] for i in np.random.permutation(len(cards))]


class LeaksHand(ToyEnv):
    """The observation shows every hand's total where it should show only hand sizes."""

    def _encode(self, seat):
        out = super()._encode(seat)
        out[VALUES : VALUES + len(self.hands)] = [sum(h) for h in self.hands]
        return out


class VacuousRedeal(ToyEnv):
    """resample_hidden re-deals nothing."""

    def resample_hidden(self, agent, seed=None):
        pass


class SilentFold(ToyEnv):
    """A rules bug: a fifth action, FOLD, that the mask always hides but step accepts at any time; the
    folder loses and the game ends, with no error, no info key and no warning (a silent loss)."""

    def __init__(self, num_players: int = 2, illegal_action: str = "raise") -> None:
        super().__init__(num_players, illegal_action)
        inner = self.observation_spaces[self.possible_agents[0]]["observation"]
        obs_space = spaces.Dict({"observation": inner, "action_mask": spaces.Box(0, 1, (5,), np.int8)})
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(5) for a in self.possible_agents}

    def _legal(self):
        return np.append(super()._legal(), np.int8(0))  # FOLD is never offered

    def _waiting_mask(self, agent):
        return np.zeros(5, dtype=np.int8)

    def step(self, action):
        agent = self.agent_selection
        if action == FOLD and not (self.terminations[agent] or self.truncations[agent]):
            others = len(self.agents) - 1
            for a in self.agents:
                self.rewards[a] = -1.0 if a == agent else 1.0 / others
                self.terminations[a] = True
            self._cumulative_rewards[agent] = 0.0
            self._over = True
            self._accumulate_rewards()
            return
        super().step(action)


class AnnouncedFold(SilentFold):
    """The same fold, announced as PettingZoo's TerminateIllegalWrapper does: its illegal-move warning."""

    def step(self, action):
        if action == FOLD and not self.terminations[self.agent_selection]:
            from pettingzoo.utils.env_logger import EnvLogger

            EnvLogger.warn_on_illegal_move()
        super().step(action)


def toy(**kwargs):
    """The correct game, with clone and resample_hidden."""
    return ToyEnv(**kwargs)


def toy_no_clone(**kwargs):
    """The correct game without clone: the mask checks replay from the seed."""
    return ToyBase(**kwargs)


class _NoClone:
    """Mixin removing clone/resample_hidden from a twin (looked up as None, so not callable)."""

    clone = None
    resample_hidden = None


def mask_hides_legal(**kwargs):
    return MaskHidesLegal(**kwargs)


def mask_hides_legal_no_clone(**kwargs):
    return type("MaskHidesLegalNoClone", (_NoClone, MaskHidesLegal), {})(**kwargs)


def mask_offers_illegal(**kwargs):
    return MaskOffersIllegal(**kwargs)


def mask_offers_illegal_raising(**kwargs):
    return MaskOffersIllegal(**kwargs, illegal_action="raise")


def waiting_has_legal(**kwargs):
    return WaitingHasLegal(**kwargs)


def acting_no_legal(**kwargs):
    return ActingNoLegal(**kwargs)


def wrong_mask_dtype(**kwargs):
    return WrongMaskDtype(**kwargs)


def wrong_mask_shape(**kwargs):
    return WrongMaskShape(**kwargs)


def global_random(**kwargs):
    return GlobalRandom(**kwargs)


def leaks_hand(**kwargs):
    return LeaksHand(**kwargs)


def vacuous_redeal(**kwargs):
    return VacuousRedeal(**kwargs)


def silent_fold(**kwargs):
    return SilentFold(**kwargs)


def announced_fold(**kwargs):
    return AnnouncedFold(**kwargs)


# ----- policies for `check_policy` ---------------------------------------------------------------

_ANY = np.random.default_rng(0)


def unmasked_policy(observation, action_mask):
    """Ignores the mask: a uniformly random action of the whole space."""
    return int(_ANY.integers(len(action_mask)))


def masked_policy(observation, action_mask):
    """Respects the mask: the first legal action."""
    return int(np.flatnonzero(action_mask)[0])


def uniform_probabilities(observation, action_mask):
    """Probabilities that ignore the mask (uniform over every action)."""
    return np.full(len(action_mask), 1.0 / len(action_mask))


def masked_probabilities(observation, action_mask):
    """Probabilities uniform over the legal actions only."""
    return action_mask / action_mask.sum()


class FlatObservation(ToyEnv):
    """Not the convention: the observation is the bare vector, the mask nowhere."""

    def __init__(self, num_players: int = 2, illegal_action: str = "raise") -> None:
        super().__init__(num_players, illegal_action)
        box = self.observation_spaces[self.possible_agents[0]]["observation"]
        self.observation_spaces = {a: box for a in self.possible_agents}

    def observe(self, agent):
        return super().observe(agent)["observation"]


def flat_observation(**kwargs):
    return FlatObservation(**kwargs)
