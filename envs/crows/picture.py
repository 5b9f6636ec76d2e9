"""The picture of a Murder, She Crows table: the score track with its coins, every seat's RUN and
SET (provisional cards marked), the cards revealed this turn, the deck and the discard pile.

Nothing is held face down in this game; the deck's order is its only hidden information."""

from __future__ import annotations

from fowlplay.envs.core.picture import (
    BAR,
    LIGHT,
    MUTED,
    PANEL_EDGE,
    SEAT_COLOURS,
    TURN_EDGE,
    Canvas,
    Face,
    acting_seat,
    check_viewer,
    outcome,
    plural,
)
from fowlplay.envs.crows.rules import CrowsGame

WIDTH = 1000
HEADER, MIDDLE, SEAT, FOOTER = 56, 142, 104, 48
CARD = (40, 56)
SMALL = (30, 42)
#: Crow cards 1..6 from pale to deep (values beyond 6 wrap).
CROW_COLOURS = (
    (224, 242, 254),
    (209, 250, 229),
    (254, 249, 195),
    (254, 215, 170),
    (252, 165, 165),
    (216, 180, 254),
)


def crow_face(value: int) -> Face:
    """A crow card's face: its value (its prestige) on a colour of its own."""
    return Face(str(value), "crow", CROW_COLOURS[(value - 1) % len(CROW_COLOURS)])


def hidden_cards(game: CrowsGame, viewer: int | None, reveal: bool = False) -> int | None:
    """The deck's top card if the picture may show it (only with `reveal`), else None.

    The one place a Crows picture reads hidden information: no seat's observation holds the deck's
    order (`CrowsObserver` gives its composition only).
    """
    return game.deck[-1] if reveal and game.deck else None


def draw(game: CrowsGame, viewer: int | None = None, reveal: bool = False):
    """The table as a Pillow image (every seat sees the same table; `viewer` only marks 'you', and
    `reveal` turns the deck's top card up)."""
    viewer = check_viewer(game, viewer)
    opts, n = game.options, game.num_players
    track_height = 66 + 16 * n  # room for every token on one space
    canvas = Canvas(WIDTH, HEADER + track_height + MIDDLE + n * SEAT + FOOTER)
    who = "umpire's view" if reveal else ("spectator" if viewer is None else f"player_{viewer}'s view")
    if game.over:
        state = "game over: " + outcome(game)
    elif max(game.track) >= opts.track_length:
        state = f"final round: the game ends after player_{n - 1}'s turn"
    else:
        state = f"first to space {opts.track_length} ends the round"
    canvas.header("Murder, She Crows", f"turn {game.turns + 1} (at most {opts.max_turns}); {state}; {who}")
    acting = acting_seat(game)
    _draw_track(canvas, game, HEADER + 14)
    y = HEADER + track_height + 22
    _draw_piles(canvas, game, viewer, reveal, y)
    _draw_turn(canvas, game, acting, y)
    for seat in range(n):
        _draw_seat(canvas, game, seat, HEADER + track_height + MIDDLE + seat * SEAT, acting, viewer)
    canvas.footer(game.log)
    return canvas.image


def _draw_track(canvas: Canvas, game: CrowsGame, top: int) -> None:
    """The score track: spaces 0..track_length, coins, one token per seat."""
    opts = game.options
    left, right = 30, WIDTH - 30
    spaces = opts.track_length + 1
    step = (right - left) / spaces
    for space in range(spaces):
        x0 = left + space * step
        coin = space in opts.coin_spaces
        fill = (120, 90, 20) if coin else BAR
        canvas.box((x0 + 1, top + 18, x0 + step - 1, top + 48), fill, PANEL_EDGE, radius=4)
        canvas.text((x0 + step / 2, top + 33), str(space), 11, TURN_EDGE if coin else MUTED, "mm")
    canvas.text((left, top), "score track (gold: a coin)", 12, MUTED)
    stacked: dict[int, int] = {}
    for seat in range(game.num_players):
        space = min(game.track[seat], opts.track_length)
        k = stacked.get(space, 0)
        stacked[space] = k + 1
        centre = (left + space * step + step / 2, top + 60 + k * 16)
        canvas.token(centre, 7, SEAT_COLOURS[seat % len(SEAT_COLOURS)], str(seat))


def _draw_piles(canvas: Canvas, game: CrowsGame, viewer: int | None, reveal: bool, y: int) -> None:
    """The middle's left: the deck and the discard pile, a count per value."""
    deck_top = hidden_cards(game, viewer, reveal)
    canvas.pile((30, y), len(game.deck), crow_face(deck_top) if deck_top else None, CARD, "deck")
    canvas.text((30, y + CARD[1] + 22), "order unknown" if not reveal else "top card shown", 11, MUTED)
    x = 110
    canvas.text((x, y - 14), f"discard pile (face up): {plural(sum(game.discard), 'card')}", 12, MUTED)
    for value in range(1, game.options.max_value + 1):
        vx = x + (value - 1) * (SMALL[0] + 10)
        count = game.discard[value]
        if count:
            canvas.card((vx, y + 2), crow_face(value), SMALL)
        else:
            canvas.box((vx, y + 2, vx + SMALL[0], y + 2 + SMALL[1]), None, MUTED, radius=4)
        canvas.text((vx + SMALL[0] / 2, y + SMALL[1] + 6), f"x{count}", 12, LIGHT, "ma")


def _draw_turn(canvas: Canvas, game: CrowsGame, acting: int, y: int) -> None:
    """The middle's right: this turn's cards (revealed, waiting, open to claims) and its counters."""
    opts = game.options
    x = 380
    turn = game.turn_player
    if game.over:
        canvas.text((x, y), "Game over", 24, TURN_EDGE, bold=True)
        canvas.text((x, y + 34), outcome(game), 17, LIGHT)
        return
    canvas.text((x, y - 14), f"player_{turn}'s turn; player_{acting} decides: {game.decision()}", 13, LIGHT)
    groups = [
        ("revealed, keep one that fits", list(game.revealed)),
        ("revealed, fits both piles", [game.pending] if game.pending else []),
        (f"open to claims after player_{turn}'s bust", list(game.available)),
    ]
    gx = x
    for caption, cards in groups:
        if not cards:
            continue
        canvas.text((gx, y + 6), caption, 12, MUTED)
        end = canvas.card_row((gx, y + 24), [crow_face(c) for c in sorted(cards)], 280, CARD)
        gx = max(end, gx + canvas.pen.textlength(caption) + 10) + 24
    notes = []
    if game.coins:
        notes.append(f"coins to use: {game.coins}")
    left_discards = max(opts.pile_discards_per_turn - game.pile_discards, 0)
    notes.append(f"pile discards left this turn: {left_discards}")
    notes.append("* provisional: lost on a bust")
    canvas.text((x, y + CARD[1] + 34), "   ".join(notes), 12, MUTED)


def _draw_seat(canvas: Canvas, game: CrowsGame, seat: int, top: int, acting: int, viewer: int | None) -> None:
    """One seat's row: its RUN and SET, the turn player's provisional cards dimmed."""
    rect = (14, top, WIDTH - 14, top + SEAT - 8)
    facts = f"track {game.track[seat]}"
    cards_y = canvas.seat_panel(rect, seat, f"player_{seat}", facts, seat == acting, viewer)
    turn = game.turn_player
    provisional_run = set(game.prov_run) if seat == turn and not game.over else set()
    run = sorted(game.runs[seat])
    set_ = game.sets[seat]
    firm = len(set_) - (game.prov_set if seat == turn and not game.over else 0)
    for label, cards, dim, x0 in (
        ("RUN", run, [c in provisional_run for c in run], 32),
        ("SET", set_, [k >= firm for k in range(len(set_))], WIDTH // 2 + 10),
    ):
        canvas.text((x0, cards_y + 20), label, 15, LIGHT, "lm", bold=True)
        if cards:
            canvas.card_row(
                (x0 + 44, cards_y - 2), [crow_face(c) for c in cards], WIDTH // 2 - 90, CARD, dim=dim
            )
        else:
            canvas.text((x0 + 44, cards_y + 20), "empty", 13, MUTED, "lm")
