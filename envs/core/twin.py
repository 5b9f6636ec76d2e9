"""The batched twins' shared base: Pgx's API over one game's pure JAX functions.

A game's twin (`envs/<game>/twin.py`) is a `TwinRules`: pure functions on its own `GameState`
pytree (init, step, legal mask, observe, returns) plus a converter from the reference engine's
state. `TwinEnv` wraps it once for every game with Pgx's `Env` semantics:

- `init(key) -> State`, `step(state, action, key) -> State`, `observe(state, player_id)`;
- a finished state steps to itself with zero rewards;
- an illegal action ends the game at once: the actor gets -1, the others share +1 (the AEC env's
  `illegal_action="lose"`);
- once terminated, `legal_action_mask` is all True (Pgx's convention, so that normalising masked
  probabilities never divides by zero).

Everything here is jit- and vmap-safe: no Python branching on traced values. This module imports
jax; `import fowlplay.envs` never imports it (`fowlplay.envs.make_jax` does, when called).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def pytree_dataclass(cls: type, meta: tuple[str, ...] = ()) -> type:
    """A frozen dataclass registered as a JAX pytree (every field data but those named in `meta`,
    which are static: part of the tree's structure), with `replace`."""
    cls = dataclasses.dataclass(frozen=True)(cls)
    cls.replace = dataclasses.replace
    names = [field.name for field in dataclasses.fields(cls) if field.name not in meta]
    return jax.tree_util.register_dataclass(cls, data_fields=names, meta_fields=list(meta))


class State:
    """Pgx's `State`: the acting player's view and mask, this step's rewards, the done flags; its
    `env_id` and `save_svg` (our picture of the table) as Pgx's have them."""

    current_player: jax.Array  # int32 seat whose decision it is (meaningless once done)
    observation: jax.Array  # float32 observation of `current_player`
    legal_action_mask: jax.Array  # bool, one per action; all True once done
    rewards: jax.Array  # float32, one per player: this step's rewards (non-zero only at the end)
    terminated: jax.Array  # bool: the game ended by its rules (or by an illegal action)
    truncated: jax.Array  # bool: the game was cut off by a cap with cap_ending="draw"
    _step_count: jax.Array  # int32 decisions taken
    _chance: jax.Array  # bool: the last step drew fresh chance (the alignment suite re-syncs there)
    _game: Any  # the game's own GameState pytree
    _env: Any  # static: the TwinEnv that made the state (its game's name and rules, for drawing)

    @property
    def env_id(self) -> str:
        """The game's registered name, e.g. "chicken_v1" (Pgx's `State.env_id`)."""
        return self._env.id

    def save_svg(self, filename, *, color_theme: str | None = None, scale: float | None = None) -> None:
        """Write the table as an SVG file (Pgx's `State.save_svg`): our picture of the table as the
        umpire sees it (every card face up; `envs/<game>/picture.py`), a batch of states as a grid
        of pictures, embedded as one PNG. `color_theme` is accepted for Pgx's signature; the
        pictures have one theme. `scale` resizes (1.0 by default)."""
        with open(filename, "w", encoding="utf-8") as handle:
            handle.write(self.to_svg(color_theme=color_theme, scale=scale))

    def to_svg(self, *, color_theme: str | None = None, scale: float | None = None) -> str:
        """The SVG text `save_svg` writes."""
        del color_theme  # one theme
        return picture_svg(self._env, self, 1.0 if scale is None else float(scale))

    def _repr_html_(self) -> str:
        return self.to_svg()


State = pytree_dataclass(State, meta=("_env",))


#: Integer ranges of at most this many values are divided through a table; wider ones by long division.
RATIO_TABLE_LIMIT = 1 << 16
#: `exact_ratio` numerators must be below this in magnitude (float32 holds every integer up to it).
RATIO_NUMERATOR_LIMIT = 1 << 24


def exact_ratio(
    numerator: jax.Array, denominator: int, low: int | None = None, high: int | None = None
) -> jax.Array:
    """float32 `numerator / denominator` rounded once, as the reference's float64 division cast to
    float32 is (for integers, rounding twice through float64 gives the same float32).

    XLA's float32 division on CPU is not correctly rounded (13 / 15 comes out one ulp high), so an
    observation or reward that the reference computes as a ratio of integers must come from here.
    `numerator` is an int array with |numerator| < 2**24; `denominator` a positive Python int below
    2**24. With the numerator's bounds `low`..`high` (Python ints) spanning at most
    `RATIO_TABLE_LIMIT` values it reads a table of the reference's own float64 quotients; otherwise
    it divides exactly in integer arithmetic.
    """
    d = _whole(denominator, "denominator")
    if not 0 < d < RATIO_NUMERATOR_LIMIT:
        raise ValueError(f"exact_ratio needs a denominator in 1..{RATIO_NUMERATOR_LIMIT - 1}; got {d}")
    a = jnp.asarray(numerator).astype(jnp.int32)
    if low is not None and high is not None and high - low < RATIO_TABLE_LIMIT:
        table = (np.arange(low, high + 1, dtype=np.float64) / d).astype(np.float32)
        return jnp.asarray(table)[jnp.clip(a - low, 0, high - low)]
    return _long_division(a, d)


def _whole(value, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ValueError(f"exact_ratio needs a whole number as {what}; got {value!r}")
    return int(value)


def _long_division(a: jax.Array, d: int) -> jax.Array:
    """`exact_ratio` without a table: the float32 nearest a / d (ties to even), built from integers."""
    i32 = jnp.int32
    whole = jnp.abs(a)
    nonzero = whole > 0
    top_a = 31 - jax.lax.clz(jnp.maximum(whole, 1))  # floor(log2 |a|)
    top_d = d.bit_length() - 1
    # k = floor(log2(|a| / d)): compare the two mantissas lined up at bit 30.
    lined = jnp.maximum(whole, 1) << (30 - top_a)
    k = top_a - top_d - (lined < (d << (30 - top_d))).astype(i32)
    shift = 23 - k  # the 24-bit mantissa is floor(|a| * 2**shift / d), rounded by the remainder
    quotient, remainder = whole // d, whole % d
    mantissa = jnp.where(quotient > 0, quotient << jnp.clip(shift, 0, 31), 0)
    # floor(remainder * 2**shift / d), a chunk of bits at a time (remainder << chunk stays below 2**31).
    chunk = 30 - top_d
    fraction, done = jnp.zeros_like(whole), jnp.zeros_like(whole)
    for _ in range(-(-(24 + top_d) // chunk)):
        bits = jnp.clip(shift - done, 0, chunk)
        remainder = remainder << bits
        digit = remainder // d
        remainder = remainder - digit * d
        fraction, done = (fraction << bits) + digit, done + bits
    mantissa = mantissa + fraction
    twice = 2 * remainder
    mantissa = mantissa + ((twice > d) | ((twice == d) & (mantissa % 2 == 1))).astype(i32)
    scale = jax.lax.bitcast_convert_type((k - 23 + 127) << 23, jnp.float32)  # 2**(k - 23), exact
    value = mantissa.astype(jnp.float32) * scale
    return jnp.where(nonzero, jnp.where(a < 0, -value, value), jnp.float32(0.0))


def fmix32(h: jax.Array) -> jax.Array:
    """MurmurHash3's 32-bit finaliser: a bijection whose every output bit depends on every input bit."""
    h = h ^ (h >> 16)
    h = h * jnp.uint32(0x85EBCA6B)
    h = h ^ (h >> 13)
    h = h * jnp.uint32(0xC2B2AE35)
    return h ^ (h >> 16)


def below(h: jax.Array, m: jax.Array) -> jax.Array:
    """floor(h * m / 2**32) for a uint32 `h` and 0 <= m < 2**16, exact in 32-bit arithmetic: uniform
    in [0, m) for a uniform h (a twin's draw of the r-th remaining card)."""
    m = m.astype(jnp.uint32)
    high, low = h >> 16, h & jnp.uint32(0xFFFF)
    return ((high * m + ((low * m) >> 16)) >> 16).astype(jnp.int32)


def key_words(key: jax.Array, count: int) -> list[jax.Array]:
    """`count` uint32 words from a PRNG key (k0, k1 its first two key words): word i is
    fmix32(k1 ^ fmix32(k0 + (i + 1) * 0x9E3779B9)), a few integer operations where `jax.random.bits`
    runs a threefry hash (the twins' chi-square tests hold their deals to the reference's law)."""
    k = jax.random.key_data(key).astype(jnp.uint32)
    return [fmix32(k[1] ^ fmix32(k[0] + jnp.uint32(0x9E3779B9 * (i + 1) & 0xFFFFFFFF))) for i in range(count)]


def tree_where(condition: jax.Array, on_true: Any, on_false: Any) -> Any:
    """Leaf-wise `jnp.where` of two pytrees of the same structure (a scalar condition)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(condition, a, b), on_true, on_false)


def win_rewards(winners: jax.Array) -> jax.Array:
    """The zero-sum win reward of `envs.core.rewards.win_rewards` from a bool mask of winners."""
    n = winners.shape[0]
    k = winners.sum()
    # The reference's float64 shares, cast to float32 once (XLA's float32 division rounds otherwise).
    shares = np.array([0.0] + [(n - j) / (j * (n - 1)) for j in range(1, n + 1)], np.float32)
    loss = jnp.float32(-1.0 / (n - 1))
    rewards = jnp.where(winners, jnp.asarray(shares)[k], loss).astype(jnp.float32)
    return jnp.where((k == 0) | (k == n), jnp.zeros(n, jnp.float32), rewards)


def best_players(scores: jax.Array, eligible: jax.Array | None = None) -> jax.Array:
    """Bool mask of the seats holding the highest score among `eligible` (all seats by default)."""
    eligible = jnp.ones(scores.shape, bool) if eligible is None else eligible
    low = jnp.iinfo(jnp.int32).min if jnp.issubdtype(scores.dtype, jnp.integer) else -jnp.inf
    top = jnp.where(eligible, scores, low).max()
    return eligible & (scores == top)


def score_rewards(scores: jax.Array, scale: int) -> jax.Array:
    """`envs.core.rewards.score_rewards` for integer scores and an integer scale: (s - mean of the
    others) / scale, as one exact ratio rounded once to float32 (as the reference's float64 result
    rounded to float32 is, but for ties closer than float64 can tell)."""
    n = scores.shape[0]
    scores = scores.astype(jnp.int32)
    numerator = scores * (n - 1) - (scores.sum() - scores)
    return exact_ratio(numerator, (n - 1) * _whole(scale, "scale"))


def final_rewards(scores: jax.Array, reward_mode: str, scale: int) -> jax.Array:
    """`envs.core.rewards.final_rewards` for a game that ended by its rules (not truncated)."""
    if reward_mode == "score":  # an option: fixed when the twin is made, never traced
        return score_rewards(scores, scale)
    return win_rewards(best_players(scores))


class TwinRules(abc.ABC):
    """One game's pure JAX functions; a twin reads its sizes from the reference's layouts."""

    def __init__(self, options: Any, observer: Any, layout: Any) -> None:
        #: The reference's validated options, `Observer` (pieces and offsets) and `ActionLayout`.
        self.options, self.observer, self.layout = options, observer, layout
        self.num_players: int = options.num_players
        self.num_actions: int = layout.size
        self.observation_size: int = observer.size

    def piece(self, name: str) -> slice:
        """The reference observer's slice of the named observation piece."""
        return self.observer.offsets[name]

    def assemble(self, values: dict[str, Any]) -> jax.Array:
        """The float32 observation from its pieces by name, in the reference observer's order (one
        concatenation); a piece left out is zeros, as the reference's zeroed buffer leaves it."""
        unknown = sorted(set(values) - set(self.observer.offsets))
        if unknown:
            raise ValueError(f"no observation piece named {unknown}; pieces: {list(self.observer.offsets)}")
        parts = []
        for piece in self.observer.pieces:
            part = values.get(piece.name)
            part = jnp.zeros(piece.size, jnp.float32) if part is None else jnp.asarray(part, jnp.float32)
            if part.size != piece.size:
                raise ValueError(f"observation piece {piece.name!r} has {piece.size} values; got {part.size}")
            parts.append(part.reshape(piece.size))
        return jnp.concatenate(parts)

    @abc.abstractmethod
    def init(self, key: jax.Array) -> Any:
        """A freshly dealt GameState."""

    @abc.abstractmethod
    def step(self, game: Any, action: jax.Array, key: jax.Array) -> tuple[Any, jax.Array]:
        """Apply a legal action (and the chance and forced steps it sets off): (GameState, drew chance)."""

    @abc.abstractmethod
    def legal_mask(self, game: Any) -> jax.Array:
        """Bool mask of the acting player's legal actions."""

    @abc.abstractmethod
    def observe(self, game: Any, player: jax.Array) -> jax.Array:
        """`player`'s float32 observation, equal to the reference observer's bit for bit."""

    @abc.abstractmethod
    def current_player(self, game: Any) -> jax.Array:
        """The acting seat (int32)."""

    @abc.abstractmethod
    def terminal(self, game: Any) -> jax.Array:
        """True once the game ended by its rules (a cap with cap_ending="standings" included)."""

    @abc.abstractmethod
    def truncated(self, game: Any) -> jax.Array:
        """True once a cap cut the game off with cap_ending="draw"."""

    @abc.abstractmethod
    def returns(self, game: Any) -> jax.Array:
        """float32 final rewards of a finished game (0 for everyone when truncated)."""

    @abc.abstractmethod
    def from_reference(self, game: Any) -> Any:
        """The GameState of a reference engine's game (numpy in, arrays out; not traced)."""

    def public(self, game: Any) -> Any:
        """The facts every seat knows (compared where a step drew fresh chance); the whole state by
        default, which a game with hidden chance outcomes narrows."""
        return game

    def picture_game(self, game: Any) -> Any:
        """A reference engine's game holding this state's table, drawn by the game's
        `picture.draw` (`State.save_svg`); not for stepping (a deck the twin shuffled lazily holds
        its cards in a canonical order)."""
        raise NotImplementedError(f"{type(self).__name__} cannot draw its states (picture_game)")

    #: Whether the game defines `potential` (its reference's `Game.potential`, for reward shaping).
    has_potential: bool = False

    def potential(self, game: Any, player: jax.Array) -> jax.Array:
        """float32 twin of the reference's public `Game.potential(player)`."""
        raise NotImplementedError(f"{type(self).__name__} defines no potential (Game.potential)")


class TwinEnv:
    """Pgx's `Env` API over a `TwinRules`: the same shapes for every game, jit- and vmap-safe."""

    def __init__(self, rules: TwinRules, name: str) -> None:
        self.rules = rules
        self.name = name
        #: Pgx's identifiers: `id` is the registered name, `version` its `_vN` suffix.
        self.id = name
        self.version = name.rsplit("_", 1)[-1]
        self.num_players = rules.num_players
        self.num_actions = rules.num_actions
        self.observation_shape = (rules.observation_size,)
        # Compiled once: run op by op, one conversion's observation and mask take a tenth of a second.
        self._state_jit = jax.jit(self._state)

    def __repr__(self) -> str:
        return f"TwinEnv({self.id!r}, num_players={self.num_players})"

    # ----- Pgx's API ----------------------------------------------------------------------
    def init(self, key: jax.Array) -> State:
        """A new game dealt from `key`."""
        return self._state(self.rules.init(key), jnp.zeros((), jnp.int32), jnp.zeros((), bool))

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """Apply the acting player's action; an illegal one loses the game; a done state stays done."""
        if key is None:
            key = jax.random.PRNGKey(0)  # Pgx allows no key; our games draw chance, so pass one
        action = jnp.asarray(action, jnp.int32)
        done = state.terminated | state.truncated
        in_range = (action >= 0) & (action < self.num_actions)
        legal = in_range & state.legal_action_mask[jnp.clip(action, 0, self.num_actions - 1)]
        illegal = ~done & ~legal
        # The game is stepped with a legal action whatever happens (its result is dropped below): the
        # first legal id (0 if none, as argmax has it) by a min, which XLA on CPU vectorises, where
        # argmax's two-operand reduce ran element by element (a twentieth of Fowl's step).
        ids = jnp.arange(self.num_actions, dtype=jnp.int32)
        first = jnp.where(state.legal_action_mask, ids, self.num_actions).min() % self.num_actions
        safe = jnp.where(legal, action, first).astype(jnp.int32)
        game, chance = self.rules.step(state._game, safe, key)
        keep = done | illegal
        game = tree_where(keep, state._game, game)
        stepped = self._state(game, state._step_count + (~done).astype(jnp.int32), chance & ~keep)
        # A forfeit and a done state differ from `stepped` (the State of the kept game) only in a few
        # small fields, selected here one by one: selecting whole States makes XLA on CPU compute the
        # game's step once per consumer (twice the work per step under vmap).
        rewards = jnp.where(illegal, self._forfeit_rewards(state.current_player), stepped.rewards)
        return stepped.replace(
            rewards=jnp.where(done, jnp.zeros_like(rewards), rewards),
            terminated=jnp.where(done, state.terminated, stepped.terminated | illegal),
            truncated=jnp.where(done, state.truncated, stepped.truncated & ~illegal),
            legal_action_mask=jnp.where(done, state.legal_action_mask, stepped.legal_action_mask | illegal),
            _chance=jnp.where(done, state._chance, stepped._chance),
        )

    def observe(self, state: State, player_id: jax.Array) -> jax.Array:
        """`player_id`'s observation of the state (what that seat may know)."""
        return self.rules.observe(state._game, jnp.asarray(player_id, jnp.int32))

    @property
    def has_potential(self) -> bool:
        """Whether `potential` is defined (the reference env's `has_potential()`)."""
        return self.rules.has_potential

    def potential(self, state: State, player_id: jax.Array) -> jax.Array:
        """The reference's `Game.potential` of `player_id` (public), float32: what potential-based
        reward shaping reads."""
        return self.rules.potential(state._game, jnp.asarray(player_id, jnp.int32))

    # ----- the reference's states ---------------------------------------------------------
    def from_reference(self, game: Any, step_count: int = 0) -> State:
        """The State of a reference engine's game (for the alignment suite and for starting a
        batch from chosen deals); not traced."""
        return self._state_jit(
            self.rules.from_reference(game), jnp.asarray(step_count, jnp.int32), jnp.zeros((), bool)
        )

    # ----- plumbing -----------------------------------------------------------------------
    def _state(self, game: Any, step_count: jax.Array, chance: jax.Array) -> State:
        rules = self.rules
        terminated, truncated = rules.terminal(game), rules.truncated(game)
        over = terminated | truncated
        player = rules.current_player(game).astype(jnp.int32)
        mask = rules.legal_mask(game) | over  # all True once done (Pgx)
        rewards = jnp.where(over, rules.returns(game), jnp.zeros(self.num_players, jnp.float32))
        return State(
            current_player=player,
            observation=rules.observe(game, player),
            legal_action_mask=mask,
            rewards=rewards.astype(jnp.float32),
            terminated=terminated,
            truncated=truncated & ~terminated,
            _step_count=step_count,
            _chance=chance,
            _game=game,
            _env=self,
        )

    def _forfeit_rewards(self, actor: jax.Array) -> jax.Array:
        """An illegal action's rewards: the actor -1, the others share +1."""
        n = self.num_players
        seats = jnp.arange(n)
        return jnp.where(seats == actor, jnp.float32(-1.0), jnp.float32(1.0 / (n - 1))).astype(jnp.float32)


def auto_reset(env: TwinEnv):
    """A step function that deals a new game from `key` when a game ends (Pgx's `auto_reset`):
    the returned state of a final step is the new deal, carrying that step's rewards and done
    flags; the next step clears them."""

    def step(state: State, action: jax.Array, key: jax.Array) -> State:
        step_key, deal_key = jax.random.split(key)
        state = state.replace(
            terminated=jnp.zeros_like(state.terminated),
            truncated=jnp.zeros_like(state.truncated),
            rewards=jnp.zeros_like(state.rewards),
        )
        stepped = env.step(state, action, step_key)
        over = stepped.terminated | stepped.truncated
        # The game that carries on (a new deal where one ended), and one State of it: selecting whole
        # States makes XLA on CPU compute the step once per consumer (twice the work under vmap).
        game = tree_where(over, env.rules.init(deal_key), stepped._game)
        after = env._state(game, jnp.where(over, 0, stepped._step_count), stepped._chance & ~over)
        return after.replace(
            rewards=stepped.rewards, terminated=stepped.terminated, truncated=stepped.truncated
        )

    return step


def as_array(values: Any, dtype: Any) -> np.ndarray:
    """A converter's helper: a Python or numpy value as a numpy array of `dtype` (a GameState leaf;
    numpy, so that converting a reference state costs no device transfer per field)."""
    return np.asarray(values, dtype=dtype)


def picture_svg(env: TwinEnv, state: State, scale: float = 1.0) -> str:
    """An SVG holding the picture of a state, or of a batch of states in a grid (at most 16 drawn,
    four to a row), as one embedded PNG. Each is drawn by the `picture` module beside its
    reference game's rules (`envs/<game>/picture.py`, as `envs.core.picture.draw` finds it)."""
    import base64
    import importlib
    import io

    try:
        from PIL import Image
    except ImportError as err:
        raise ImportError(
            "save_svg draws with Pillow: pip install 'fowlplay[render]' (or pillow>=10.1)"
        ) from err

    games = jax.tree_util.tree_map(np.asarray, state._game)
    batch = np.asarray(state.current_player).shape
    count = int(np.prod(batch))
    flat = jax.tree_util.tree_map(lambda x: x.reshape(count, *x.shape[len(batch) :]), games)
    pictures = []
    for i in range(min(count, 16)):
        reference = env.rules.picture_game(jax.tree_util.tree_map(lambda x, i=i: x[i], flat))
        module = importlib.import_module(type(reference).__module__.rpartition(".")[0] + ".picture")
        pictures.append(module.draw(reference, reveal=True))
    columns = min(len(pictures), 4)
    width, height = max(p.width for p in pictures), max(p.height for p in pictures)
    sheet = Image.new("RGB", (columns * width, -(-len(pictures) // columns) * height), (255, 255, 255))
    for i, picture in enumerate(pictures):
        sheet.paste(picture, ((i % columns) * width, (i // columns) * height))
    if scale != 1.0:
        sheet = sheet.resize((max(1, round(sheet.width * scale)), max(1, round(sheet.height * scale))))
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'width="{sheet.width}" height="{sheet.height}" viewBox="0 0 {sheet.width} {sheet.height}">'
        f'<image width="{sheet.width}" height="{sheet.height}" href="data:image/png;base64,{data}"/></svg>\n'
    )
