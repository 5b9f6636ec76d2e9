"""A rule-based Chicken agent that decides only from its own observation.

It values a round by how it will end, not by how it stands. Passing is no refuge: when every
player passes with no bid, the phase's starter draws a card, so even a player who always passes
takes a card every few draws, and one who holds a foot must keep drawing until someone busts. The
agent plays that out in a small Markov chain: from now on every player draws one card a cycle,
a player with one foot busts with the deck's chance of a foot and one with none gains a foot with
it, and the round ends at the first bust or when the deck runs out. In that chain the value of
each state (my feet, how many others hold a foot) is linear in a hand's sum, so it is solved once
per deck and reused. The agent weighs its own expected final tally against the mean of the others'
(their face-down sums estimated as their counts of number cards times the unseen mean): the game
is won by scoring more than the others, not by scoring.

It bids k when drawing k cards now is worth more than letting the others draw first, by at least
`BID_MARGIN` points (a near-tie in a rough model is no reason to draw more than the others); as
the phase's starter with no bid yet, passing is worth what bidding 1 is (if the others pass, the
starter draws one). So it draws few cards, and none more once it holds a foot, where the old agent
(`BaselineAgentV0`, agent spec `baseline-v0`) opened rounds with five cards and then busted in the
forced one-card draws that followed: always passing beat it in about 3 two-player games of 4.
Against always passing it now plays as always passing does (no bid clears the margin), so each
duplicate pair of games cancels out: a fair share, and no trivial policy takes more.
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


#: A state's value as (a, c, d): the round's expected final tally is a x S + c + d x m for a hand
#: summing to S, when a number card is worth m on average.
Linear = tuple[float, float, float]
_BUST: Linear = (-1.0, 0.0, 0.0)
#: A bid must beat passing by this many points of expected tally (the chain is a rough model: a
#: near-tie is no reason to draw more than the others).
BID_MARGIN = 0.5
#: A lead (in units of the target) that the others can hardly close: from there the agent only
#: drives for the target, so a won game ends instead of running to the round cap.
SAFE_LEAD = 2.0


@lru_cache(maxsize=4096)
def _chain(players: int, feet_left: int, deck: int, bonus: int) -> tuple[list, list]:
    """The one-card-a-cycle chain's values (V, W), each indexed [t][own feet][opponents with a foot].

    V[t] is a player's value just before their draw, W[t] just after it (the others draw next),
    with t full cycles left after the current one; V[0] ends the round with the deck (the tally).
    """
    q = feet_left / deck if deck else 0.0
    others = players - 1
    tally = ((1.0, 0.0, 0.0), (1.0, float(bonus), 0.0))  # no foot: S; one foot: S + bonus
    # While the j opponents with a foot survive their draws, how many of the rest gain one.
    gains = [
        [comb(others - j, g) * q**g * (1 - q) ** (others - j - g) for g in range(others - j + 1)]
        for j in range(players)
    ]
    survive = [(1 - q) ** j for j in range(players)]
    before = [[tally[f]] * players for f in (0, 1)]
    v_table, w_table = [], []
    for _ in range(deck // players + 1):
        after = [
            [
                _mix(1 - survive[j], tally[f], _average(gains[j], before[f][j:]), survive[j])
                for j in range(players)
            ]
            for f in (0, 1)
        ]
        v_table.append(before)
        w_table.append(after)
        # One cycle more: I draw a card (a foot busts a footed hand), then the state after my draw.
        before = [
            [_mix(q, _BUST if f else after[1][j], _number(after[f][j])) for j in range(players)]
            for f in (0, 1)
        ]
    return v_table, w_table


def _number(value: Linear) -> Linear:
    """The value of a hand one number card richer: a x (S + m) + c + d x m."""
    return value[0], value[1], value[2] + value[0]


def _mix(p: float, first: Linear, second: Linear, weight: float | None = None) -> Linear:
    """`first` with probability p, else `second` (scaled by `weight`, default 1 - p)."""
    w = 1 - p if weight is None else weight
    return p * first[0] + w * second[0], p * first[1] + w * second[1], p * first[2] + w * second[2]


def _average(weights: list[float], values: list[Linear]) -> Linear:
    """The weighted sum of values (weights that sum to 1)."""
    a = c = d = 0.0
    for w, (x, y, z) in zip(weights, values):
        a, c, d = a + w * x, c + w * y, d + w * z
    return a, c, d


class BaselineAgent(Agent):
    """Bidder for `chicken_v1` that values the hands by how the round will end, not by how it stands."""

    name = "baseline"

    def __init__(self, options: ChickenOptions | None = None, seed: int | None = None) -> None:
        self.options = options or ChickenOptions()
        self.observer = ChickenObserver(self.options)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal bid worth most if it beats passing, else pass."""
        opts = self.options
        n, bonus = opts.num_players, opts.foot_bonus
        parts = self.observer.decode(observation)
        bids = np.flatnonzero(action_mask[1:]) + 1
        deck = round(parts["deck_size"][0] * opts.deck_size)
        if deck == 0 or bids.size == 0:
            return 0
        feet = np.rint(parts["feet"] * 2).astype(int).tolist()
        my_feet, their_feet = feet[0], feet[1:]
        # Sums are whole numbers; rounding undoes the float32 scaling exactly.
        my_sum = round(float(parts["my_round_points"][0]) * opts.target)
        feet_left = round(parts["feet_in_deck"][0] * opts.feet)
        unseen = parts["unseen_numbers"] * opts.copies_per_value
        values = np.arange(1, opts.max_value + 1)
        mean_value = float(unseen @ values / unseen.sum()) if unseen.sum() > 0 else 0.0
        # The others' face-down sums, as their counts of number cards times the unseen mean.
        their_sums = (np.rint(parts["number_cards_held"][1:] * opts.deck_size) * mean_value).tolist()
        before, after = _chain(n, feet_left, deck, bonus)
        last = len(before) - 1
        footed = sum(1 for f in their_feet if f == 1)
        # Each other player's feet and sum, and how many of the rest (me aside) hold a foot.
        others = [(f, s, footed - (f == 1)) for f, s in zip(their_feet, their_sums)]
        # If my draw ends the round, the others' tallies stand.
        standing = sum(s + (bonus if f == 1 else 0) for f, s in zip(their_feet, their_sums)) / (n - 1)

        def outlook(t: int, f: int, points: float) -> float:
            """My expected final tally less the others' mean, just after a draw leaves me f feet."""
            t = min(max(t, 0), last)
            a, c, d = after[t][f][footed]
            theirs = 0.0
            for their, s, rest in others:
                a2, c2, d2 = before[t][their][rest + f]
                theirs += a2 * s + c2 + d2 * mean_value
            return a * (my_sum + points) + c + d * mean_value - theirs / (n - 1)

        def bid_value(bid: int) -> float:
            value = 0.0
            for feet_drawn, p in enumerate(_feet_law(deck, feet_left, bid)):
                points = (bid - feet_drawn) * mean_value
                if my_feet + feet_drawn >= 2:
                    value -= p * (my_sum + points + standing)
                else:
                    value += p * outlook((deck - bid) // n, my_feet + feet_drawn, points)
            return value

        scores = np.rint(parts["scores"] * opts.target).astype(int).tolist()
        if scores[0] - max(scores[1:]) >= SAFE_LEAD * opts.target:
            return self._finish(bids, deck, feet_left, my_feet, my_sum, mean_value, opts.target - scores[0])
        # Passing lets the others draw first; as the starter with no bid it may be a one-card draw.
        starter = parts["phase_starter"][0] > 0.5 and parts["current_bid"][0] == 0
        best_action = 0
        best_value = bid_value(1) if starter else outlook((deck - 1) // n, my_feet, 0.0)
        for bid in bids.tolist():
            value = bid_value(bid)
            if value > best_value + (BID_MARGIN if best_action == 0 else 0.0):
                best_action, best_value = bid, value
        return best_action

    def _finish(
        self, bids, deck: int, feet_left: int, my_feet: int, my_sum: int, mean: float, need: float
    ) -> int:
        """Far ahead: the legal bid most likely to end the game now (its expected tally if the round
        ended after the draw, plus `target` if that reaches the target), if it beats passing."""
        bonus, target = self.options.foot_bonus, self.options.target
        before = my_sum + (bonus if my_feet == 1 else 0)
        best_action, best_gain = 0, 0.0
        for bid in bids.tolist():
            gain = 0.0
            for feet_drawn, p in enumerate(_feet_law(deck, feet_left, bid)):
                points = (bid - feet_drawn) * mean
                feet_after = my_feet + feet_drawn
                after = (
                    -(my_sum + points)
                    if feet_after >= 2
                    else my_sum + points + (bonus if feet_after == 1 else 0)
                )
                gain += p * (after - before + target * ((after >= need) - (before >= need)))
            if gain > best_gain:
                best_action, best_gain = bid, gain
        return best_action


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
