"""What one Murder, She Crows player sees. Seats are relative: index 0 is the observer, 1 the
player to their left, and so on clockwise. Every card on the table is face up, so all players see
the same things; the deck's order is the only hidden information and is never read here (only how
many cards of each value it holds, which follows from the face-up cards)."""

from __future__ import annotations

from types import SimpleNamespace

from envs.core import Observer, Piece
from envs.crows.rules import CrowsGame, CrowsOptions, Decision


class CrowsObserver(Observer):
    """Builds a Murder, She Crows observation from named pieces."""

    def layout(self, options: CrowsOptions) -> list[Piece]:
        """The named pieces, in order."""
        n, v = options.num_players, options.max_value
        return [
            Piece("decision", len(Decision), "one-hot decision kind: keep, press, place, coin, claim"),
            Piece("acting_seat", n, "one-hot relative seat whose decision it is"),
            Piece("turn_seat", n, "one-hot relative seat whose turn it is"),
            Piece(
                "run",
                n * v,
                "per relative seat (seat-major), 1 for each value 1..max_value in that seat's RUN",
            ),
            Piece(
                "set",
                n * v,
                "per relative seat (seat-major), cards of each value in that seat's SET / copies_per_value",
            ),
            Piece("provisional_run", v, "1 for each value in the turn player's RUN that is provisional"),
            Piece(
                "provisional_set",
                v,
                "provisional cards of each value in the turn player's SET / copies_per_value",
            ),
            Piece(
                "revealed",
                v,
                "the two cards revealed at the start of the turn, awaiting keep: count of each value / 2",
            ),
            Piece("to_place", v, "one-hot value of the revealed card that fits both piles, awaiting a pile"),
            Piece(
                "available",
                v,
                "a busted player's cards still open to claims: count of each value / copies_per_value",
            ),
            Piece("discard_pile", v, "discard pile: count of each value / copies_per_value"),
            Piece("deck_counts", v, "cards of each value in the deck (not their order) / copies_per_value"),
            Piece("deck_size", 1, "cards in the deck / cards in the game"),
            Piece("track", n, "each relative seat's track position / track_length"),
            Piece(
                "coins_pending", 1, "coins the turn player still has to use this turn / number of coin spaces"
            ),
            Piece(
                "final_round", 1, "1 once someone has reached the end of the track (this round is the last)"
            ),
            Piece("pile_discards_left", 1, "1 if the turn player may still discard a pile this turn"),
            Piece("turn_progress", 1, "turns played / max_turns"),
        ]

    def fill(self, game: CrowsGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        opts = game.options
        n, v = game.num_players, opts.max_value
        copies = opts.copies_per_value
        parts.decision[game.kind] = 1.0
        parts.acting_seat[(game.to_act - player) % n] = 1.0
        turn = game.turn_player
        parts.turn_seat[(turn - player) % n] = 1.0
        run, set_, track = parts.run, parts.set, parts.track
        for i in range(n):
            seat = (player + i) % n
            base = i * v - 1  # card c of relative seat i sits at i*v + c - 1
            for card in game.runs[seat]:
                run[base + card] = 1.0
            cards = game.sets[seat]
            if cards:
                set_[base + cards[0]] = len(cards) / copies
            track[i] = game.track[seat] / opts.track_length
        for card in game.prov_run:
            parts.provisional_run[card - 1] = 1.0
        if game.prov_set:
            parts.provisional_set[game.sets[turn][0] - 1] = game.prov_set / copies
        for card in game.revealed:
            parts.revealed[card - 1] += 0.5
        if game.pending:
            parts.to_place[game.pending - 1] = 1.0
        for card in game.available:
            parts.available[card - 1] += 1.0 / copies
        per_copy = 1.0 / copies
        parts.discard_pile[:] = [k * per_copy for k in game.discard[1:]]
        parts.deck_counts[:] = [k * per_copy for k in game.deck_counts[1:]]
        parts.deck_size[0] = len(game.deck) / opts.deck_size
        if opts.coin_spaces:
            parts.coins_pending[0] = game.coins / len(opts.coin_spaces)
        parts.final_round[0] = float(max(game.track) >= opts.track_length)
        parts.pile_discards_left[0] = float(game.pile_discards < opts.pile_discards_per_turn)
        parts.turn_progress[0] = game.turns / opts.max_turns
