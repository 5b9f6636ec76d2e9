"""Murray the A**hole Frog: what each player may know, and the re-deal that keeps it.

The re-deal (`resample_hidden`) is checked three independent ways: every world it returns is
replayed card by card against the events and the viewer's view (`check_world`, on full games); on
a tiny variant every world lies in the support of an honest rejection sampler, and two real worlds
the viewer cannot tell apart re-deal identically; a deliberately broken re-deal (the old one, which
forgets the cards the table saw go into a hand) is caught by the same rejection sampler.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from fowlplay.envs.core import testing
from fowlplay.envs.core.cards import shuffled
from fowlplay.envs.murray import Card, MurrayGame, MurrayOptions, env
from fowlplay.envs.murray.cards import HAND_KINDS
from fowlplay.envs.murray.events import Event
from fowlplay.envs.murray.observation import HawkStatus, MurrayObserver
from fowlplay.envs.murray.posterior import HAWK_DRAWN_OR_DECK, hawk_slots
from fowlplay.envs.murray.rules import Decision

from tests.envs.tiny_variants import SUPPORT_ONLY, TINY_PLAYERS

C = Card
FILLER = [C.FRUIT_FLY, C.HOUSE_FLY, C.CRANE_FLY]
HAWK = int(C.HAWK)
#: What re-dealing may change; everything else in `state_dict` is public or the viewer's own.
REDEALT = {"hands", "deck", "last_passed", "last_received", "seen", "hawk_seen"}


def tiny_options() -> MurrayOptions:
    return MurrayOptions(num_players=TINY_PLAYERS["murray_frog_v0"], **SUPPORT_ONLY["murray_frog_v0"])


def act(game: MurrayGame, block: str, index: int = 0) -> None:
    a = game.layout[block].start + index
    assert game.legal_mask()[a], f"{game.action_name(a)} is not legal in '{game.decision()}'"
    game.apply(a)


def world(game: MurrayGame) -> str:
    return json.dumps(game.state_dict(), sort_keys=True, default=int)


# ----- an independent check of a re-dealt world --------------------------------------------------
def viewer_events(game: MurrayGame, viewer: int) -> list[tuple]:
    """The events with what `viewer` did not see blanked out."""
    n = game.num_players
    out = []
    for ev in game.events:
        kind = ev[0]
        if (kind == Event.DRAW and ev[1] != viewer) or (
            kind == Event.PASS and viewer not in (ev[1], (ev[1] + 1) % n)
        ):
            ev = ev[:2]
        elif kind == Event.LOOK and ev[1] != viewer:
            ev = ev[:3]
        out.append(ev)
    return out


def check_world(before: MurrayGame, after: MurrayGame, viewer: int) -> None:
    """`after` is a world `viewer` cannot tell from `before`, and its history is a real game's."""
    n = before.num_players
    was, now = before.state_dict(), after.state_dict()
    assert {k for k in was if was[k] != now[k]} <= REDEALT
    for key in ("last_passed", "last_received", "seen", "hawk_seen"):
        assert was[key][viewer] == now[key][viewer], key
    assert before.hands[viewer] == after.hands[viewer]
    assert viewer_events(before, viewer) == viewer_events(after, viewer)
    assert after.start[0][viewer] == before.start[0][viewer] and after.start[2] == before.start[2]
    # Replay the new history card by card: every move possible, every rule kept, same end.
    hands = [list(h) for h in after.start[0]]
    deck, pile = list(after.start[1]), None
    passed_last = [-1] * n
    seen = [[None] * n for _ in range(n)]
    held_hawk = [q == after.start[2] for q in range(n)]
    player, passed = 0, False

    def draw(card: int) -> None:
        if pile is None:
            assert deck.pop() == card
        else:
            assert pile[card] > 0
            pile[card] -= 1

    for ev in after.events:
        kind = ev[0]
        if kind == Event.TURN:
            player, passed = ev[1], False
        elif kind == Event.DRAW:
            draw(ev[2])
            hands[ev[1]][ev[2]] += 1
            held_hawk[ev[1]] |= ev[2] == HAWK
        elif kind == Event.REVEAL:
            draw(ev[1])
        elif kind == Event.RESHUFFLE:
            assert not deck
            pile = list(ev[1])
        elif kind == Event.OUT:
            assert hands[ev[1]][ev[2]] > 0
            hands[ev[1]][ev[2]] -= 1
            if ev[1] == player and not passed and hands[player][HAWK]:
                assert sum(hands[player]) >= 2, "a Hawk holder was left with the Hawk alone"
        elif kind == Event.IN:
            hands[ev[1]][ev[2]] += 1
        elif kind == Event.SWAP:
            assert hands[ev[1]][ev[2]] > 0, "a swap gave a card the hand did not hold"
            hands[ev[1]][ev[2]] -= 1
            hands[ev[1]][ev[3]] += 1
        elif kind == Event.TAKE:
            p, victim, card, hornet = ev[1:]
            assert hands[victim][card] > 0
            hands[victim][card] -= 1
            hands[p][card] += 1
            held_hawk[p] |= card == HAWK
            if hornet:
                seen[p][victim] = list(hands[victim])
        elif kind == Event.PASS:
            p, card = ev[1], ev[2]
            assert hands[p][card] > 0 and (card == HAWK or not hands[p][HAWK]), "the Hawk must be passed"
            hands[p][card] -= 1
            hands[(p + 1) % n][card] += 1
            passed_last[p] = card
            held_hawk[(p + 1) % n] |= card == HAWK
            passed |= p == player
        elif kind == Event.LOOK:
            assert tuple(hands[ev[2]]) == tuple(ev[3])
    assert hands == after.hands
    if pile is None:
        assert deck == after.deck
    else:
        assert sorted(after.deck) == [t for t, c in enumerate(pile) for _ in range(c)]
    assert after.last_passed == passed_last
    assert after.last_received == [passed_last[(q - 1) % n] for q in range(n)]
    assert after.seen == seen and after.hawk_seen == held_hawk


@pytest.mark.parametrize("n", [3, 5])
def test_every_redealt_world_is_a_history_the_viewer_cannot_tell_apart(n):
    e = env(num_players=n)
    observer = e.observer
    rng = np.random.default_rng(n)
    changed = 0
    for seed in range(3):
        e.reset(seed=seed)
        for step, (_, obs) in enumerate(_play(e, rng)):
            if step % 12:
                continue
            game = e.game
            for viewer in range(n):
                twin = game.clone()
                twin.resample_hidden(viewer, np.random.default_rng(step))
                check_world(game, twin, viewer)
                assert np.array_equal(observer.encode(game, viewer), observer.encode(twin, viewer))
                assert observer.view(game, viewer) == observer.view(twin, viewer)
                changed += world(twin) != world(game)
    assert changed > 20  # the re-deal does change what the viewer cannot see


#: Games whose re-deal once failed, each (deal seed, every action id as played, the viewer, the
#: number of events). A league game (a trained agent against ISMCTS): the re-deal that explored only
#: after 30 calm fresh replays, then always with chance 0.1, found no world for player_0 from most
#: seeds (its hidden passes had carried seen Mayflies back and forth, and the first deck's last card
#: was one). A baseline game: a hidden pass had to keep the seen Mayfly its hand played 50 events
#: later, which no repair proposed, so player_2's re-deal failed at every decision from here on.
HARD_GAMES = {
    "league": (1286656552236609, [
        12, 2, 46, 144, 173, 45, 46, 190, 137, 171, 130, 243, 132, 231, 248, 231, 249, 134, 239, 253,
        132, 231, 249, 231, 245, 134, 239, 247, 180, 6, 3, 151, 190, 207, 165, 173, 34, 34, 190, 173,
        138, 180, 33, 156, 34, 173, 181, 34, 132, 231, 244, 231, 245, 149, 133, 190, 130, 241, 171,
        134, 239, 247, 180, 131, 215, 244, 165, 8, 190, 33, 131, 232, 247, 144, 174, 131, 232, 247,
        181, 19, 10, 10, 173, 62, 141, 180, 48, 48, 168, 47, 190,
    ], 0, 150),
    "kept pass": (1180, [
        13, 1, 43, 46, 141, 190, 16, 141, 7, 129, 239, 172, 186, 173, 26, 1, 46, 132, 223, 248, 224,
        244, 151, 190, 45, 46, 146, 190, 199, 208, 48, 139, 190, 208, 149, 174, 180, 38, 132, 231, 245,
        223, 249, 158, 181, 37, 138, 173, 37, 183, 132, 223, 249, 231, 248, 153, 34, 179, 37, 138, 173,
        38, 178, 134, 239, 248, 37, 135, 178, 34, 153, 179, 6, 48, 135, 190,
    ], 2, 132),
}  # fmt: skip


@pytest.mark.parametrize("name", list(HARD_GAMES))
def test_games_whose_redeal_once_failed_redeal_for_every_seed(name):
    deal, actions, viewer, events = HARD_GAMES[name]
    e = env(num_players=3)
    e.reset(seed=deal)
    for action in actions:
        e.step(action)
    game = e.game
    assert len(game.events) == events and not game.over
    for seed in range(3):
        twin = e.clone()
        twin.resample_hidden(f"player_{viewer}", seed)
        check_world(game, twin.game, viewer)
        assert np.array_equal(e.observer.encode(game, viewer), e.observer.encode(twin.game, viewer))


def _play(e, rng):
    from fowlplay.envs.core.testing import play

    return play(e, lambda a, o: int(rng.choice(np.flatnonzero(o["action_mask"]))))


# ----- the honest rejection sampler on the tiny variant ------------------------------------------
def _history(game: MurrayGame, observer: MurrayObserver, viewer: int) -> bytes:
    mask = game.legal_mask().tobytes() if not game.over and game.player == viewer else b""
    return observer.encode(game, viewer).tobytes() + mask


class Posterior:
    """Worlds consistent with one viewer's history of a tiny game, by rejection sampling.

    A trajectory of random moves is played from one seed; other seeds replay the same action ids
    and keep the runs in which the viewer's observation and mask match after every step. A face-down
    pass between two other players is the one action the viewer does not see
    (`MurrayGame.hidden_action`): the replay passes a random card of its own world instead.
    """

    def __init__(self, options: MurrayOptions, seed: int, action_seed: int, runs: int) -> None:
        self.options, self.observer = options, MurrayObserver(options)
        game = MurrayGame(options, np.random.default_rng(seed))
        rng = np.random.default_rng(action_seed)
        self.states, self.actions = [game.clone()], []
        while not game.over:
            legal = game.legal_actions()
            a = legal[int(rng.integers(len(legal)))]
            self.actions.append(
                (game.player, a, [game.hidden_action(v, a) for v in range(options.num_players)])
            )
            game.apply(a)
            self.states.append(game.clone())
        # worlds[viewer][k]: world json -> [runs kept, one game standing in it], after k actions
        n = options.num_players
        self.worlds = [[defaultdict(lambda: [0, None]) for _ in self.states] for _ in range(n)]
        targets = [[_history(s, self.observer, v) for s in self.states] for v in range(n)]
        pick = np.random.default_rng(0)
        for seed in range(runs):
            dealt = MurrayGame(options, np.random.default_rng(10_000 + seed))
            for viewer in range(n):
                if _history(dealt, self.observer, viewer) == targets[viewer][0]:
                    self._replay(dealt.clone(), viewer, targets[viewer], pick)

    def _replay(self, game: MurrayGame, viewer: int, target: list[bytes], pick: np.random.Generator) -> None:
        out = self.worlds[viewer]
        self._keep(out[0], game)
        for k, (player, a, hidden) in enumerate(self.actions):
            if game.over or game.player != player:
                return
            mask = game.legal_mask()
            if hidden[viewer]:
                passes = [x for x in np.flatnonzero(mask) if x in game.layout["pass"]]
                a = int(passes[int(pick.integers(len(passes)))])
            elif not mask[a]:
                return
            game.apply(a)
            if _history(game, self.observer, viewer) != target[k + 1]:
                return
            self._keep(out[k + 1], game)

    @staticmethod
    def _keep(bucket: dict, game: MurrayGame) -> None:
        entry = bucket[world(game)]
        entry[0] += 1
        if entry[1] is None:
            entry[1] = game.clone()


@pytest.fixture(scope="module")
def posteriors() -> list[Posterior]:
    # Two tiny games (seeded so that they use pond swaps, passes, a Hornet look and the reshuffle).
    return [Posterior(tiny_options(), seed, seed, runs=12_000) for seed in (100, 102)]


def _checked_points(post: Posterior):
    """(k, viewer) where the rejection sample is large enough to hold the whole support."""
    for viewer, worlds in enumerate(post.worlds):
        for k in range(1, len(post.actions)):
            kept = worlds[k]
            if kept and sum(c for c, _ in kept.values()) >= 8 * len(kept):
                yield k, viewer


def test_tiny_games_exercise_the_hidden_mechanics(posteriors):
    kinds = {ev[0] for post in posteriors for ev in post.states[-1].events}
    assert {Event.PASS, Event.IN, Event.TAKE, Event.LOOK, Event.RESHUFFLE} <= kinds
    assert sum(len(list(_checked_points(post))) for post in posteriors) >= 10


def test_redealt_worlds_lie_in_the_rejection_support(posteriors):
    for post in posteriors:
        for k, viewer in _checked_points(post):
            support = post.worlds[viewer][k]
            for seed in range(60):
                twin = post.states[k].clone()
                twin.resample_hidden(viewer, np.random.default_rng(seed))
                assert world(twin) in support, (k, viewer, seed)


def test_the_redeal_depends_only_on_what_the_viewer_knows(posteriors):
    pairs = 0
    for post in posteriors:
        for viewer, worlds in enumerate(post.worlds):
            for k, kept in enumerate(worlds):
                games = [g for _, g in kept.values()]
                if len(games) < 2 or games[0].over:
                    continue
                pairs += 1
                results = set()
                for game in games:
                    twin = game.clone()
                    twin.resample_hidden(viewer, np.random.default_rng(k))
                    results.add(world(twin))
                assert len(results) == 1, (k, viewer)
    assert pairs >= 10


def old_redeal(game: MurrayGame, player: int, rng: np.random.Generator) -> None:
    """The re-deal before the table's record: other hands and the deck dealt afresh, sizes kept."""
    others = [q for q in range(game.num_players) if q != player]
    pool = [c for c in game.deck if c != C.MURRAY]
    for q in others:
        pool.extend(t for t, c in enumerate(game.hands[q]) for _ in range(c))
    pool = shuffled(pool, rng)
    for q in others:
        hand = [0] * HAND_KINDS
        for card in pool[: game.hand_sizes[q]]:
            hand[card] += 1
        pool = pool[game.hand_sizes[q] :]
        game.hands[q] = hand
    game.deck = shuffled(pool + [C.MURRAY] * game.deck.count(C.MURRAY), rng)


def test_a_redeal_that_forgets_what_the_table_saw_is_caught(posteriors):
    outside = 0
    for post in posteriors:
        for k, viewer in _checked_points(post):
            for seed in range(20):
                twin = post.states[k].clone()
                old_redeal(twin, viewer, np.random.default_rng(seed))
                outside += world(twin) not in post.worlds[viewer][k]
    assert outside > 0


# ----- the Hawk's whereabouts ---------------------------------------------------------------------
def test_hawk_draws_count_the_draws_a_redeal_may_give_the_hawk():
    e = env(num_players=4)
    rng = np.random.default_rng(4)
    seen_unseen = 0
    for seed in range(6):
        e.reset(seed=seed)
        for _ in _play(e, rng):
            game = e.game
            for viewer in range(4):
                if MurrayObserver._hawk_status(game, viewer) != HawkStatus.UNSEEN:
                    continue
                slots, known = hawk_slots(game, viewer)
                assert known == HAWK_DRAWN_OR_DECK and len(slots) == game.hawk_draws[viewer]
                seen_unseen += 1
    assert seen_unseen > 50


def test_once_drawn_the_hawk_is_always_with_the_turn_player():
    e = env(num_players=3)
    rng = np.random.default_rng(3)
    for seed in range(10):
        e.reset(seed=seed)
        for _ in _play(e, rng):
            game = e.game
            holders = [q for q in range(3) if game.hands[q][C.HAWK]]
            if holders:
                turn_player = (game.player + (game.decision_kind == Decision.DISCARD)) % 3
                assert holders == [turn_player]
                assert game.hand_sizes[turn_player] >= 2


def test_the_redeal_puts_an_unseen_hawk_in_a_possible_draw_or_the_deck():
    game = MurrayGame(MurrayOptions(), np.random.default_rng(0))
    game.set_table(hands=[FILLER * 2, FILLER, FILLER], pond=FILLER, deck=[C.MIDGE] * 6 + [C.HAWK, C.MAYFLY],
                   hawk_in=True, draws=0)  # fmt: skip
    # the deck's order is hidden: player_0 holds no Hawk, so for player_2 it may be in player_1's
    # two face-down draws or anywhere in the deck
    act(game, "pass", C.FRUIT_FLY)
    assert game.player == 1 and game.hawk_draws[2] == 2 and game.hawk_draws[1] == 0
    places = defaultdict(int)
    for seed in range(400):
        twin = game.clone()
        twin.resample_hidden(2, np.random.default_rng(seed))
        places["hand" if twin.hands[1][C.HAWK] else "deck"] += 1
        assert not twin.hands[0][C.HAWK]
    # two draws and six places in the deck, each equally likely: the Hawk is in hand a quarter of the time
    assert 70 < places["hand"] < 130


# ----- the table's record of cards seen going into hands -----------------------------------------
def test_the_table_sees_cards_go_into_hands_from_the_pond_swarms_and_takes():
    game = MurrayGame(MurrayOptions(), np.random.default_rng(0))
    game.set_table(hands=[[C.MIDGE, C.DRAGONFLY, C.FIREFLY, C.DEER_FLY, C.HORNET, C.CRANE_FLY], [C.MAYFLY] * 3, FILLER],
                   pond=[C.ROBBER_FLY, C.HOUSE_FLY, C.SOLDIER_FLY], deck=[C.MIDGE] * 8,
                   swarms=[[], [[C.HOUSE_FLY] * 3]], draws=0)  # fmt: skip
    observer = MurrayObserver(game.options)

    def shown(viewer: int, rel: int) -> dict:
        block = observer.decode(observer.encode(game, viewer))["table_seen"].reshape(3, HAND_KINDS)[rel]
        copies = [*game.options.counts, 1]
        return {CARD_ID[t]: round(x * copies[t]) for t, x in enumerate(block) if x}

    act(game, "swap", C.MIDGE * 3 + 2)  # my Midge for the pond's Robber Fly (pond slots are sorted)
    assert shown(0, 0) == {"ROBBER_FLY": 1} and shown(1, 2) == {"ROBBER_FLY": 1}  # everyone saw it
    act(game, "ability", 1)  # Dragonfly: take the pond's House Fly
    act(game, "pond", [c for c in game.pond].index(C.HOUSE_FLY))
    act(game, "ability", 2)  # Firefly: take a House Fly from player_1's swarm
    act(game, "swarm", 1 * game.options.max_swarms)
    act(game, "take", C.HOUSE_FLY)
    assert shown(2, 1) == {"HOUSE_FLY": 2, "ROBBER_FLY": 1}
    act(game, "ability", 0)  # Deer Fly on player_1: the card taken is shown
    act(game, "player", 0)
    assert shown(2, 1) == {"HOUSE_FLY": 2, "ROBBER_FLY": 1, "MAYFLY": 1}
    assert "takes a Mayfly at random from player_1" in game.log[0]
    act(game, "ability", 5)  # Hornet on player_2: looks, and takes a Crane Fly (shown)
    act(game, "player", 1)
    act(game, "take", C.CRANE_FLY)
    assert shown(1, 2) == {"HOUSE_FLY": 2, "ROBBER_FLY": 1, "MAYFLY": 1, "CRANE_FLY": 1}
    assert not shown(1, 1)  # the victims' records lose nothing they were not seen to hold
    # cards seen leaving face up leave the record; a face-down pass changes nothing in it
    act(game, "create", _combo(C.HOUSE_FLY, C.HOUSE_FLY, C.MAYFLY))
    assert shown(1, 2) == {"ROBBER_FLY": 1, "CRANE_FLY": 1}
    act(game, "pass", C.ROBBER_FLY)
    assert shown(1, 2) == {"ROBBER_FLY": 1, "CRANE_FLY": 1} and game.shown[1] == [0] * HAND_KINDS


CARD_ID = {int(c): c.name for c in Card}


def _combo(*cards: int) -> int:
    from fowlplay.envs.murray.cards import SWARM_COMBOS

    return SWARM_COMBOS.index(tuple(sorted(cards)))


def test_a_card_the_table_saw_stays_in_its_hand_in_every_redeal_until_seen_leaving():
    game = MurrayGame(MurrayOptions(), np.random.default_rng(0))
    game.set_table(hands=[[*FILLER, C.MIDGE], [C.MAYFLY, C.MIDGE, C.SOLDIER_FLY], [C.HOUSE_FLY] * 3],
                   pond=[C.FIREFLY, C.HOUSE_FLY, C.SOLDIER_FLY], deck=[C.DEER_FLY, C.MIDGE] * 6, draws=0)  # fmt: skip
    act(game, "pass", C.MIDGE)  # player_0's turn ends; player_1 draws two
    act(game, "swap", C.MAYFLY * 3 + 2)  # player_1 takes the pond's Firefly
    act(game, "pass", C.MIDGE)
    passed = set()
    for seed in range(50):
        twin = game.clone()
        twin.resample_hidden(0, np.random.default_rng(seed))
        assert twin.hands[1][C.FIREFLY] == 1  # seen going in, not seen leaving
        assert twin.last_passed[0] == C.MIDGE and twin.last_received[1] == C.MIDGE  # player_0's own pass
        passed.add(twin.last_passed[1])
    assert len(passed) > 1  # player_0 did not see what player_1 passed
    for seed in range(20):  # player_2 did, and its re-deals keep it
        twin = game.clone()
        twin.resample_hidden(2, np.random.default_rng(seed))
        assert twin.last_passed[1] == twin.last_received[2] == C.MIDGE


def test_views_hide_other_hands_and_the_deck():
    e = env(num_players=3)
    e.reset(seed=5)
    rng = np.random.default_rng(5)
    for step, _ in enumerate(_play(e, rng)):
        if step == 40:
            break
    game = e.game
    text = e.observer.view(game, 0)
    assert "player_0's view" in text and "player_1: hand" in text and f"{game.hand_sizes[1]} card" in text
    twin = game.clone()
    twin.hands[1], twin.hands[2] = twin.hands[2], twin.hands[1]
    twin.deck.reverse()
    if game.hand_sizes[1] == game.hand_sizes[2]:
        assert e.observer.view(twin, 0) == text


# ----- the core's posterior harness, with the viewer-blind passes replayed honestly ---------------
def _honest_replay(pick: np.random.Generator):
    """`envs.core.testing.replay_matches`, except that an action the viewer does not see (a
    face-down pass between two others, `MurrayGame.hidden_action`) is replayed as a random legal
    action of its block: replaying its id would tell the sampler the card the viewer never saw."""

    def replay_matches(env, seed: int, history) -> bool:
        env.reset(seed=seed)
        viewer = env.possible_agents.index(history.viewer)
        if testing._seen_by(env, history.viewer) != history.views[0]:
            return False
        for action, actor, seen in zip(history.actions, history.actors, history.views[1:]):
            if env.agent_selection != actor or env.game.over:
                return False
            mask = env.observe(actor)["action_mask"]
            if env.game.hidden_action(viewer, action):
                passes = [a for a in np.flatnonzero(mask) if a in env.game.layout["pass"]]
                action = int(passes[int(pick.integers(len(passes)))])
            elif not mask[action]:
                return False
            env.step(action)
            if testing._seen_by(env, history.viewer) != seen:
                return False
        return True

    return replay_matches


def _make_tiny():
    return env(num_players=TINY_PLAYERS["murray_frog_v0"], **SUPPORT_ONLY["murray_frog_v0"])


def _old_redeal_env(e, agent: str, seed: int) -> None:
    old_redeal(e.game, e.possible_agents.index(agent), np.random.default_rng(seed))


@pytest.mark.parametrize(
    ("game", "cut", "viewer"),
    [(2, 4, "player_1"), (1, 2, "player_0"), (2, 3, "player_0"), (1, 4, "player_0")],
)
def test_the_core_harness_finds_every_redeal_in_the_support(monkeypatch, game, cut, viewer):
    monkeypatch.setattr(testing, "replay_matches", _honest_replay(np.random.default_rng(game)))
    e = _make_tiny()
    actions = testing.random_actions(e, seed=game, action_seed=1000 + game)[:cut]
    history = testing.record_history(e, game, actions, viewer)
    posterior = testing.posterior_worlds(_make_tiny, history, range(10_000, 30_000), want=200)
    assert sum(posterior.values()) >= 100 and len(posterior) <= 12  # small enough to hold the support
    redealt = testing.compare_worlds(posterior, testing.resampled_worlds(e, viewer, 200, seed=game))
    assert not redealt.outside, str(redealt)
    broken = testing.resampled_worlds(e, viewer, 200, seed=game, sampler=_old_redeal_env)
    assert testing.compare_worlds(posterior, broken).outside  # the old re-deal is caught
