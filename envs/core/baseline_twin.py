"""The baseline twins' shared base: a rule-based `BaselineAgent` as one pure JAX function.

A game's baseline twin (`envs/<game>/baseline_twin.py`) is a `BaselineTwin` whose `decide(observation,
legal_action_mask) -> int32 action` makes exactly the decision of the reference
`BaselineAgent(options).act(observation, action_mask)`, which is a deterministic function of those
two arrays. It reads the observation through the reference observer's pieces (names, offsets) and
the reference's action layout, so a change of either cannot drift apart from the twin; the
alignment test (tests/envs/test_baseline_twin.py) holds every game's twin equal to its baseline on
the golden baseline games and on seeded masked-random games.

The baselines compute in numpy float32 and Python float64; XLA's float32 division on CPU is not
correctly rounded and JAX has no float64 by default, so the helpers here rebuild those numbers
exactly: `quotient` is numpy's float32 division of small integers, and `ds_*` are float32 pairs
(hi + lo) for sums the reference does in float64. Everything is jit- and vmap-safe.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

#: `quotient`'s integers must be below this (three 15-bit digits of the fraction are enough).
QUOTIENT_LIMIT = 1 << 15


def quotient(numerator: jax.Array, denominator: jax.Array) -> jax.Array:
    """float32 `numerator / denominator` correctly rounded (numpy's float32 division), for traced
    integers 0 <= numerator <= denominator < 2**15; 0 where the denominator is 0."""
    i32 = jnp.int32
    a, d = jnp.asarray(numerator).astype(i32), jnp.asarray(denominator).astype(i32)
    safe = jnp.maximum(d, 1)
    # The binary fraction a / d, 15 bits at a time (r < d < 2**15, so r << 15 fits in int32).
    r, digits = jnp.where(a < d, a, 0), []
    for _ in range(3):
        r = r << 15
        digit = r // safe
        r = r - digit * safe
        digits.append(digit)
    f1, f2, f3 = digits
    width = 32 - jax.lax.clz(jnp.maximum(f1, 1))  # bits of f1: f1 >= 1 since a / d > 2**-15
    tail = (f2 << 15) | f3  # the next 30 bits
    keep = 24 - width  # bits of `tail` the 24-bit mantissa takes (9..23)
    drop = 30 - keep
    mantissa = (f1 << keep) | (tail >> drop)
    rest = tail & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    up = (rest > half) | ((rest == half) & ((r != 0) | (mantissa % 2 == 1)))  # ties to even
    mantissa = mantissa + up.astype(i32)
    scale = jax.lax.bitcast_convert_type((width - 39 + 127) << 23, jnp.float32)  # 2**(width - 39)
    fraction = mantissa.astype(jnp.float32) * scale
    value = jnp.where(a >= d, jnp.float32(1.0), fraction)
    return jnp.where((a == 0) | (d == 0), jnp.float32(0.0), value)


def two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """float32 s = a + b and its rounding error e, exactly: a + b == s + e (Knuth's TwoSum)."""
    s = a + b
    b_part = s - a
    a_part = s - b_part
    return s, (a - a_part) + (b - b_part)


def ds_add(x: tuple[jax.Array, jax.Array], y: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
    """The sum of two float32 pairs (hi, lo) as a normalised pair, good to about 2**-46 relative."""
    s, e = two_sum(x[0], y[0])
    e = e + (x[1] + y[1])
    hi = s + e
    return hi, e - (hi - s)


def ds_table(values: np.ndarray) -> tuple[jax.Array, jax.Array]:
    """float64 values as a table of float32 pairs (hi, lo) with hi + lo within 2**-48 of each."""
    values = np.asarray(values, np.float64)
    hi = values.astype(np.float32)
    lo = (values - hi.astype(np.float64)).astype(np.float32)
    return jnp.asarray(hi), jnp.asarray(lo)


def first_best(hi: jax.Array, lo: jax.Array) -> jax.Array:
    """Index of the first largest pair (hi, lo), compared lexicographically (Python's max and a loop
    keeping the first strictly larger value both keep the first of equal values)."""
    top = hi.max()
    lo = jnp.where(hi == top, lo, -jnp.inf)
    return jnp.argmax((hi == top) & (lo == lo.max())).astype(jnp.int32)


class BaselineTwin:
    """One game's baseline as a pure function; reads sizes and pieces from the reference's layouts."""

    def __init__(self, options: Any, observer: Any, layout: Any) -> None:
        #: The reference's validated options, `Observer` (pieces and offsets) and `ActionLayout`.
        self.options, self.observer, self.layout = options, observer, layout

    def piece(self, observation: jax.Array, name: str) -> jax.Array:
        """The named piece of an observation, at the reference observer's offsets."""
        return observation[self.observer.offsets[name]]

    def start(self, block: str) -> int:
        """The first action id of a block of the reference's action layout."""
        return self.layout[block].start

    def decide(self, observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
        """The baseline's int32 action for one observation and its legal mask."""
        raise NotImplementedError
