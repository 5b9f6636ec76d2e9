"""Drawing helpers every game's picture shares: a canvas, cards, piles, seat panels, text.

Each game has a `picture.py` with one function, `draw(game, viewer=None, reveal=False)`, returning
a Pillow image of its table: as a spectator sees it (viewer None: every hidden card face down), as
one seat sees it (viewer = its index: its own hidden cards face up, nothing else hidden shown), or,
with `reveal=True`, as the umpire sees it (every card face up, for a finished game or a replay).
What a seat may see is decided in one function per game, `hidden_cards`, which reads only what that
seat's observation holds; everything else a picture shows is public.

Pillow is imported inside the functions here (the `render` extra), so `import fowlplay.envs` stays
light. Text uses the font bundled with Pillow (`ImageFont.load_default(size=...)`, Pillow 10.1+), so
a picture is the same on every machine with the same Pillow.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import numpy as np

#: The extra that installs Pillow, named by the error a missing Pillow raises.
EXTRA = "render"

# ----- colours (RGB) --------------------------------------------------------------------------------
FELT = (34, 87, 58)
FELT_DARK = (24, 64, 42)
PANEL = (28, 72, 48)
PANEL_EDGE = (70, 120, 90)
TURN_EDGE = (250, 204, 21)
INK = (20, 24, 28)
PAPER = (252, 250, 244)
LIGHT = (236, 240, 232)
MUTED = (170, 196, 178)
WARN = (248, 113, 113)
GOOD = (134, 239, 172)
BACK = (38, 70, 140)
BACK_PATTERN = (70, 104, 180)
BAR = (16, 40, 28)

#: Seat colours (tokens, name tags), in seat order.
SEAT_COLOURS = (
    (239, 68, 68),
    (59, 130, 246),
    (250, 204, 21),
    (168, 85, 247),
    (249, 115, 22),
    (20, 184, 166),
)


def pillow():
    """The `PIL` modules the pictures use, or an ImportError naming the extra that installs Pillow."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as err:
        raise ImportError(
            f"pictures (render_mode='rgb_array') need Pillow: pip install 'fowlplay[{EXTRA}]' (or pillow>=10.1)"
        ) from err
    return Image, ImageDraw, ImageFont


@cache
def font(size: int):
    """Pillow's bundled font at `size` pixels (the same glyphs on every machine)."""
    _, _, image_font = pillow()
    return image_font.load_default(size=size)


@dataclass(frozen=True)
class Face:
    """What a face-up card shows: a title (a type or a name), a big label (a value), a colour."""

    label: str
    title: str = ""
    colour: tuple[int, int, int] = PAPER
    ink: tuple[int, int, int] = INK
    #: A drawn symbol instead of a label: "foot" (a chicken foot).
    mark: str = ""


@dataclass(frozen=True)
class Hidden:
    """A hand as one viewer sees it: the cards shown face up, and how many more lie face down."""

    shown: tuple[Any, ...]
    face_down: int


class Canvas:
    """A Pillow image with the drawing operations the game pictures are made of."""

    def __init__(self, width: int, height: int, background: tuple[int, int, int] = FELT) -> None:
        image, image_draw, _ = pillow()
        self.width, self.height = width, height
        self.image = image.new("RGB", (width, height), background)
        self.pen = image_draw.Draw(self.image)

    # ----- text -------------------------------------------------------------------------------
    def text(
        self,
        xy: tuple[float, float],
        text: str,
        size: int = 15,
        fill: tuple[int, int, int] = LIGHT,
        anchor: str = "la",
        bold: bool = False,
        max_width: float | None = None,
    ) -> float:
        """Write `text` at `xy` (Pillow anchor), shortened with '...' to `max_width`; returns its width."""
        if max_width is not None:
            text = fit(text, size, max_width)
        if not text:
            return 0.0
        mask, (left, top), width = _text_mask(text, size, anchor, bold)
        x, y = round(xy[0]) + left, round(xy[1]) + top
        self.image.paste(fill, (x, y, x + mask.width, y + mask.height), mask)
        return width

    def lines(
        self,
        xy: tuple[float, float],
        lines: Sequence[str],
        size: int = 14,
        fill: tuple[int, int, int] = LIGHT,
        max_width: float | None = None,
        spacing: int = 4,
    ) -> float:
        """Write lines top-down from `xy`; returns the y below the last."""
        x, y = xy
        for line in lines:
            self.text((x, y), line, size, fill, max_width=max_width)
            y += size + spacing
        return y

    # ----- shapes -----------------------------------------------------------------------------
    def box(
        self,
        rect: tuple[float, float, float, float],
        fill: tuple[int, int, int] | None = PANEL,
        outline: tuple[int, int, int] | None = PANEL_EDGE,
        width: int = 1,
        radius: int = 10,
    ) -> None:
        """A rounded rectangle (x0, y0, x1, y1)."""
        self.pen.rounded_rectangle(rect, radius=radius, fill=fill, outline=outline, width=width)

    def card(
        self,
        xy: tuple[float, float],
        face: Face | None,
        size: tuple[int, int] = (44, 62),
        marked: bool = False,
        dim: bool = False,
    ) -> None:
        """A card at `xy` (top left): face up if `face` is given, else its back; `marked` rings it,
        `dim` draws it with a dashed-looking grey edge (a provisional card)."""
        x, y = xy
        w, h = size
        rect = (x, y, x + w, y + h)
        if face is None:
            self.pen.rounded_rectangle(rect, radius=5, fill=BACK, outline=PAPER, width=2)
            inset = (x + 5, y + 5, x + w - 5, y + h - 5)
            self.pen.rounded_rectangle(inset, radius=3, outline=BACK_PATTERN, width=1)
            for dy in range(11, h - 8, 8):  # a lattice of small diamonds inside the border
                for dx in range(11 + (dy // 8) % 2 * 4, w - 8, 8):
                    px, py = x + dx, y + dy
                    self.pen.polygon(
                        [(px, py - 2), (px + 2, py), (px, py + 2), (px - 2, py)], fill=BACK_PATTERN
                    )
        else:
            edge = TURN_EDGE if marked else (MUTED if dim else INK)
            self.pen.rounded_rectangle(
                rect, radius=5, fill=face.colour, outline=edge, width=3 if marked else 2
            )
            label_size = 22 if h >= 56 else (16 if h >= 40 else 12)
            while label_size > 8 and font(label_size).getlength(face.label) > w - 6:
                label_size -= 1
            if face.label:
                centre = (x + w / 2, y + h / 2 + (5 if face.title else 0))
                self.text(centre, face.label, label_size, face.ink, "mm", bold=True)
            if face.mark == "foot":
                foot(self.pen, (x + w / 2, y + h / 2 + 6), h * 0.26, face.ink)
            if face.title:
                title_size = 10 if h >= 40 else 9
                while title_size > 7 and font(title_size).getlength(face.title) > w - 4:
                    title_size -= 1
                self.text((x + w / 2, y + 4), face.title, title_size, face.ink, "ma", max_width=w - 4)
            if dim:
                self.text((x + w - 3, y + h - 2), "*", 14, face.ink, "rd", bold=True)

    def card_row(
        self,
        xy: tuple[float, float],
        faces: Sequence[Face | None],
        max_width: float,
        size: tuple[int, int] = (44, 62),
        gap: int = 6,
        dim: Sequence[bool] = (),
        marked: Sequence[bool] = (),
    ) -> float:
        """Cards left to right from `xy`, overlapping when they would not fit `max_width`; returns the
        x after the last card."""
        x, y = xy
        count = len(faces)
        if count == 0:
            return x
        w = size[0]
        step = w + gap
        if count > 1 and w + step * (count - 1) > max_width:
            step = max((max_width - w) / (count - 1), 3)
        for i, face in enumerate(faces):
            is_dim = dim[i] if i < len(dim) else False
            is_marked = marked[i] if i < len(marked) else False
            self.card((x + i * step, y), face, size, marked=is_marked, dim=is_dim)
        return x + step * (count - 1) + w

    def pile(
        self,
        xy: tuple[float, float],
        count: int,
        top: Face | None = None,
        size: tuple[int, int] = (44, 62),
        caption: str = "",
    ) -> None:
        """A pile of `count` cards (a few edges drawn under the top), its count below, and a caption."""
        x, y = xy
        w, h = size
        if count == 0:
            self.pen.rounded_rectangle((x, y, x + w, y + h), radius=5, outline=MUTED, width=1)
            self.text((x + w / 2, y + h / 2), "empty", 10, MUTED, "mm")
        else:
            for k in range(min(count - 1, 3), 0, -1):
                self.pen.rounded_rectangle(
                    (x + 2 * k, y - 2 * k, x + w + 2 * k, y + h - 2 * k),
                    radius=5,
                    fill=PAPER if top else BACK,
                    outline=INK,
                )
            self.card((x, y), top, size)
        label = f"{count} card{'s' * (count != 1)}"
        self.text((x + w / 2, y + h + 4), label, 12, LIGHT, "ma")
        if caption:
            self.text((x + w / 2, y - 10), caption, 12, MUTED, "md")

    def token(
        self, centre: tuple[float, float], radius: float, colour: tuple[int, int, int], label: str = ""
    ) -> None:
        """A round marker (a seat on a track), with a short label inside."""
        cx, cy = centre
        self.pen.ellipse(
            (cx - radius, cy - radius, cx + radius, cy + radius), fill=colour, outline=INK, width=2
        )
        if label:
            self.text((cx, cy), label, int(radius * 1.1), INK, "mm", bold=True)

    # ----- the parts every table has ---------------------------------------------------------------
    def header(self, title: str, subtitle: str, height: int = 56) -> int:
        """The title bar: the game and what is going on; returns its height."""
        self.pen.rectangle((0, 0, self.width, height), fill=BAR)
        self.text((16, 10), title, 20, LIGHT, bold=True)
        self.text((16, 36), subtitle, 14, MUTED, max_width=self.width - 32)
        return height

    def footer(self, lines: Sequence[str], height: int = 48) -> None:
        """The bottom bar: the last move, in words (shortened to the width)."""
        top = self.height - height
        self.pen.rectangle((0, top, self.width, self.height), fill=BAR)
        shown = list(lines)[-2:] or ["-"]
        y = top + 8
        for i, line in enumerate(shown):
            prefix = "last: " if i == 0 else ""
            self.text(
                (16, y), prefix + line, 14, LIGHT if i == len(shown) - 1 else MUTED, max_width=self.width - 32
            )
            y += 19

    def seat_panel(
        self,
        rect: tuple[float, float, float, float],
        seat: int,
        name: str,
        facts: str,
        acting: bool,
        viewer: int | None,
        out: str = "",
    ) -> float:
        """A seat's frame with its name tag and one line of facts (score...); gold-edged when it is
        that seat's decision. Returns the y where the seat's cards may start."""
        x0, y0, x1, _ = rect
        self.box(rect, PANEL, TURN_EDGE if acting else PANEL_EDGE, width=3 if acting else 1)
        colour = SEAT_COLOURS[seat % len(SEAT_COLOURS)]
        self.pen.ellipse((x0 + 10, y0 + 10, x0 + 24, y0 + 24), fill=colour, outline=INK)
        label = name + (" (you)" if viewer == seat else "")
        width = self.text((x0 + 32, y0 + 8), label, 16, LIGHT, bold=True)
        tag_x = x0 + 40 + width
        if acting:
            tag_x += self._tag((tag_x, y0 + 8), "TO ACT", TURN_EDGE, INK) + 6
        if out:
            tag_x += self._tag((tag_x, y0 + 8), out, WARN, INK) + 6
        self.text((tag_x + 4, y0 + 10), facts, 14, MUTED, max_width=x1 - tag_x - 14)
        return y0 + 34

    def _tag(self, xy: tuple[float, float], text: str, fill, ink) -> float:
        x, y = xy
        width = self.pen.textlength(text, font=font(12)) + 10
        self.pen.rounded_rectangle((x, y, x + width, y + 18), radius=4, fill=fill)
        self.text((x + width / 2, y + 9), text, 12, ink, "mm")
        return width

    def array(self) -> np.ndarray:
        """The picture as an (H, W, 3) uint8 array."""
        return to_array(self.image)


def foot(pen, centre: tuple[float, float], length: float, colour: tuple[int, int, int]) -> None:
    """A chicken foot: three toes fanning up from a heel, and a short spur behind."""
    cx, cy = centre
    width = max(int(length / 4), 2)
    heel = (cx, cy + length * 0.55)
    for dx, dy in ((-0.75, -0.75), (0.0, -1.0), (0.75, -0.75)):
        pen.line((heel, (cx + dx * length, cy + dy * length + length * 0.2)), fill=colour, width=width)
    pen.line((heel, (cx, cy + length * 1.05)), fill=colour, width=width)
    r = width * 0.8
    pen.ellipse((heel[0] - r, heel[1] - r, heel[0] + r, heel[1] + r), fill=colour)


@lru_cache(maxsize=8192)
def _text_mask(text: str, size: int, anchor: str, bold: bool):
    """`text` drawn once as a mask (its pixels' coverage), where it sits from its anchor point, and
    its width: a table draws the same few hundred strings over and over."""
    image, image_draw, _ = pillow()
    face = font(size)
    left, top, right, bottom = face.getbbox(text, anchor=anchor)
    extra = 1 if bold else 0  # the bundled font has one weight: a second pass a pixel to the right
    mask = image.new("L", (max(right - left + extra, 1), max(bottom - top, 1)), 0)
    pen = image_draw.Draw(mask)
    pen.text((-left, -top), text, font=face, fill=255, anchor=anchor)
    if bold:
        pen.text((1 - left, -top), text, font=face, fill=255, anchor=anchor)
    return mask, (left, top), face.getlength(text) + extra


def fit(text: str, size: int, max_width: float) -> str:
    """`text`, shortened with '...' until it fits `max_width` pixels at `size`."""
    face = font(size)
    if face.getlength(text) <= max_width:
        return text
    while text and face.getlength(text + "...") > max_width:
        text = text[:-1]
    return text.rstrip() + "..."


def to_array(image) -> np.ndarray:
    """A Pillow image as a C-contiguous (H, W, 3) uint8 array."""
    return np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))


def acting_seat(game) -> int | None:
    """The seat whose decision it is, or None once the game is over."""
    return None if game.over else game.current_player


def check_viewer(game, viewer: int | None) -> int | None:
    """`viewer` if it is None or a seat of `game`; otherwise a ValueError naming the seats."""
    if viewer is None:
        return None
    if (
        isinstance(viewer, bool)
        or not isinstance(viewer, (int, np.integer))
        or not 0 <= viewer < game.num_players
    ):
        raise ValueError(
            f"viewer={viewer!r} is not a seat; allowed: None (a spectator) or 0..{game.num_players - 1}"
        )
    return int(viewer)


def draw(game, viewer: int | None = None, reveal: bool = False):
    """The picture of any fowlplay game's table (a Pillow image), from its package's `picture.draw`."""
    return picture_module(game).draw(game, viewer, reveal=reveal)


def picture_module(game):
    """The `picture` module beside the rules module of `game`'s engine (fowlplay.envs.<game>.picture)."""
    package = type(game).__module__.rpartition(".")[0]
    try:
        return importlib.import_module(f"{package}.picture")
    except ModuleNotFoundError as err:
        if err.name != f"{package}.picture":
            raise
        raise NotImplementedError(
            f"{type(game).__name__} has no picture ({package}.picture does not exist)"
        ) from None


def outcome(game) -> str:
    """'player_0 wins', 'player_0 and player_2 share the win' or 'a draw', from the final returns."""
    returns = game.returns()
    top = max(returns)
    if top == min(returns):
        return "a draw (every reward 0)"
    winners = [f"player_{p}" for p, r in enumerate(returns) if r == top]
    return f"{winners[0]} wins" if len(winners) == 1 else " and ".join(winners) + " share the win"


def plural(count: int, one: str, many: str | None = None) -> str:
    """'1 foot', '2 feet', '0 cards'."""
    return f"{count} {one if count == 1 else many or one + 's'}"


def seat_grid(count: int, columns: int) -> list[tuple[int, int]]:
    """(row, column) of each of `count` seats laid out `columns` to a row."""
    return [divmod(i, columns) for i in range(count)]


# ----- the pictures of the README and the docs -------------------------------------------------------
@dataclass(frozen=True)
class DocPicture:
    """A picture of the docs: a seeded game of masked random play, stopped after `decisions`."""

    file: str
    game: str
    players: int
    seed: int
    decisions: int
    viewer: int | None = None


#: Every picture `make pictures` writes under docs/images/ (a test regenerates them and compares).
DOC_PICTURES = (
    DocPicture("chicken_v1.png", "chicken_v1", 3, 4, 20),
    DocPicture("chicken_v1-player_0.png", "chicken_v1", 3, 4, 20, viewer=0),
    DocPicture("murder_she_crows_v1.png", "murder_she_crows_v1", 3, 2, 140),
    DocPicture("murder_most_fowl_v0.png", "murder_most_fowl_v0", 3, 2, 170),
    DocPicture("murder_most_fowl_v0-player_1.png", "murder_most_fowl_v0", 3, 2, 170, viewer=1),
    DocPicture("murray_frog_v0.png", "murray_frog_v0", 4, 7, 80),
)


def doc_table(spec: DocPicture):
    """The game of a docs picture: `spec.game` under masked random play from `spec.seed`, stopped
    `spec.decisions` in (random play, not the baselines: a picture changes with the rules or the
    drawing, not whenever a baseline is tuned)."""
    from fowlplay import envs
    from fowlplay.envs.core.testing import random_legal

    env = envs.make(spec.game, num_players=spec.players)
    env.reset(seed=spec.seed)
    rng = np.random.default_rng(spec.seed)
    for decisions, _ in enumerate(env.agent_iter()):
        obs, _, terminated, truncated, _ = env.last()
        if decisions >= spec.decisions or terminated or truncated:
            break
        env.step(random_legal(obs["action_mask"], rng))
    return env.unwrapped.game


def doc_picture(spec: DocPicture):
    """The Pillow image of a docs picture."""
    return draw(doc_table(spec), spec.viewer)


def main(argv: list[str] | None = None) -> int:
    """`python -m fowlplay.envs.core.picture --out docs/images`: write every docs picture."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(
        description="Write the pictures of the README and the docs (seeded games)."
    )
    parser.add_argument(
        "--out", default="docs/images", help="folder to write the PNG files into [docs/images]"
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        parser.error(f"cannot create --out {args.out}: {err.strerror}")
    for spec in DOC_PICTURES:
        doc_picture(spec).save(out / spec.file, optimize=True)
        print(out / spec.file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
