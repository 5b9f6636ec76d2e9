"""Murray the A**hole Frog in words: action names and the umpire's table (`MurrayGame.action_name`
and `render`), and the names the game log gives the swarms a player creates."""

from __future__ import annotations

from fowlplay.envs.murray.cards import ABILITY_CARDS, CARD_NAMES, COMMON_FLIES, NUM_INSECTS, SWARM_COMBOS

#: The cards of each `SWARM_COMBOS` entry by name, as the game log writes them.
COMBO_NAMES = tuple(", ".join(CARD_NAMES[c] for c in combo) for combo in SWARM_COMBOS)


def names(cards) -> str:
    """Card types by name, comma-separated."""
    return ", ".join(CARD_NAMES[c] for c in cards)


def _seat_at(game, relative: int) -> int:
    return (game.player + relative) % game.num_players


def action_text(game, action: int) -> str:
    """Human-readable name of an action id (`MurrayGame.action_name`)."""
    block, i = game.layout.decode(action)
    s = game.options.max_swarms
    if block == "create":
        return f"create a swarm: {names(SWARM_COMBOS[i])}"
    if block == "add":
        return f"add a {CARD_NAMES[i % NUM_INSECTS]} to my swarm {i // NUM_INSECTS}"
    if block == "ability":
        return f"use a {CARD_NAMES[ABILITY_CARDS[i]]}"
    if block == "swap":
        card, slot = divmod(i, game.options.pond_size)
        return f"swap a {CARD_NAMES[card]} with pond slot {slot}"
    if block == "fly_draw":
        return f"discard a {CARD_NAMES[COMMON_FLIES[i]]} and draw two"
    if block == "pass":
        return f"pass a {CARD_NAMES[i]} left"
    if block in ("murray", "swarm"):
        what = "Murray on" if block == "murray" else "pick"
        return f"{what} swarm {i % s} of player_{_seat_at(game, i // s)}"
    if block == "player":
        return f"target player_{_seat_at(game, i + 1)}"
    if block == "pond":
        return f"take pond slot {i}"
    if block in ("take", "discard"):
        return f"{block} a {CARD_NAMES[i]}"
    return block.replace("_", " ")


def table_text(game) -> str:
    """The table as an umpire sees it (`MurrayGame.render`)."""
    lines = [
        f"Murray the A**hole Frog - turn {game.turn}, deck {len(game.deck)} cards"
        + (", the Hawk is shuffled in" if game.hawk_in else ", the Hawk is the discard pile"),
        "  pond: " + (names(game.pond) or "-"),
    ]
    for p in range(game.num_players):
        hand = [t for t, c in enumerate(game.hands[p]) for _ in range(c)]
        swarms = "; ".join(names([t for t, c in enumerate(s) for _ in range(c)]) for s in game.swarms[p])
        mark = f"  (to act: {game.decision()})" if p == game.player and not game.over else ""
        lines.append(
            f"  player_{p}: score {game.score_breakdown(p)['total']:>3}  tadpoles {game.tadpoles[p]}  "
            f"hand [{names(hand)}]  swarms [{swarms or '-'}]{mark}"
        )
    if game.over:
        lines.append("  game over: " + (game.end_reason or "truncated"))
    if game.log:
        lines.append("  last: " + "; ".join(game.log))
    return "\n".join(lines)
