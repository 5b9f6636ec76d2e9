"""A rule-based Murray agent that decides only from its own observation.

It rates every legal action and takes the best: creating and extending its own swarms first (each
moves penalty cards in hand into points), then abilities aimed at the opponents' swarms and hands,
then a useful pond swap or common-fly draw; otherwise it ends the turn passing its least useful
card. Murray, the Firefly and the Robber Fly go for the opponent swarm whose loss costs its owner
most; it goes out with the Hawk only when its visible score beats every estimate of the others'.
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np
from fowlplay.envs.core.agents import Agent
from fowlplay.envs.murray.cards import (
    ABILITY_CARDS,
    COMMON_FLIES,
    FLIES,
    NUM_INSECTS,
    SWARM_COMBOS,
    TYPES_OF_VALUE,
    VALUE,
    Card,
    swarm_value,
)
from fowlplay.envs.murray.observation import MurrayObserver
from fowlplay.envs.murray.rules import Decision, MurrayOptions, _layout_bindings, swarm_points, tadpole_points

#: Expected penalty of an unseen card in another player's hand (mean insect value, about 2.6).
_MEAN_HAND_VALUE = 2.6
#: (value, a function giving a hand's counts of the card types of that value as a tuple).
_OF_VALUE = tuple(
    (value, itemgetter(*types) if len(types) > 1 else lambda hand, t=types[0]: (hand[t],))
    for value, types in TYPES_OF_VALUE.items()
)


class BaselineAgent(Agent):
    """Greedy swarm builder and swarm wrecker for `murray_frog_v0`."""

    name = "baseline"

    def __init__(self, options: MurrayOptions | None = None, seed: int | None = None) -> None:
        self.options = options or MurrayOptions()
        self.observer = MurrayObserver(self.options)
        # The game's own layout and (block, index) of every action id, built once per table shape.
        bindings = _layout_bindings(self.options)
        self.layout, self._decoded = bindings["layout"], bindings["_decoded"]
        copies = np.array([*self.options.counts, 1], dtype=np.float64)
        # One multiply turns the whole observation back into counts: each count piece times what the
        # observer divided it by (swarm rows by their insect's copies, the hand by every card's, hand
        # sizes by the cards in the game, tadpoles by twice the Murrays), one-hot pieces times 1.
        opts = self.options
        at = self.observer.offsets
        self._unscale = np.ones(self.observer.size, dtype=np.float64)
        self._unscale[at["my_hand"]] = copies
        self._unscale[at["swarms"]] = np.tile(copies[:NUM_INSECTS], opts.num_players * opts.max_swarms)
        self._unscale[at["hand_sizes"]] = opts.total_cards
        self._unscale[at["tadpoles"]] = max(2 * opts.murray_count, 1)
        self._at = at
        self._deck_size = at["deck_size"].start

    # ----- reading the observation ---------------------------------------------------------------
    def _read(self, observation: np.ndarray) -> dict:
        """The observation as plain Python values, read once per decision (every legal action's
        rating reads them: numpy calls on small slices would cost more than the ratings)."""
        opts, at = self.options, self._at
        n, s = opts.num_players, opts.max_swarms
        counts = np.rint(observation * self._unscale).astype(int).tolist()
        swarm_counts = counts[at["swarms"]]
        rows = [swarm_counts[k : k + NUM_INSECTS] for k in range(0, n * s * NUM_INSECTS, NUM_INSECTS)]
        slots = [rows[rel * s : (rel + 1) * s] for rel in range(n)]
        swarms = [[sw for sw in slots[rel] if any(sw)] for rel in range(n)]
        hand = counts[at["my_hand"]]
        pond = counts[at["pond"]]
        return {
            "decision": _first_one(counts[at["decision"]]),
            "hand": hand,
            "swarms": swarms,
            "slots": slots,
            "my_values": {swarm_value(sw) for sw in swarms[0]},
            # Cards in hand of each value (1-5; the Hawk's VALUE is none of them).
            "by_value": {v: sum(cards(hand)) for v, cards in _OF_VALUE},
            # The card in each pond slot (an empty slot reads as card 0; no action names one).
            "pond": [_first_one(pond[k : k + NUM_INSECTS]) for k in range(0, len(pond), NUM_INSECTS)],
            # (float32 arithmetic, as it always was: the decisions depend on it at the boundary)
            "early": observation[self._deck_size] * opts.total_cards > 25,
            "hand_sizes": counts[at["hand_sizes"]],
            "tadpoles": counts[at["tadpoles"]],
            # The swarm a Firefly or Robber Fly is taking from (index into the swarm rows), or -1.
            "chosen": _first_one(counts[at["chosen_swarm"]], missing=-1),
        }

    def _usefulness(self, card: int, by_value: dict[int, int], my_values: set[int], in_hand: bool) -> float:
        """How much holding one more `card` helps this player (it is in hand if `in_hand`);
        `by_value`: the cards in hand of each value."""
        if card == Card.HAWK:
            return -100.0
        value = VALUE[card]
        if value in my_values:
            return 10.0 + value
        same = by_value[value] - (1 if in_hand else 0)
        if same >= 2:
            return 8.0 + value
        if same == 1:
            return 3.0 + 0.5 * value
        return -0.2 * value

    def _swarm_worth(self, swarm: list[int]) -> float:
        return swarm_points(swarm, self.options) + sum(c * VALUE[t] for t, c in enumerate(swarm))

    # ----- deciding --------------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal action with the best rating."""
        view = self._read(observation)
        legal = np.flatnonzero(action_mask).tolist()
        rate = self._turn_rating if view["decision"] == Decision.TURN else self._target_rating
        ratings = [rate(a, view) for a in legal]
        return legal[max(range(len(ratings)), key=ratings.__getitem__)]  # the first best, as argmax

    def _turn_rating(self, action: int, view: dict) -> float:
        opts = self.options
        by_value, my_values = view["by_value"], view["my_values"]
        block, i = self._decoded[action]
        if block == "go_out":
            return 1000.0 if self._leading(view) else -1000.0
        if block == "create":
            combo = SWARM_COMBOS[i]
            swarm = [combo.count(t) for t in range(NUM_INSECTS)]
            return 100.0 + 2 * sum(VALUE[t] for t in combo) + swarm_points(swarm, opts)
        if block == "add":
            slot, card = divmod(i, NUM_INSECTS)
            swarm = list(view["slots"][0][slot])
            before = swarm_points(swarm, opts)
            swarm[card] += 1
            gain = 2 * VALUE[card] + swarm_points(swarm, opts) - before
            return 80.0 + gain if gain > 0 else -5.0
        if block == "ability":
            return self._ability_rating(ABILITY_CARDS[i], view, my_values)
        if block == "swap":
            card, slot = divmod(i, opts.pond_size)
            taken = view["pond"][slot]
            gain = self._usefulness(taken, by_value, my_values, False) - self._usefulness(
                card, by_value, my_values, True
            )
            return 20.0 + gain if gain >= 2 else -5.0
        if block == "fly_draw":
            card = COMMON_FLIES[i]
            return 10.0 if view["early"] and self._usefulness(card, by_value, my_values, True) <= 1 else -5.0
        if block == "pass":
            return -10.0 - self._usefulness(i, by_value, my_values, True) + 0.1 * VALUE[i]
        return -10.0  # end_turn

    def _ability_rating(self, card: int, view: dict, my_values: set[int]) -> float:
        by_value = view["by_value"]
        if by_value[VALUE[card]] >= 3 or VALUE[card] in my_values:
            return -5.0  # worth more in a swarm
        opponents = view["swarms"][1:]
        if card == Card.ROBBER_FLY:
            fly_swarms = [sw for swarms in opponents for sw in swarms if any(sw[t] for t in FLIES)]
            return 40.0 if fly_swarms else -5.0
        if card == Card.FIREFLY:
            return 38.0 if any(opponents) else -5.0
        if card in (Card.DEER_FLY, Card.HORNET):
            return 30.0 if max(view["hand_sizes"][1:]) >= 2 else -5.0
        if card == Card.DRAGONFLY:
            best = max(self._usefulness(c, by_value, my_values, False) for c in view["pond"])
            return 25.0 if best >= 8 else -5.0
        return -5.0  # Paper Wasp: only its value in a swarm matters to this agent

    def _leading(self, view: dict) -> bool:
        """Whether my visible score beats every other player's estimated score."""
        scores = []
        for rel, swarms in enumerate(view["swarms"]):
            score = sum(self._swarm_worth(sw) for sw in swarms) + tadpole_points(view["tadpoles"][rel])
            if rel == 0:
                score -= sum(c * VALUE[t] for t, c in enumerate(view["hand"]))
            else:
                score -= view["hand_sizes"][rel] * _MEAN_HAND_VALUE
            scores.append(score)
        return scores[0] > max(scores[1:])

    def _owner_loss(self, rel: int, swarm: list[int], removed: int | None, view: dict) -> float:
        """What the owner loses when `removed` (or, for None, the whole swarm to Murray) goes."""
        if removed is None:
            tadpoles = view["tadpoles"][rel]
            return self._swarm_worth(swarm) - (tadpole_points(tadpoles + 1) - tadpole_points(tadpoles))
        after = list(swarm)
        after[removed] -= 1
        return self._swarm_worth(swarm) - self._swarm_worth(after)

    def _target_rating(self, action: int, view: dict) -> float:
        opts = self.options
        s = opts.max_swarms
        by_value, my_values = view["by_value"], view["my_values"]
        decision = view["decision"]
        block, i = self._decoded[action]
        sign = 1.0
        if block in ("murray", "swarm"):
            rel, slot = divmod(i, s)
            sign = -1.0 if rel == 0 else 1.0
            swarm = view["slots"][rel][slot]
            if block == "murray":
                return sign * self._owner_loss(rel, swarm, None, view)
            robber = decision == Decision.ROBBER_SWARM
            options = [t for t in range(NUM_INSECTS) if swarm[t] and (not robber or t in FLIES)]
            return max(sign * self._owner_loss(rel, swarm, t, view) for t in options)
        if block == "player":
            return float(view["hand_sizes"][i + 1])
        if block == "pond":
            return self._usefulness(view["pond"][i], by_value, my_values, False)
        if block == "take":
            chosen = view["chosen"]
            loss = 0.0
            if chosen >= 0:
                rel, slot = divmod(chosen, s)
                sign = -1.0 if rel == 0 else 1.0
                loss = sign * self._owner_loss(rel, view["slots"][rel][slot], i, view)
            if decision == Decision.ROBBER_TAKE:
                return loss
            return loss + self._usefulness(i, by_value, my_values, False) + 0.1 * VALUE[i]
        if block == "discard":
            return -self._usefulness(i, by_value, my_values, True) + 0.1 * VALUE[i]
        return 0.0


def _first_one(values: list[int], missing: int = 0) -> int:
    """The index of the first 1 of a one-hot piece (as numpy's argmax reads it), else `missing`."""
    return values.index(1) if 1 in values else missing
