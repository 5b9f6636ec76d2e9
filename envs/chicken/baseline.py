"""A rule-based Chicken agent that decides only from its own observation.

For every legal bid it computes the expected change of its own round result, with the number of
feet it would draw following the hypergeometric law over the cards it has not seen, and makes
the best bid if that expectation is positive; otherwise it passes.
"""

from __future__ import annotations

from math import comb

import numpy as np

from envs.chicken.observation import ChickenObserver
from envs.chicken.rules import ChickenOptions
from envs.core.agents import Agent


class BaselineAgent(Agent):
    """Expected-value bidder for `chicken_v0`."""

    name = "baseline"

    def __init__(self, options: ChickenOptions | None = None, seed: int | None = None) -> None:
        self.options = options or ChickenOptions()
        self.observer = ChickenObserver(self.options)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal bid with the best positive expected gain, else pass."""
        opts = self.options
        parts = self.observer.decode(observation)
        my_feet = round(parts["feet"][0] * 2)
        my_sum = parts["my_round_points"][0] * opts.target
        deck = round(parts["deck_size"][0] * opts.deck_size)
        feet_left = round(parts["feet_in_deck"][0] * opts.feet)
        unseen = parts["unseen_numbers"] * opts.copies_per_value
        values = np.arange(1, opts.max_value + 1)
        mean_value = float(unseen @ values / unseen.sum()) if unseen.sum() > 0 else 0.0
        best_action, best_gain = 0, 0.0
        for bid in np.flatnonzero(action_mask[1:]) + 1:
            gain = self._expected_gain(int(bid), deck, feet_left, my_feet, my_sum, mean_value)
            if gain > best_gain:
                best_action, best_gain = int(bid), gain
        return best_action

    def _expected_gain(
        self, bid: int, deck: int, feet_left: int, my_feet: int, my_sum: float, mean_value: float
    ) -> float:
        bonus = self.options.foot_bonus
        total = comb(deck, bid)
        if total == 0:
            return -np.inf
        gain = 0.0
        for feet_drawn in range(min(bid, feet_left) + 1):
            p = comb(feet_left, feet_drawn) * comb(deck - feet_left, bid - feet_drawn) / total
            drawn_points = (bid - feet_drawn) * mean_value
            feet_after = my_feet + feet_drawn
            before = my_sum + (bonus if my_feet == 1 else 0)
            if feet_after >= 2:
                after = -(my_sum + drawn_points)
            else:
                after = my_sum + drawn_points + (bonus if feet_after == 1 else 0)
            gain += p * (after - before)
        return gain
