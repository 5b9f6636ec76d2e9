"""The picture of a Murray the A**hole Frog table: the pond, the deck (and its Murrays), the discard
pile, every seat's swarms and tadpoles, and its hand (face down but for the cards the table saw go
in; all of a seat's own in its own view, and the hand it is looking at with a Hornet)."""

from __future__ import annotations

from fowlplay.envs.core.picture import (
    LIGHT,
    MUTED,
    TURN_EDGE,
    Canvas,
    Face,
    Hidden,
    acting_seat,
    check_viewer,
    outcome,
    plural,
)
from fowlplay.envs.murray.cards import CARD_NAMES, PILE_KINDS, VALUE, Card, card_value_sum
from fowlplay.envs.murray.rules import Decision, MurrayGame, swarm_points, tadpole_points

COLUMNS = 2
PANEL_WIDTH = 620
HEADER, MIDDLE, PANEL, FOOTER = 56, 150, 200, 48
CARD = (52, 70)
SMALL = (42, 56)
#: The card classes' colours (rules page: common flies gray, blue, green; royal flies red, purple;
#: wasps yellow), then the Hawk and Murray.
COLOURS = {
    Card.FRUIT_FLY: (209, 213, 219),
    Card.MIDGE: (209, 213, 219),
    Card.HOUSE_FLY: (147, 197, 253),
    Card.MAYFLY: (147, 197, 253),
    Card.CRANE_FLY: (134, 239, 172),
    Card.SOLDIER_FLY: (134, 239, 172),
    Card.DEER_FLY: (252, 165, 165),
    Card.DRAGONFLY: (252, 165, 165),
    Card.FIREFLY: (216, 180, 254),
    Card.ROBBER_FLY: (216, 180, 254),
    Card.PAPER_WASP: (253, 224, 71),
    Card.HORNET: (253, 224, 71),
    Card.HAWK: (180, 140, 100),
    Card.MURRAY: (74, 160, 74),
}


def card_face(card: int) -> Face:
    """An insect's name and value on its class's colour; the Hawk; Murray."""
    label = "M" if card == Card.MURRAY else str(VALUE[card])
    return Face(label, CARD_NAMES[card], COLOURS[Card(card)])


def _cards(counts: list[int]) -> list[int]:
    """Counts per card type as a sorted list of cards."""
    return [card for card, k in enumerate(counts) for _ in range(k)]


def hidden_cards(game: MurrayGame, viewer: int | None, reveal: bool = False) -> list[Hidden]:
    """Each hand as `viewer` sees it: its own face up, and of the others the cards the table saw go
    in and not leave (`game.shown`), or the whole hand it is looking at with a Hornet right now
    (every card, with `reveal`).

    The one place a Murray picture reads hands: what `MurrayObserver` gives a seat (its own hand,
    hand sizes, the public record of cards shown, and the hand a live Hornet look shows).
    """
    looking = (
        game.target
        if not game.over and game.decision_kind == Decision.HORNET_TAKE and game.player == viewer
        else None
    )
    out = []
    for seat in range(game.num_players):
        if reveal or seat in (viewer, looking):
            shown = tuple(_cards(game.hands[seat]))
        else:
            shown = tuple(_cards(game.shown[seat]))
        out.append(Hidden(shown, game.hand_sizes[seat] - len(shown)))
    return out


def hawk_text(game: MurrayGame, viewer: int | None) -> str:
    """Where `viewer` knows the Hawk to be (a spectator: only whether it was shuffled in)."""
    if not game.hawk_in:
        return "the Hawk is in the discard pile (the game cannot end yet)"
    if viewer is None:
        return "the Hawk has been shuffled in"
    if game.hands[viewer][Card.HAWK]:
        return "the Hawk is in your hand"
    if game.hawk_seen[viewer]:
        return "the Hawk is out of the deck: the player whose turn it is holds it"
    return "the Hawk has been shuffled in; you have not held it since"


def draw(game: MurrayGame, viewer: int | None = None, reveal: bool = False):
    """The table as a Pillow image: as a spectator sees it (viewer None), as seat `viewer` sees it,
    or with every hand face up (`reveal`)."""
    viewer = check_viewer(game, viewer)
    opts, n = game.options, game.num_players
    rows = -(-n // COLUMNS)
    canvas = Canvas(COLUMNS * PANEL_WIDTH + 20, HEADER + MIDDLE + rows * (PANEL + 10) + FOOTER)
    who = "umpire's view" if reveal else ("spectator" if viewer is None else f"player_{viewer}'s view")
    in_play = not game.over and game.decision_kind == Decision.MURRAY
    murrays = opts.murray_count - game.discard[Card.MURRAY] - in_play
    canvas.header(
        "Murray the A**hole Frog",
        f"turn {game.turn} (at most {opts.max_turns}); {hawk_text(game, None if reveal else viewer)}; {who}",
    )
    acting = acting_seat(game)

    # ----- the middle: deck, pond, discard pile, the decision
    y = HEADER + 30
    canvas.pile((24, y), len(game.deck), size=CARD, caption="deck")
    canvas.text((24, y + CARD[1] + 22), f"{plural(murrays, 'Murray')} in it", 12, MUTED)
    x = 120
    canvas.text((x, y - 14), "pond", 12, MUTED)
    canvas.card_row((x, y), [card_face(c) for c in game.pond], 200, CARD)
    x = 320
    pile = game.discard
    canvas.text((x, y - 14), f"discard pile: {plural(sum(pile), 'card')}", 12, MUTED)
    px = x
    for card in range(PILE_KINDS):
        if pile[card]:
            canvas.card((px, y), card_face(card), SMALL)
            canvas.text((px + SMALL[0] / 2, y + SMALL[1] + 4), f"x{pile[card]}", 12, LIGHT, "ma")
            px += SMALL[0] + 6
    y2 = y + CARD[1] + 24
    if game.over:
        ending = game.end_reason or "turn cap reached"
        # The winner follows from the penalties of the hands left, which stay face down here.
        result = f": {outcome(game)}" if reveal else "; the hands left decide the winner"
        canvas.text((120, y2), f"Game over ({ending}){result}", 17, TURN_EDGE, bold=True)
    else:
        line = f"player_{acting} to act: {game.decision().replace('_', ' ')}"
        if game.target >= 0:
            line += f", target player_{game.target}"
        if game.robber_left:
            line += f"; the Robber Fly still discards {game.robber_left}"
        canvas.text((120, y2), line, 17, TURN_EDGE, bold=True)

    # ----- the seats
    hands = hidden_cards(game, viewer, reveal)
    for seat in range(n):
        row, column = divmod(seat, COLUMNS)
        x0 = 10 + column * PANEL_WIDTH
        y0 = HEADER + MIDDLE + row * (PANEL + 10)
        rect = (x0, y0, x0 + PANEL_WIDTH - 10, y0 + PANEL)
        table = sum(swarm_points(s, opts) + card_value_sum(s) for s in game.swarms[seat])
        table += tadpole_points(game.tadpoles[seat])
        facts = f"{plural(game.tadpoles[seat], 'tadpole')}   points on the table {table}"
        top = canvas.seat_panel(rect, seat, f"player_{seat}", facts, seat == acting, viewer)
        hand = hands[seat]
        canvas.text((x0 + 14, top + 2), f"hand: {plural(game.hand_sizes[seat], 'card')}", 12, MUTED)
        faces = [card_face(c) for c in hand.shown] + [None] * hand.face_down
        canvas.card_row((x0 + 14, top + 18), faces, PANEL_WIDTH - 44, CARD, gap=4)
        _swarm_row(canvas, game, seat, x0, top + 18 + CARD[1] + 8)
    canvas.footer(game.log)
    return canvas.image


def _swarm_row(canvas, game: MurrayGame, seat: int, x0: int, sy: int) -> None:
    """`seat`'s swarms in a row of its panel (the one being picked ringed), as many as fit."""
    swarms = game.swarms[seat]
    canvas.text((x0 + 14, sy), "swarms:" if swarms else "no swarms", 12, MUTED)
    sx = x0 + 70
    chosen = game.chosen if not game.over else (-1, -1)
    for slot, swarm in enumerate(swarms):
        kinds = [(card, k) for card, k in enumerate(swarm) if k]
        width = len(kinds) * (SMALL[0] + 4) + 8
        if sx + width > x0 + PANEL_WIDTH - 20:
            canvas.text((sx, sy + 20), f"+{len(swarms) - slot} more", 12, LIGHT)
            break
        ring = TURN_EDGE if chosen == (seat, slot) else MUTED
        canvas.box((sx, sy - 4, sx + width, sy + SMALL[1] + 18), None, ring, width=2, radius=6)
        for i, (card, k) in enumerate(kinds):
            cx = sx + 6 + i * (SMALL[0] + 4)
            canvas.card((cx, sy), card_face(card), SMALL)
            canvas.text((cx + SMALL[0] / 2, sy + SMALL[1] + 1), f"x{k}", 12, LIGHT, "ma")
        sx += width + 10
