"""The picture of a Chicken table: every seat's feet face up, its number cards face down (a seat's
own face up in its own view), the deck, the bid, the scores and the last move."""

from __future__ import annotations

from fowlplay.envs.chicken.rules import ChickenGame
from fowlplay.envs.core.picture import (
    GOOD,
    INK,
    LIGHT,
    MUTED,
    TURN_EDGE,
    WARN,
    Canvas,
    Face,
    Hidden,
    acting_seat,
    check_viewer,
    outcome,
    plural,
)

WIDTH = 980
HEADER, TOP, SEAT, FOOTER = 56, 150, 132, 48
CARD = (44, 62)
#: Number cards 1..5 (and beyond, for other decks) in cool to warm colours.
NUMBER_COLOURS = ((219, 234, 254), (209, 250, 229), (254, 249, 195), (254, 215, 170), (254, 202, 202))
FOOT_FACE = Face("", "foot", (251, 146, 60), INK, mark="foot")


def number_face(value: int) -> Face:
    """A number card's face."""
    return Face(str(value), "", NUMBER_COLOURS[(value - 1) % len(NUMBER_COLOURS)])


def hidden_cards(game: ChickenGame, viewer: int | None, reveal: bool = False) -> list[Hidden]:
    """Each seat's number cards as `viewer` sees them: only its own face up (all, with `reveal`).

    The one place a Chicken picture reads face-down cards: what `ChickenObserver` gives a seat
    (`my_numbers`, and every seat's count in `number_cards_held`).
    """
    out = []
    for seat, numbers in enumerate(game.numbers):
        shown = tuple(sorted(numbers)) if reveal or seat == viewer else ()
        out.append(Hidden(shown, len(numbers) - len(shown)))
    return out


def draw(game: ChickenGame, viewer: int | None = None, reveal: bool = False):
    """The table as a Pillow image: as a spectator sees it (viewer None), as seat `viewer` sees it,
    or with every card face up (`reveal`)."""
    viewer = check_viewer(game, viewer)
    opts, n = game.options, game.num_players
    hands = hidden_cards(game, viewer, reveal)
    canvas = Canvas(WIDTH, HEADER + TOP + n * SEAT + FOOTER)
    who = "umpire's view" if reveal else ("spectator" if viewer is None else f"player_{viewer}'s view")
    canvas.header(
        "Chicken",
        f"round {game.round} (at most {opts.max_rounds}), started by player_{game.round_starter}; "
        f"first to {opts.target} wins; {who}",
    )
    acting = acting_seat(game)

    # ----- the middle of the table: deck, bid, last tally
    y = HEADER + 40
    feet_in_deck = opts.feet - sum(game.feet)
    canvas.pile((30, y), len(game.deck), size=CARD, caption="deck")
    canvas.text((30 + CARD[0] + 16, y + 4), f"{feet_in_deck} of them", 13, MUTED)
    canvas.text((30 + CARD[0] + 16, y + 20), "chicken feet", 13, MUTED)
    x = 250
    if game.over:
        canvas.text((x, y), "Game over", 26, TURN_EDGE, bold=True)
        ending = outcome(game)
        if game.truncated:
            ending = "round cap reached: " + ending
        canvas.text((x, y + 38), ending, 18, LIGHT)
    else:
        if game.high_bidder >= 0:
            canvas.text((x, y), f"High bid: {game.bid}", 26, TURN_EDGE, bold=True)
            canvas.text((x, y + 36), f"by player_{game.high_bidder}", 16, LIGHT)
        else:
            canvas.text((x, y), "No bid yet", 26, TURN_EDGE, bold=True)
            canvas.text((x, y + 36), f"if all pass, player_{game.starter} draws 1", 16, LIGHT)
        low, high = game.bid + 1, game.max_bid()
        choice = (
            "pass" if low > high else (f"pass or bid {low}" if low == high else f"pass or bid {low}..{high}")
        )
        canvas.text((x, y + 62), f"player_{acting} to act: {choice}", 15, MUTED)
        canvas.text((x, y + 82), f"bid phase started by player_{game.starter}", 13, MUTED)
    tally_x = 640
    canvas.text((tally_x, y), "last round's tally", 14, MUTED)
    if game.round > 1 or game.over:
        for p, points in enumerate(game.last_tally):
            colour = GOOD if points > 0 else (WARN if points < 0 else LIGHT)
            canvas.text(
                (tally_x + (p % 2) * 150, y + 22 + (p // 2) * 22), f"player_{p}: {points:+d}", 15, colour
            )
    else:
        canvas.text((tally_x, y + 22), "none yet", 15, LIGHT)

    # ----- one row per seat
    for seat in range(n):
        top = HEADER + TOP + seat * SEAT
        rect = (14, top, WIDTH - 14, top + SEAT - 10)
        hand = hands[seat]
        feet_text = plural(game.feet[seat], "foot", "feet")
        facts = f"score {game.scores[seat]}   {feet_text}   {plural(len(game.numbers[seat]), 'number card')}"
        if hand.shown:
            facts += f" (sum {sum(hand.shown)})"
        status = ""
        if not game.over:
            if seat == game.high_bidder:
                status = f"HIGH BID {game.bid}"
            elif not game.active[seat]:
                status = "PASSED"
        cards_y = canvas.seat_panel(rect, seat, f"player_{seat}", facts, seat == acting, viewer, status)
        feet = [FOOT_FACE] * game.feet[seat]
        numbers = [number_face(v) for v in hand.shown] + [None] * hand.face_down
        x = 32
        if feet:
            x = canvas.card_row((x, cards_y + 10), feet, 200, CARD) + 24
        if numbers:
            canvas.card_row((x, cards_y + 10), numbers, WIDTH - 46 - x, CARD)
        elif not feet:
            canvas.text((x, cards_y + 30), "no cards this round", 14, MUTED)
    canvas.footer(game.log)
    return canvas.image
