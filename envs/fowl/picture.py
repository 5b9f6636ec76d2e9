"""The picture of a Murder Most Fowl table: every seat's grid of birds and wiles, its discard pile
(in order, the top on the right), its hand (face down but for the cards the table saw go in; all of a seat's own in its
own view), scores, recorded types, and who is out."""

from __future__ import annotations

from fowlplay.envs.core.picture import (
    BAR,
    INK,
    LIGHT,
    MUTED,
    PANEL_EDGE,
    TURN_EDGE,
    WARN,
    Canvas,
    Face,
    Hidden,
    acting_seat,
    check_viewer,
    font,
    outcome,
    plural,
)
from fowlplay.envs.fowl.rules import EMPTY, TYPE_NAMES, FowlGame, Wile

COLUMNS = 2
PANEL_WIDTH = 620
HEADER, STRIP, FOOTER = 56, 44, 48
CELL = 28
CARD = (44, 62)
SMALL = (40, 54)
#: One colour per bird type, in `TYPE_NAMES` order.
TYPE_COLOURS = (
    (253, 224, 71),
    (134, 239, 172),
    (147, 197, 253),
    (253, 164, 175),
    (196, 181, 253),
    (253, 186, 116),
)
WILE_COLOUR, MURDER_COLOUR = (71, 85, 105), (153, 27, 27)
WILE_SHORT = {Wile.BLOCKING: "Blk", Wile.DISCARD: "Dsc", Wile.SWAP: "Swp", Wile.MURDER: "Mur"}


def card_face(game: FowlGame, card: int) -> Face:
    """A card's face: a bird's type and value on its type's colour, or a wile's name."""
    first_wile = game.options.num_birds
    if card >= first_wile:
        kind = Wile(card - first_wile)
        colour = MURDER_COLOUR if kind == Wile.MURDER else WILE_COLOUR
        return Face(kind.name.title(), "wile", colour, LIGHT)
    kind, value = divmod(card, game.options.max_value)
    return Face(str(value + 1), TYPE_NAMES[kind], TYPE_COLOURS[kind % len(TYPE_COLOURS)])


def hidden_cards(game: FowlGame, viewer: int | None, reveal: bool = False) -> list[Hidden]:
    """Each hand as `viewer` sees it: a seat's own hand face up, and of the others only the cards the
    whole table saw go in (`game.known`) (every card, with `reveal`).

    The one place a Fowl picture reads hands: what `FowlObserver` gives a seat (its own hand, and
    each other hand's size and seen cards).
    """
    out = []
    for seat, hand in enumerate(game.hands):
        shown = tuple(sorted(hand)) if reveal or seat == viewer else tuple(sorted(game.known[seat]))
        out.append(Hidden(shown, len(hand) - len(shown)))
    return out


def panel_height(game: FowlGame) -> int:
    """Height of one seat's panel: its name line and its grid."""
    return 34 + game.options.grid_size * CELL + 26


def draw(game: FowlGame, viewer: int | None = None, reveal: bool = False):
    """The table as a Pillow image: as a spectator sees it (viewer None), as seat `viewer` sees it,
    or with every hand face up (`reveal`)."""
    viewer = check_viewer(game, viewer)
    n = game.num_players
    rows = -(-n // COLUMNS)
    height = panel_height(game)
    canvas = Canvas(COLUMNS * PANEL_WIDTH + 20, HEADER + STRIP + rows * (height + 10) + FOOTER)
    who = "umpire's view" if reveal else ("spectator" if viewer is None else f"player_{viewer}'s view")
    canvas.header(
        "Murder Most Fowl",
        f"turn {game.turn}; deck {plural(len(game.deck), 'card')}; "
        f"escalation {'yes: any Murder succeeds' if game.escalated else 'no'}; {who}",
    )
    acting = acting_seat(game)
    y = HEADER + 12
    if game.over:
        canvas.text((16, y), "Game over: " + outcome(game), 18, TURN_EDGE, bold=True)
    else:
        doing = game.decision()
        if game.pending_card != EMPTY:
            doing += f" for {game.card_name(game.pending_card)}"
            if game.pending_cell != EMPTY:
                doing += f" (on {game.cell_name(game.pending_cell)})"
        canvas.text((16, y), f"player_{acting} to act: {doing}", 17, TURN_EDGE, bold=True)
    _legend(canvas, game, y)
    hands = hidden_cards(game, viewer, reveal)
    for seat in range(n):
        row, column = divmod(seat, COLUMNS)
        x0 = 10 + column * PANEL_WIDTH
        y0 = HEADER + STRIP + row * (height + 10)
        _seat(canvas, game, seat, hands[seat], (x0, y0, x0 + PANEL_WIDTH - 10, y0 + height), acting, viewer)
    canvas.footer(game.log)
    return canvas.image


def _seat(canvas: Canvas, game: FowlGame, seat: int, hand: Hidden, rect, acting, viewer) -> None:
    x0, _, x1, y1 = rect
    out = "" if game.alive[seat] else ("MURDERED" if game.murdered[seat] else "CAUGHT")
    facts = f"score {game.score(seat)}"
    if game.recorded[seat]:
        facts += "   recorded " + "/".join(TYPE_NAMES[t] for t in sorted(game.recorded[seat]))
        if game.arrested(seat):
            facts += " (would be arrested)"
    top = canvas.seat_panel(rect, seat, f"player_{seat}", facts, seat == acting, viewer, out)

    # The grid, every cell; the centre marked, the pending cell ringed.
    size = game.options.grid_size
    gx, gy = x0 + 12, top + 4
    cells = game.grid_lists[seat]
    first_wile = game.options.num_birds
    centre = size * size // 2
    pending = game.pending_cell if seat == acting and game.pending_cell != EMPTY else None
    for cell, card in enumerate(cells):
        r, c = divmod(cell, size)
        box = (gx + c * CELL, gy + r * CELL, gx + (c + 1) * CELL - 2, gy + (r + 1) * CELL - 2)
        if card == EMPTY:
            canvas.pen.rectangle(box, BAR, PANEL_EDGE if cell != centre else MUTED)  # plain: 121 a grid
            continue
        if card >= first_wile:
            kind = Wile(card - first_wile)
            fill = MURDER_COLOUR if kind == Wile.MURDER else WILE_COLOUR
            canvas.box(box, fill, INK, radius=3)
            canvas.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), WILE_SHORT[kind], 10, LIGHT, "mm")
        else:
            kind, value = divmod(card, game.options.max_value)
            canvas.box(box, TYPE_COLOURS[kind % len(TYPE_COLOURS)], INK, radius=3)
            label = f"{TYPE_NAMES[kind][0]}{value + 1}"
            canvas.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), label, 11, INK, "mm", bold=True)
        if cell == pending:
            canvas.box(box, None, TURN_EDGE, width=3, radius=3)
    if pending is not None and cells[pending] == EMPTY:
        r, c = divmod(pending, size)
        canvas.box(
            (gx + c * CELL, gy + r * CELL, gx + (c + 1) * CELL - 2, gy + (r + 1) * CELL - 2),
            None,
            TURN_EDGE,
            3,
            3,
        )

    # Beside the grid: the hand, then the discard pile (its top card on the right, uncovered).
    side = gx + size * CELL + 14
    width = x1 - side - 12
    canvas.text((side, top + 4), f"hand: {plural(len(game.hands[seat]), 'card')}", 13, MUTED)
    faces = [card_face(game, c) for c in hand.shown] + [None] * hand.face_down
    if faces:
        canvas.card_row((side, top + 22), faces, width, CARD)
    if hand.shown and seat != viewer and not _all_shown(hand):
        canvas.text((side, top + 22 + CARD[1] + 4), "face up: seen by the table", 11, MUTED)
    pile = game.piles[seat]
    py = top + 22 + CARD[1] + 30
    canvas.text((side, py), f"discard pile: {plural(len(pile), 'card')}, top on the right", 13, MUTED)
    if pile:
        canvas.card_row((side, py + 18), [card_face(game, c) for c in pile], width, SMALL)
    if not game.alive[seat]:
        canvas.text((side, y1 - 24), "out of the game", 14, WARN)


def _legend(canvas: Canvas, game: FowlGame, y: float) -> None:
    """The bird types in play and the wiles' short names, right-aligned in the strip."""
    items = [(TYPE_COLOURS[k % len(TYPE_COLOURS)], TYPE_NAMES[k], INK) for k in range(game.options.types)]
    items += [(WILE_COLOUR, "Blk/Dsc/Swp wiles", LIGHT), (MURDER_COLOUR, "Murder", LIGHT)]
    widths = [font(13).getlength(name) + 30 for _, name, _ in items]
    x = canvas.width - 16 - sum(widths)
    for (colour, name, _), width in zip(items, widths):
        canvas.box((x, y + 2, x + 14, y + 16), colour, INK, radius=3)
        canvas.text((x + 18, y + 1), name, 13, LIGHT)
        x += width


def _all_shown(hand: Hidden) -> bool:
    return hand.face_down == 0
