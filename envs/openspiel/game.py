"""The fowlplay games as OpenSpiel games: one `pyspiel.Game` class serving all four engines.

A state holds one engine `Game` that is never changed after it is made (a step clones it, so
OpenSpiel's `clone()` of a state shares it), plus, at a chance node, the step being resolved:
the engine state before it, the action, and the chance outcomes chosen so far (see `chance.py`).
Each player's information state is a digest of everything that player saw, in order: after the
deal and after every player's step, the acting seat, the player's own action if it acted, and
the player's AEC observation and action mask (`PerfectRecall`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel
from fowlplay import envs
from fowlplay.envs.openspiel.chance import ChanceNeeded, Draw, Scripted, complete, remaining

#: Every registered name is this prefix and the env name.
PREFIX = "python_fowlplay_"
#: Bytes of an information-state digest (BLAKE2b): 128 bits, so two of the millions of information
#: states of a small variant share one with probability about 2**-80.
DIGEST_BYTES = 16
#: A real generator the engine holds while it is cloned (its `clone` copies the generator).
_PLACEHOLDER = np.random.default_rng(0)


# ----- the options as OpenSpiel parameters --------------------------------------------------------
def parameter_defaults(name: str) -> dict[str, Any]:
    """The game's options as OpenSpiel parameters with their defaults. Ints, floats, bools and
    strings are as they are; an int option whose default is None (chosen from the player count)
    is -1 for None; a tuple option is a string of ints joined by ';' ('5;10;15', one value '1;'),
    '' for None: OpenSpiel's game strings read a bare number as an int and split at commas."""
    params = {}
    for option in dataclasses.fields(envs.env_module(name).raw_env.options_cls):
        params[option.name] = _parameter(option.default, str(option.type))
    return params


def _parameter(value, kind: str):
    if "tuple" in kind:
        return (
            "" if value is None else ";".join(str(int(v)) for v in value) + (";" if len(value) == 1 else "")
        )
    if value is None:
        return -1
    return value


def options_from(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The env options that OpenSpiel `params` stand for (the inverse of `parameter_defaults`)."""
    kinds = {f.name: str(f.type) for f in dataclasses.fields(envs.env_module(name).raw_env.options_cls)}
    options = {}
    for key, value in params.items():
        kind = kinds.get(key, "")
        if "tuple" in kind and isinstance(value, str):
            value = _parse(key, value, kind)
        elif "None" in kind and value == -1:
            value = None
        options[key] = value
    return options


def _parse(key: str, text: str, kind: str):
    if not text.strip():
        if "None" not in kind:
            raise ValueError(f"{key}: an empty string stands for no value, which {key} does not take")
        return None
    try:
        return tuple(int(v) for v in text.split(";") if v.strip())
    except ValueError:
        raise ValueError(
            f"{key}={text!r}: expected integers joined by ';', e.g. '5;10' (one: '5;')"
        ) from None


# ----- what each game needs beyond its env ---------------------------------------------------------
def _chicken_cards(options) -> list[int]:
    from fowlplay.envs.chicken.rules import full_deck

    return full_deck(options)


def _crows_cards(options) -> list[int]:
    from fowlplay.envs.crows.rules import full_deck

    return full_deck(options)


def _fowl_cards(options) -> list[int]:
    from fowlplay.envs.fowl.rules import full_deck

    return full_deck(options)


def _murray_cards(options) -> list[int]:
    from fowlplay.envs.murray.cards import Card, insect_cards

    return [*insect_cards(options.counts), *[Card.MURRAY] * options.murray_count, Card.HAWK]


def _chicken_card_name(options) -> Callable[[int], str]:
    return lambda card: "foot" if card == 0 else str(card)


def _fowl_card_name(options) -> Callable[[int], str]:
    from fowlplay.envs.fowl.rules import card_names

    names = card_names(options.max_value, options.num_kinds)
    return lambda card: names[card]


def _murray_card_name(options) -> Callable[[int], str]:
    from fowlplay.envs.murray.cards import CARD_NAMES

    return lambda card: CARD_NAMES[card]


@dataclasses.dataclass(frozen=True)
class GameFacts:
    """What the adapter needs to know of a game beyond its env: its cards and a bound on its length."""

    long_name: str
    #: Every card the game may shuffle (bounds the chance outcomes).
    cards: Callable[[Any], list[int]]
    card_name: Callable[[Any], Callable[[int], str]]
    #: An upper bound on the decisions of one game, from its caps (OpenSpiel's max_game_length).
    max_decisions: Callable[[Any], int]


FACTS: dict[str, GameFacts] = {
    # A bid phase has at most bid_cap bids and a pass per player and draws at least one card.
    "chicken_v1": GameFacts(
        "Chicken",
        _chicken_cards,
        _chicken_card_name,
        lambda o: o.max_rounds * o.deck_size * (o.bid_cap + o.num_players),
    ),
    "murder_she_crows_v1": GameFacts(
        "Murder, She Crows", _crows_cards, lambda o: str, lambda o: o.max_decisions
    ),
    # Every turn draws from the deck (a pile's top never alone) and takes at most a dozen decisions.
    "murder_most_fowl_v0": GameFacts(
        "Murder Most Fowl", _fowl_cards, _fowl_card_name, lambda o: 12 * len(_fowl_cards(o)) + 12
    ),
    # A turn: its draw, swarms, abilities and the Murray and Hornet decisions they start.
    "murray_frog_v0": GameFacts(
        "Murray the A**hole Frog",
        _murray_cards,
        _murray_card_name,
        lambda o: 8 * o.max_turns * (len(_murray_cards(o)) + o.num_players),
    ),
}


def game_type(name: str, num_players: range | None = None) -> pyspiel.GameType:
    """The OpenSpiel GameType of a game: sequential, imperfect information (hidden cards, the
    deck's order), zero-sum terminal rewards, chance explicit, perfect-recall information states."""
    counts = num_players or envs.player_counts(name)
    return pyspiel.GameType(
        short_name=PREFIX + name,
        long_name=f"fowlplay {FACTS[name].long_name} ({name})",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=counts.stop - 1,
        min_num_players=counts.start,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=parameter_defaults(name),
    )


class FowlplayGame(pyspiel.Game):
    """One fowlplay game with its options, as OpenSpiel sees it."""

    env_name: str = ""  # set on the per-game subclasses that `register` makes

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        name = self.env_name
        params = {**parameter_defaults(name), **(params or {})}
        options = options_from(name, params)
        if options.get("reward_mode", "win") != "win":
            raise ValueError(
                f"{PREFIX}{name} takes reward_mode='win' only (OpenSpiel needs the bounds of the "
                f"utilities, which the score returns lack); got reward_mode={options['reward_mode']!r}"
            )
        self.spec = Spec(name, options)  # the env's own ValueErrors for bad options
        env = self.spec.env
        facts = FACTS[name]
        cards = facts.cards(env.options)
        n = env.options.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=env.num_actions,
            max_chance_outcomes=max(max(cards) + 1, len(cards)),
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=facts.max_decisions(env.options),
        )
        super().__init__(game_type(name), info, params)

    def new_initial_state(self) -> FowlplayState:
        """The state before the deal (a chance node)."""
        return FowlplayState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The AEC observation, or with perfect recall the information-state digest."""
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return PerfectRecall()
        if iig_obs_type is not None and (
            not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                "only a player's own observation (public and own private information) is supported"
            )
        return AECObservation(self.spec)


class Spec:
    """A game's fixed facts for its states: engine class, options, observer."""

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.env = env = envs.make(name, **options)
        self.kwargs = options
        self.game_cls = env.game_cls
        self.options = env.options
        self.observer = env.observer
        self.num_players = env.options.num_players
        self.num_actions = env.num_actions
        self.card_name = FACTS[name].card_name(env.options)
        self.no_actions = np.zeros(env.num_actions, dtype=np.int8)
        self.initial: Node | None = None  # the node before the deal, made by the first state

    def __deepcopy__(self, memo) -> Spec:
        return self  # never changed after it is made

    def __reduce__(self):
        return Spec, (self.name, self.kwargs)  # pickled as what it is made from

    def record(self, game, player: int, actor: int, action: int | None) -> bytes:
        """What `player` sees after a step by `actor` (its action shown to itself only)."""
        mask = game.legal_mask() if player == game.current_player and not game.over else self.no_actions
        own = b"" if action is None or player != actor else int(action).to_bytes(4, "little")
        header = int(actor + 1).to_bytes(1, "little") + own
        return header + b"|" + self.observer.encode(game, player).tobytes() + mask.tobytes()


class Node:
    """One state's contents; never changed once made, so a state's clone shares it."""

    __slots__ = ("digests", "draw", "game", "pending", "steps")

    def __init__(self, game, digests: tuple[bytes, ...], steps: int, pending=None, draw=None) -> None:
        #: The engine state: settled (no chance pending), or the one before the step being resolved.
        self.game = game
        self.digests = digests
        self.steps = steps  # player steps taken
        #: At a chance node: (actor, action, outcomes done, values placed in the current shuffle).
        self.pending = pending
        self.draw: Draw | None = draw  # at a chance node: the draw being resolved

    def __deepcopy__(self, memo) -> Node:
        return self


def copy_engine(game):
    """A copy of an engine state (holding a placeholder generator: the caller gives it its own)."""
    rng, game.rng = game.rng, _PLACEHOLDER
    try:
        return game.clone()
    finally:
        game.rng = rng


class FowlplayState(pyspiel.State):
    """A state of a fowlplay game: a chance node (a deal or a draw being resolved), a decision, or terminal."""

    def __init__(self, game: FowlplayGame) -> None:
        super().__init__(game)
        spec = self.spec = game.spec
        if spec.initial is None:  # OpenSpiel makes an initial state for every clone: deal once
            spec.initial = self._resolve(None, None, None, (), (b"",) * spec.num_players, 0)
        self.node = spec.initial

    # ----- stepping --------------------------------------------------------------------------------
    def _resolve(self, base, actor, action, outcomes: tuple, digests, steps) -> Node:
        """The node after `actor`'s `action` on `base` (the deal when `base` is None) with `outcomes`:
        settled if they cover every draw, else a chance node for the next one. Draws whose outcome
        is forced (one value left, a hand of one) are settled here without a chance node."""
        spec = self.spec
        while True:
            rng = Scripted(outcomes)
            game = None
            try:
                if base is None:
                    game = spec.game_cls(spec.options, rng)
                else:
                    game = copy_engine(base)
                    game.rng = rng
                    game.apply(action)
            except ChanceNeeded as need:
                draw = need.draw
                forced = complete(draw.cards, ()) if draw.is_shuffle else (0 if draw.n == 1 else None)
                if game is not None and game.over:
                    # A draw once the game is over (Chicken gathers the cards after its last tally):
                    # nobody sees it and the returns are decided, so the cards keep their order.
                    forced = tuple(draw.cards) if draw.is_shuffle else 0
                if forced is not None:
                    outcomes = (*outcomes, forced)
                    continue
                return Node(base, digests, steps, pending=(actor, action, outcomes, ()), draw=draw)
            break
        seen = actor if actor is not None else -1
        digests = tuple(
            _chain(digest, spec.record(game, p, seen, action)) for p, digest in enumerate(digests)
        )
        return Node(game, digests, steps if base is None else steps + 1)

    def _apply_action(self, action: int) -> None:
        node = self.node
        if node.pending is None:
            self.node = self._resolve(
                node.game, node.game.current_player, action, (), node.digests, node.steps
            )
            return
        actor, acted, outcomes, placed = node.pending
        draw = node.draw
        if draw.is_shuffle:
            placed = (*placed, action)
            order = complete(draw.cards, placed)
            if order is None:
                self.node = Node(node.game, node.digests, node.steps, (actor, acted, outcomes, placed), draw)
                return
            outcome = order
        else:
            outcome = action
        base = node.game if actor is not None else None
        self.node = self._resolve(base, actor, acted, (*outcomes, outcome), node.digests, node.steps)

    # ----- what OpenSpiel asks -------------------------------------------------------------------------
    def current_player(self) -> int:
        """The acting seat, CHANCE during a draw, TERMINAL once the game is over."""
        node = self.node
        if node.pending is not None:
            return pyspiel.PlayerId.CHANCE
        if node.game.over:
            return pyspiel.PlayerId.TERMINAL
        return node.game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self.node.game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card's value with probability (copies left) / (cards left), or an index, uniform."""
        node = self.node
        draw = node.draw
        if not draw.is_shuffle:
            return [(i, 1.0 / draw.n) for i in range(draw.n)]
        left = remaining(draw.cards, node.pending[3])
        total = sum(left.values())
        return [(value, left[value] / total) for value in sorted(left)]

    def _action_to_string(self, player: int, action: int) -> str:
        node = self.node
        if player == pyspiel.PlayerId.CHANCE:
            if node.draw is not None and not node.draw.is_shuffle:
                return f"chance: card {action} of {node.draw.n} taken at random"
            return f"chance: {self.spec.card_name(action)}"
        return node.game.action_name(action)

    def is_terminal(self) -> bool:
        """True once the game is over (ended by its rules or its cap)."""
        return self.node.pending is None and self.node.game.over

    def returns(self) -> list[float]:
        """The AEC rewards: the game's returns once it is over, zeros before."""
        node = self.node
        if node.pending is None and node.game.over:
            return [float(r) for r in node.game.returns()]
        return [0.0] * self.spec.num_players

    def __str__(self) -> str:
        node = self.node
        if node.game is None:
            return "dealing"
        text = node.game.render()
        return text + ("\n(chance: drawing)" if node.pending is not None else "")

    # ----- for the adapter's users --------------------------------------------------------------------
    @property
    def engine(self):
        """The engine state (settled, or before the step being resolved); do not change it."""
        return self.node.game


def _chain(digest: bytes, record: bytes) -> bytes:
    return hashlib.blake2b(digest + record, digest_size=DIGEST_BYTES).digest()


class AECObservation:
    """OpenSpiel's observation: the AEC observation then the action mask; the string is the
    player's text view of the table."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        size = spec.observer.size
        self.tensor = np.zeros(size + spec.num_actions, np.float32)
        self.dict = {"observation": self.tensor[:size], "action_mask": self.tensor[size:]}

    def set_from(self, state: FowlplayState, player: int) -> None:
        """The observation and mask `player` would get from the AEC env (zeros before the deal)."""
        game = state.node.game
        self.tensor.fill(0)
        if game is None:
            return
        self.dict["observation"][:] = self.spec.observer.encode(game, player)
        if state.node.pending is None and not game.over and game.current_player == player:
            self.dict["action_mask"][:] = game.legal_mask()

    def string_from(self, state: FowlplayState, player: int) -> str:
        """The player's text view (`env.view`)."""
        game = state.node.game
        if game is None:
            return "dealing"
        return self.spec.observer.view(game, player)


class PerfectRecall:
    """Information states: a digest chained over every record of what the player saw (no tensor)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: FowlplayState, player: int) -> None:
        """No tensor: information states are strings only."""

    def string_from(self, state: FowlplayState, player: int) -> str:
        """`p<player> t<steps> <hex digest>`: the digest names everything `player` has seen."""
        node = state.node
        return f"p{player} t{node.steps} {node.digests[player].hex()}"


def register(name: str) -> str:
    """Register `name` with OpenSpiel as `python_fowlplay_<name>` (once); returns the registered name."""
    short = PREFIX + name
    if short in pyspiel.registered_names():
        return short
    cls = type(f"FowlplayGame_{name}", (FowlplayGame,), {"env_name": name})
    pyspiel.register_game(game_type(name), cls)
    return short
