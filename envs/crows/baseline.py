"""A rule-based Murder, She Crows agent that decides only from its own observation.

It scores a pile as soon as it may (a murder banks the turn's provisional cards, rounding up
favours small murders, and an empty pile takes any card). It places, keeps, claims and takes coin
cards where the resulting piles look best: long piles, and a high chance that the next card fits
(which is certain while a pile is empty). It reveals while the chance of busting is worth the
provisional cards at stake, counting the cards of each value left in the deck (or in the discard
pile, when the deck is empty and the discard pile would be shuffled into a new one).
"""

from __future__ import annotations

import numpy as np
from fowlplay.envs.core.agents import Agent
from fowlplay.envs.crows.observation import CrowsObserver
from fowlplay.envs.crows.rules import CrowsOptions, Decision, Pile, action_layout, fits_run, fits_set

#: Weight of "the next card surely fits" against one card of pile length in the pile evaluation.
_FIT_WEIGHT = 2.0


class BaselineAgent(Agent):
    """Greedy pile-builder for `murder_she_crows_v1`."""

    name = "baseline"

    def __init__(self, options: CrowsOptions | None = None, seed: int | None = None) -> None:
        self.options = options or CrowsOptions()
        self.observer = CrowsObserver(self.options)
        self.layout = action_layout(self.options)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The baseline's action for this observation (always legal under `action_mask`)."""
        opts, layout = self.options, self.layout
        parts = self.observer.decode(observation)
        v = opts.max_value
        copies = opts.copies_per_value
        run = [c + 1 for c in np.flatnonzero(parts["run"][:v])]
        set_size = np.rint(parts["set"][:v] * copies).astype(int)
        set_ = [int(c) + 1 for c in np.flatnonzero(set_size) for _ in range(set_size[c])]
        if parts["deck_size"][0] > 0:
            draw = np.rint(parts["deck_counts"] * copies)
        else:
            draw = np.rint(parts["discard_pile"] * copies)
        kind = Decision(int(np.argmax(parts["decision"])))

        if kind != Decision.CLAIM:
            for pile in ("score_run", "score_set"):
                if action_mask[layout[pile].start]:
                    return layout[pile].start

        if kind == Decision.PRESS:
            return self._press(parts, action_mask, run, set_, draw)
        if kind == Decision.PLACE:
            card = int(np.argmax(parts["to_place"])) + 1
            choices = [(layout["place_run"].start, Pile.RUN), (layout["place_set"].start, Pile.SET)]
            return max(
                choices,
                key=lambda c: (action_mask[c[0]], self._value(*self._with(run, set_, c[1], card), draw)),
            )[0]
        # KEEP, COIN and CLAIM all pick a card and a pile from a block pair; compare the results.
        blocks = {
            Decision.KEEP: ("keep_run", "keep_set", "discard_both"),
            Decision.COIN: ("coin_run", "coin_set", "coin_skip"),
            Decision.CLAIM: ("claim_run", "claim_set", "claim_pass"),
        }[kind]
        fallback = layout[blocks[2]].start
        best, best_value = fallback, self._value(run, set_, draw) if action_mask[fallback] else -np.inf
        for pile, block in enumerate(blocks[:2]):
            start = layout[block].start
            for index in np.flatnonzero(action_mask[start : start + v]):
                value = self._value(*self._with(run, set_, pile, int(index) + 1), draw)
                if value > best_value:
                    best, best_value = start + int(index), value
        return best

    def _press(self, parts, action_mask, run, set_, draw) -> int:
        """Reveal while the expected gain beats the provisional cards a bust would lose."""
        layout = self.layout
        reveal = layout["reveal"].start
        if not action_mask[reveal]:
            return layout["stop"].start
        at_stake = (
            parts["provisional_run"].sum() + parts["provisional_set"].sum() * self.options.copies_per_value
        )
        fit = _fit_chance(run, set_, draw)
        if (1.0 - fit) * at_stake < fit:
            return reveal
        return layout["stop"].start

    def _with(self, run, set_, pile, card) -> tuple[list[int], list[int]]:
        """The piles after `card` joins `pile`."""
        if pile == Pile.RUN:
            return sorted([*run, card]), set_
        return run, [*set_, card]

    def _value(self, run, set_, draw) -> float:
        """How promising a pair of piles looks: their length plus the chance the next card fits."""
        murder = self.options.min_murder
        length = min(len(run), murder) + min(len(set_), murder)
        prestige = (sum(run) + sum(set_)) / (10.0 * self.options.max_value)
        return length + prestige + _FIT_WEIGHT * _fit_chance(run, set_, draw)


def _fit_chance(run: list[int], set_: list[int], draw: np.ndarray) -> float:
    """Chance that a card drawn from the composition `draw` (count per value) fits a pile."""
    total = draw.sum()
    if total == 0 or not run or not set_:
        return 1.0
    fitting = sum(draw[c - 1] for c in range(1, len(draw) + 1) if fits_run(run, c) or fits_set(set_, c))
    return float(fitting / total)
