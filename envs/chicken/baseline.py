"""A rule-based Chicken agent that decides only from its own observation.

For every bid it computes the expected change of its own round result, with the number of feet
it would draw following the hypergeometric law over the cards it has not seen. Passing is not
worth nothing: it hands the draw to another player, and if that draw does not end the round the
next bid phase starts at the drawer's left, so a draw may come back to this player. The agent
values passing at that chance: (probability the other player's draw leaves the round going) x
(its own best draw now) / (number of other players). It makes its best legal bid only if that
bid's expected gain beats the value of passing. So it stops a bidding war once winning it would
earn less on average than waiting for a later draw; two such agents no longer bid each other up
to the point where the draw is worth nothing, which used to drive both scores down until the
round cap.

Points only matter as a way to the target, so a draw outcome that lifts the score this player
would have if the round ended now to the target or above counts `target` points more, and one
that drops it below the target counts `target` points less. Against players who bust every
round and sink far below zero (uniform random play with 3 or 4 players), this makes it take the
long draws that end the game instead of waiting for the round cap.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np
from fowlplay.envs.chicken.observation import ChickenObserver
from fowlplay.envs.chicken.rules import ChickenOptions
from fowlplay.envs.core.agents import Agent


def feet_law(deck: int, feet_left: int, cards: int) -> list[float]:
    """P(exactly f feet among `cards` drawn from a deck of `deck` holding `feet_left`), f = 0, 1, ..."""
    return list(_feet_law(deck, feet_left, cards))


@lru_cache(maxsize=4096)  # a search agent's rollouts ask for the same few laws many times
def _feet_law(deck: int, feet_left: int, cards: int) -> tuple[float, ...]:
    """`feet_law`, cached."""
    total = comb(deck, cards)
    return tuple(
        comb(feet_left, f) * comb(deck - feet_left, cards - f) / total
        for f in range(min(cards, feet_left) + 1)
    )


class BaselineAgent(Agent):
    """Expected-value bidder for `chicken_v1` that knows passing may bring the draw back."""

    name = "baseline"

    def __init__(self, options: ChickenOptions | None = None, seed: int | None = None) -> None:
        self.options = options or ChickenOptions()
        self.observer = ChickenObserver(self.options)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal bid with the best expected gain if it beats the value of passing, else pass."""
        opts = self.options
        parts = self.observer.decode(observation)
        feet = np.rint(parts["feet"] * 2).astype(int)
        # Sums and scores are whole numbers; rounding undoes the float32 scaling exactly.
        my_sum = round(float(parts["my_round_points"][0]) * opts.target)
        need = opts.target - round(float(parts["scores"][0]) * opts.target)
        deck = round(parts["deck_size"][0] * opts.deck_size)
        feet_left = round(parts["feet_in_deck"][0] * opts.feet)
        unseen = parts["unseen_numbers"] * opts.copies_per_value
        values = np.arange(1, opts.max_value + 1)
        mean_value = float(unseen @ values / unseen.sum()) if unseen.sum() > 0 else 0.0
        max_bid = min(deck, opts.bid_cap)
        gains = [
            self._expected_gain(bid, deck, feet_left, int(feet[0]), my_sum, mean_value, need)
            for bid in range(1, max_bid + 1)
        ]
        if not gains:
            return 0
        best_bid = int(np.argmax(gains)) + 1
        # Who draws if I pass: the high bidder their bid, or (no bid yet) someone my best bid.
        bidders = np.flatnonzero(parts["high_bidder"])
        if bidders.size:
            drawer_feet = int(feet[bidders[0]])
            drawn = round(parts["current_bid"][0] * opts.bid_cap)
        else:
            drawer_feet, drawn = 0, best_bid
        round_goes_on = sum(_feet_law(deck, feet_left, drawn)[: max(0, 2 - drawer_feet)])
        pass_value = round_goes_on * max(0.0, gains[best_bid - 1]) / (opts.num_players - 1)
        best_action, best_value = 0, pass_value
        for bid in np.flatnonzero(action_mask[1:]) + 1:
            if gains[bid - 1] > best_value:
                best_action, best_value = int(bid), gains[bid - 1]
        return best_action

    def _expected_gain(
        self,
        bid: int,
        deck: int,
        feet_left: int,
        my_feet: int,
        my_sum: float,
        mean_value: float,
        need: float,
    ) -> float:
        """Expected change of my round result if I draw `bid` cards now, with the target bonus.

        `need` is the round result that would bring my score to the target.
        """
        bonus = self.options.foot_bonus
        target = self.options.target
        before = my_sum + (bonus if my_feet == 1 else 0)
        reached_before = before >= need
        gain = 0.0
        for feet_drawn, p in enumerate(_feet_law(deck, feet_left, bid)):
            drawn_points = (bid - feet_drawn) * mean_value
            feet_after = my_feet + feet_drawn
            if feet_after >= 2:
                after = -(my_sum + drawn_points)
            else:
                after = my_sum + drawn_points + (bonus if feet_after == 1 else 0)
            gain += p * (after - before + target * ((after >= need) - reached_before))
        return gain


class BaselineAgentV0(Agent):
    """The baseline as it was before issue 32, frozen: always passing beats it at two players.

    Kept unchanged (agent spec `baseline-v0`) so that a test can show an exploit search finds that.
    """

    name = "baseline-v0"

    def __init__(self, options: ChickenOptions | None = None, seed: int | None = None) -> None:
        self.options = options or ChickenOptions()
        self.observer = ChickenObserver(self.options)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal bid with the best expected gain if it beats the value of passing, else pass."""
        opts = self.options
        parts = self.observer.decode(observation)
        feet = np.rint(parts["feet"] * 2).astype(int)
        # Sums and scores are whole numbers; rounding undoes the float32 scaling exactly.
        my_sum = round(float(parts["my_round_points"][0]) * opts.target)
        need = opts.target - round(float(parts["scores"][0]) * opts.target)
        deck = round(parts["deck_size"][0] * opts.deck_size)
        feet_left = round(parts["feet_in_deck"][0] * opts.feet)
        unseen = parts["unseen_numbers"] * opts.copies_per_value
        values = np.arange(1, opts.max_value + 1)
        mean_value = float(unseen @ values / unseen.sum()) if unseen.sum() > 0 else 0.0
        max_bid = min(deck, opts.bid_cap)
        gains = [
            self._expected_gain(bid, deck, feet_left, int(feet[0]), my_sum, mean_value, need)
            for bid in range(1, max_bid + 1)
        ]
        if not gains:
            return 0
        best_bid = int(np.argmax(gains)) + 1
        # Who draws if I pass: the high bidder their bid, or (no bid yet) someone my best bid.
        bidders = np.flatnonzero(parts["high_bidder"])
        if bidders.size:
            drawer_feet = int(feet[bidders[0]])
            drawn = round(parts["current_bid"][0] * opts.bid_cap)
        else:
            drawer_feet, drawn = 0, best_bid
        round_goes_on = sum(_feet_law(deck, feet_left, drawn)[: max(0, 2 - drawer_feet)])
        pass_value = round_goes_on * max(0.0, gains[best_bid - 1]) / (opts.num_players - 1)
        best_action, best_value = 0, pass_value
        for bid in np.flatnonzero(action_mask[1:]) + 1:
            if gains[bid - 1] > best_value:
                best_action, best_value = int(bid), gains[bid - 1]
        return best_action

    def _expected_gain(
        self,
        bid: int,
        deck: int,
        feet_left: int,
        my_feet: int,
        my_sum: float,
        mean_value: float,
        need: float,
    ) -> float:
        """Expected change of my round result if I draw `bid` cards now, with the target bonus.

        `need` is the round result that would bring my score to the target.
        """
        bonus = self.options.foot_bonus
        target = self.options.target
        before = my_sum + (bonus if my_feet == 1 else 0)
        reached_before = before >= need
        gain = 0.0
        for feet_drawn, p in enumerate(_feet_law(deck, feet_left, bid)):
            drawn_points = (bid - feet_drawn) * mean_value
            feet_after = my_feet + feet_drawn
            if feet_after >= 2:
                after = -(my_sum + drawn_points)
            else:
                after = my_sum + drawn_points + (bonus if feet_after == 1 else 0)
            gain += p * (after - before + target * ((after >= need) - reached_before))
        return gain
