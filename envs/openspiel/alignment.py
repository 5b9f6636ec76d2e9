"""The alignment suite: an OpenSpiel game and its AEC env, stepped side by side, equal at every step.

The AEC env plays a seeded game as always; a `Recorder` wrapped around its generator keeps every
shuffle and random index it draws (bit for bit the draws of an unwrapped game). The OpenSpiel state
takes the same deal and draws as chance actions, and the same player actions. At every chance node
the harness checks `chance_outcomes()` against the cards still to place (each value with
probability copies / cards left); after the deal and after every step it compares the acting
player, the legal actions, every player's observation tensor (the AEC observation and mask, bit
for bit), and at the end the returns against the AEC rewards. An `InfoStates` check, kept across
games, holds each information state string to the AEC history of what its player saw: the same
history must give the same string and different histories different strings, so a string that
leaks a hidden card, or forgets what its player saw or did, fails.

    python -m fowlplay.envs.openspiel.alignment --games 1000      # random games, every player count

Seed 0 with its masked random actions from `default_rng(0)` is the golden playthrough's game.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from dataclasses import dataclass, field

import numpy as np
import pyspiel
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal
from fowlplay.envs.openspiel import load
from fowlplay.envs.openspiel.chance import Recorder, chance_actions
from gymnasium.utils import seeding


class MisalignedError(AssertionError):
    """The OpenSpiel game and the AEC env differ; the message says where and how."""


@dataclass
class InfoStates:
    """Information state strings against the AEC histories they stand for, over many games."""

    by_history: dict[bytes, str] = field(default_factory=dict)
    by_string: dict[str, bytes] = field(default_factory=dict)

    def check(self, history: bytes, string: str, where: str) -> None:
        """Raise unless `history` and `string` pair up as every earlier pair did."""
        known = self.by_history.setdefault(history, string)
        if known != string:
            raise MisalignedError(f"{where}: one AEC history, two information states ({known!r}, {string!r})")
        other = self.by_string.setdefault(string, history)
        if other != history:
            raise MisalignedError(
                f"{where}: two different AEC histories share the information state {string!r}"
            )


@dataclass
class Count:
    """What aligned games compared."""

    games: int = 0
    steps: int = 0
    chance_nodes: int = 0
    comparisons: int = 0

    def add(self, other: Count) -> None:
        """Add another count into this one."""
        self.games += other.games
        self.steps += other.steps
        self.chance_nodes += other.chance_nodes
        self.comparisons += other.comparisons


class _Side:
    """One game driven on both engines."""

    def __init__(self, name: str, seed: int, options: dict, info: InfoStates | None, game=None) -> None:
        self.name, self.seed, self.info = name, seed, info
        self.env = envs.make(name, **options)
        self.env.reset(seed=seed)
        self.n = self.env.options.num_players
        deal = Recorder(seeding.np_random(seed)[0])  # the generator reset(seed) dealt from
        self.env.game_cls(self.env.options, deal)
        self.recorder = Recorder(self.env.game.rng)
        self.env.game.rng = self.recorder  # later draws: the same numbers, now recorded
        self.game = game if game is not None else load(name, **options)
        self.state = self.game.new_initial_state()
        self.count = Count(games=1)
        self.totals = [0.0] * self.n
        self.histories = [b""] * self.n
        self.decision = 0
        self.feed(deal.draws)
        self.compare(actor=-1, action=None)

    def fail(self, why: str) -> None:
        raise MisalignedError(f"{self.name} seed {self.seed}, decision {self.decision}: {why}")

    def feed(self, draws) -> None:
        """Take the recorded draws as chance actions, checking each node's outcomes."""
        for draw, outcome in draws:
            if self.state.is_terminal() and self.env.game.over:
                break  # draws once the game is over are settled without chance nodes
            left = list(draw.cards)  # the cards not yet placed (a shuffle's)
            for action in chance_actions(draw, outcome):
                if not self.state.is_chance_node():
                    self.fail(f"the engine drew {action} but the state is no chance node")
                self.check_outcomes(draw, left)
                self.state.apply_action(action)
                if draw.is_shuffle:
                    left.remove(action)
                self.count.chance_nodes += 1
        if self.state.is_chance_node():
            self.fail("the state waits for chance that the engine did not draw")

    def check_outcomes(self, draw, left: list[int]) -> None:
        outcomes = dict(self.state.chance_outcomes())
        if draw.is_shuffle:
            expected = {v: left.count(v) / len(left) for v in set(left)}
        else:
            expected = {i: 1.0 / draw.n for i in range(draw.n)}
        if sorted(outcomes) != sorted(expected) or any(
            abs(outcomes[v] - p) > 1e-12 for v, p in expected.items()
        ):
            self.fail(f"chance outcomes {outcomes} where the cards left give {expected}")

    def step(self, action: int) -> None:
        actor = self.env.game.current_player
        start = len(self.recorder.draws)
        self.env.step(action)
        for p, agent in enumerate(self.env.possible_agents):
            self.totals[p] += self.env.rewards.get(agent, 0.0)
        self.state.apply_action(action)
        self.decision += 1
        self.count.steps += 1
        self.feed(self.recorder.draws[start:])
        self.compare(actor, action)

    def compare(self, actor: int, action: int | None) -> None:
        env, state, game = self.env, self.state, self.env.game
        over = game.over
        if state.is_terminal() != over:
            self.fail(f"terminal {state.is_terminal()} but the env's game over {over}")
        if not over and state.current_player() != game.current_player:
            self.fail(f"current player {state.current_player()}, the env's {game.current_player}")
        legal = np.flatnonzero(env.observe(env.possible_agents[game.current_player])["action_mask"])
        if not over and state.legal_actions() != legal.tolist():
            self.fail(f"legal actions {state.legal_actions()}, the env's {legal.tolist()}")
        for p, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)
            mask = obs["action_mask"] if not over else np.zeros_like(obs["action_mask"])
            expected = np.concatenate([obs["observation"], mask.astype(np.float32)])
            got = np.asarray(state.observation_tensor(p), np.float32)
            if got.shape != expected.shape or got.tobytes() != expected.tobytes():
                bad = np.flatnonzero(got != expected)[:8] if got.shape == expected.shape else "shape"
                self.fail(f"player_{p}'s observation tensor differs (at {bad})")
            own = b"" if action is None or p != actor else int(action).to_bytes(4, "little")
            seen = bytes([actor + 1]) + own + b"|" + obs["observation"].tobytes() + mask.tobytes()
            self.histories[p] = hashlib.sha256(self.histories[p] + seen).digest()
            if self.info is not None:
                where = f"{self.name} seed {self.seed}, decision {self.decision}, player_{p}"
                self.info.check(self.histories[p], state.information_state_string(p), where)
            self.count.comparisons += 1
        if over:
            returns = state.returns()
            if any(abs(r - t) > 1e-9 for r, t in zip(returns, self.totals)):
                self.fail(f"returns {returns}, the AEC rewards {self.totals}")


def align_game(
    name: str,
    seed: int,
    *,
    actions: list[int] | None = None,
    action_seed: int | None = None,
    info: InfoStates | None = None,
    game=None,
    **options,
) -> Count:
    """One game from `reset(seed)` on both engines: `actions`, else masked random actions drawn
    from `default_rng(action_seed)` (default `seed`, as the golden playthroughs do)."""
    side = _Side(name, seed, options, info, game)
    rng = np.random.default_rng(seed if action_seed is None else action_seed)
    script = iter(actions) if actions is not None else None
    env = side.env
    while not env.game.over:
        mask = env.observe(env.agent_selection)["action_mask"]
        side.step(next(script) if script is not None else random_legal(mask, rng))
    return side.count


def align_games(name: str, seeds, *, info: InfoStates | None = None, **options) -> Count:
    """`align_game` over several seeds, sharing one loaded game and one `InfoStates`."""
    info = info if info is not None else InfoStates()
    game = load(name, **options)
    total = Count()
    for seed in seeds:
        total.add(align_game(name, seed, info=info, game=game, **options))
    return total


def random_sim(name: str, num_sims: int, **options) -> None:
    """OpenSpiel's own random-simulation test (with serialisation) on the game with `options`."""
    pyspiel.random_sim_test(load(name, **options), num_sims=num_sims, serialize=True, verbose=False)


def main(argv: list[str] | None = None) -> int:
    """Align many random games of every game at every player count (and its small variant)."""
    from fowlplay.envs.small import SMALL, small

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="random games per game and player count")
    parser.add_argument(
        "--seed", type=int, default=0, help="the first game's seed [0: the golden playthrough's game first]"
    )
    parser.add_argument("--game", choices=envs.ENV_NAMES, action="append", help="only these games")
    parser.add_argument("--players", type=int, action="append", help="only these player counts")
    parser.add_argument("--small", action="store_true", help="only the small variants")
    parser.add_argument(
        "--random-sim",
        type=int,
        default=0,
        metavar="N",
        help="also run OpenSpiel's random_sim_test, N simulations",
    )
    args = parser.parse_args(argv)
    for name in args.game or envs.ENV_NAMES:
        counts = [n for n in envs.player_counts(name) if not args.players or n in args.players]
        counts = [] if args.small else counts
        cases = [(f"{n}p", {"num_players": n}) for n in counts]
        if name in SMALL:
            cases.append(("small", small(name)))
        for label, options in cases:
            started = time.perf_counter()
            if args.random_sim:
                random_sim(name, args.random_sim, **options)
                print(f"{name} {label}: random_sim_test, {args.random_sim} simulations: passed", flush=True)
            count = align_games(name, range(args.seed, args.seed + args.games), **options)
            print(
                f"{name} {label}: {count.games} games, {count.steps} steps, {count.chance_nodes} chance "
                f"nodes, {count.comparisons} comparisons aligned in {time.perf_counter() - started:.1f} s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
