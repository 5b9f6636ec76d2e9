"""Agent specs: the strings a user writes on the command line, turned into `Agent`s.

A spec is `[LABEL=]KIND` where KIND is one of

    random             uniformly random among the legal actions (`envs.core.agents.RandomAgent`)
    baseline           the game's rule-based `BaselineAgent`
    baseline-v0        Chicken's baseline as it was before issue 32, frozen (`BaselineAgentV0`: it
                       loses to always passing), kept to test that exploit search finds that
    probe:NAME         a trivial probe policy (`evaluation.probe_agents`: first, last, random, one per
                       action block such as probe:pass, and the game's own; `probe_names(game)`)
    ckpt:PATH          a trained checkpoint, sampling from its policy (the default)
    ckpt-det:PATH      a trained checkpoint, always taking its most probable legal action
    ismcts:N[:...]     information-set MCTS, N simulations per decision (`evaluation.ismcts`;
                       options :random rollouts, :hK horizon, :mX margin, :vK validation)
    oracle:N[:...]     the same search with every hand face up (a reference for what the hidden
                       cards are worth, never a ladder rung); kind "ismcts"
    zoo:GAME           the model zoo's trained agent of GAME, shipped in the package
                       (`evaluation.zoo`: its files verified against their SHA-256 first), sampling
    zoo                the zoo agent of the game being played (resolved once the game is known)
    PATH               the same as ckpt:PATH when PATH (or PATH.zip) exists

PATH is what `training.checkpoint` accepts: the .npz, .zip or .json, their common stem, or a run
directory (its newest complete checkpoint). A zoo agent is a checkpoint spec whose path is the
shipped file (`AgentSpec.zoo` names its game). LABEL names the agent in every table; it defaults to
the kind, or for a checkpoint to `<run>/<stem>` (`-det` appended when deterministic).

A checkpoint plays from its tensor-only weights file (`<stem>.npz`); nothing is unpickled. An
older checkpoint without one is refused unless `trust_checkpoint`, which loads its SB3 zip (whose
pickled data can run any code). `resolve_spec` pins a checkpoint spec to the file and weights it
plays (`AgentSpec.model`), so every game of an evaluation plays the same model.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent

BUILTIN_KINDS = ("random", "baseline", "baseline-v0")
#: `zoo:GAME`, and `zoo` alone (the game played).
ZOO = "zoo"
PROBE_PREFIX = "probe:"
CHECKPOINT_PREFIXES = {"ckpt:": False, "ckpt-det:": True}
ACCEPTED = (
    "random, baseline, ckpt:PATH (sampling), ckpt-det:PATH (deterministic), "
    "probe:NAME (a trivial probe policy; python -m fowlplay.evaluation.probes lists each game's), "
    "baseline-v0 (Chicken's baseline before issue 32, frozen), "
    "ismcts:N[:random][:hK][:mX][:vK] (information-set search, N simulations per decision; random "
    "rollouts, horizon K decisions, margin X, K validation simulations), oracle:N[...] (the same "
    "search seeing every hand), or an existing "
    "checkpoint PATH (.zip, .json, their stem, or a training run directory), "
    "zoo:GAME (the package's trained agent of GAME) or zoo (that of the game played); "
    "any of them may be prefixed with LABEL="
)


class AgentSpecError(ValueError):
    """An agent spec that names no known agent, a missing checkpoint or an incompatible one."""


@dataclass(frozen=True)
class AgentSpec:
    """One parsed agent spec: its label, kind and (for checkpoints) path and sampling mode."""

    label: str
    kind: str  # "random", "baseline", "baseline-v0", "probe", "checkpoint", "ismcts" or "zoo" (unresolved)
    #: A checkpoint's path, or a probe's name.
    path: str | None = None
    deterministic: bool = False
    text: str = ""
    #: For a resolved checkpoint: `checkpoint` (stem), `file` (the weights played), `weights_sha256`, `timesteps`.
    model: dict | None = None
    #: The work a decision may take, for a kind that searches (ismcts:N: N simulations); None for
    #: the others. Every kind with a budget sets it, so that `parse_spec(max_budget=)` bounds them all.
    budget: int | None = None
    #: For a zoo agent: its game (a `zoo` spec is kind "zoo" until `resolve_spec` knows the game).
    zoo: str | None = None

    def to_dict(self) -> dict:
        """Plain values for summaries (with the model a checkpoint played, once resolved)."""
        out = {
            "label": self.label,
            "kind": self.kind,
            "path": self.path,
            "deterministic": self.deterministic,
            "spec": self.text,
        }
        if self.model is not None:
            out["model"] = dict(self.model)
        if self.zoo is not None:
            out["zoo"] = self.zoo
        return out

    def identity(self) -> dict:
        """What decides this agent's play: a checkpoint by the file and weights it plays, not its spec text."""
        if self.kind != "checkpoint":
            return self.to_dict()
        if self.model is None:
            raise ValueError(f"agent {self.label!r}: resolve_spec() it before fingerprinting")
        played = {key: self.model[key] for key in ("file", "weights_sha256", "timesteps")}
        identity = {
            "label": self.label,
            "kind": self.kind,
            "deterministic": self.deterministic,
            "model": played,
        }
        if self.zoo:
            identity["zoo"] = self.zoo  # a replay finds the weights in the package, not beside the run
        return identity


def _checkpoint_exists(path: str) -> bool:
    """True when PATH names something a checkpoint loader could open."""
    p = Path(path)
    return p.exists() or any(Path(f"{path}{suffix}").exists() for suffix in (".npz", ".zip", ".json"))


def _checkpoint_label(path: str, deterministic: bool) -> str:
    """`<run>/<stem>`, or the run directory's name when PATH is a directory."""
    p = Path(path.rstrip("/\\"))
    if p.is_dir():
        label = p.name
    else:
        stem = p.name.removesuffix(".zip").removesuffix(".json").removesuffix(".npz")
        parent = p.parent.name
        if parent == "checkpoints":  # <run>/checkpoints/step_N: the run is one level up
            parent = p.parent.parent.name
        label = f"{parent}/{stem}" if parent else stem
    return f"{label}-det" if deterministic else label


def parse_spec(text: str, max_budget: int | None = None) -> AgentSpec:
    """Parse one spec; an unknown kind, a missing checkpoint, or (with `max_budget`) a search whose
    budget is above it raises AgentSpecError."""
    spec = _parse_spec(text)
    if max_budget is not None and spec.budget is not None and spec.budget > max_budget:
        raise AgentSpecError(
            f"agent spec {text[:60]!r} asks for a budget of {spec.budget:,} per decision; at most "
            f"{max_budget:,} is allowed here"
        )
    return spec


def _parse_spec(text: str) -> AgentSpec:
    label, sep, kind = text.partition("=")
    # A path may itself hold '=': only treat the left side as a label when it looks like one.
    if not sep or os.sep in label or "/" in label or not label:
        label, kind = "", text
    if not kind.strip():  # '' would otherwise name the current folder as a checkpoint path
        what = f"names no agent after its label {label!r}" if label else "is empty"
        raise AgentSpecError(f"agent spec {text!r} {what}; accepted: {ACCEPTED}")
    if kind in BUILTIN_KINDS:
        return AgentSpec(label or kind, kind, text=text)
    if kind.startswith(PROBE_PREFIX):
        name = kind[len(PROBE_PREFIX) :]
        if not name:
            raise AgentSpecError(f"agent spec {text!r} names no probe; accepted: {ACCEPTED}")
        return AgentSpec(label or kind, "probe", name, text=text)
    if kind == ZOO or kind.startswith(f"{ZOO}:"):
        return _zoo_spec(text, label or kind, kind.partition(":")[2] if ":" in kind else None)
    if kind.startswith(("ismcts:", "oracle:")):  # the oracle is the same search, every hand face up
        from fowlplay.evaluation.ismcts import parse_settings

        try:
            settings = parse_settings(kind)
        except ValueError as err:
            raise AgentSpecError(f"agent spec {text!r}: {err}; accepted: {ACCEPTED}") from None
        return AgentSpec(label or kind, "ismcts", text=text, budget=settings.simulations)
    for prefix, deterministic in CHECKPOINT_PREFIXES.items():
        if kind.startswith(prefix):
            path = kind[len(prefix) :]
            if not path:
                raise AgentSpecError(f"agent spec {text!r} names no checkpoint path; accepted: {ACCEPTED}")
            if not _checkpoint_exists(path):
                raise AgentSpecError(
                    f"agent spec {text!r}: no checkpoint at {path!r} (looked for the path, "
                    f"{path}.npz, {path}.zip and {path}.json); accepted: {ACCEPTED}"
                )
            return AgentSpec(
                label or _checkpoint_label(path, deterministic), "checkpoint", path, deterministic, text
            )
    if _checkpoint_exists(kind):
        return AgentSpec(label or _checkpoint_label(kind, False), "checkpoint", kind, False, text)
    raise AgentSpecError(
        f"unknown agent spec {text!r}: not a built-in agent and no checkpoint file or run directory "
        f"at {kind!r}; accepted: {ACCEPTED}"
    )


def _zoo_spec(text: str, label: str, game: str | None) -> AgentSpec:
    """`zoo:GAME` as the checkpoint spec of the shipped file (verified), or `zoo` (game None) unresolved."""
    from fowlplay.evaluation import zoo

    if game is None:
        return AgentSpec(label, ZOO, text=text, zoo="")
    try:
        stem = zoo.path(game)
    except zoo.ZooError as err:
        raise AgentSpecError(f"agent spec {text!r}: {err}") from None
    return AgentSpec(label, "checkpoint", str(stem), False, text, zoo=game)


def _zoo_for(spec: AgentSpec, env) -> AgentSpec:
    """A `zoo` spec as the zoo agent of `env`'s game; a zoo agent that does not fit `env` is an
    AgentSpecError that names the player count it plays at."""
    from fowlplay.evaluation import zoo

    game = env.metadata["name"]
    try:
        if spec.kind == ZOO:
            spec = dataclasses.replace(spec, kind="checkpoint", path=str(zoo.path(game)), zoo=game)
        players = zoo.entry(spec.zoo)["players"]
    except zoo.ZooError as err:
        raise AgentSpecError(f"agent {spec.label!r}: {err}") from None
    seats = len(env.possible_agents)
    if spec.zoo != game or seats != players:
        raise AgentSpecError(
            f"agent {spec.label!r}: the zoo agent of {spec.zoo} plays it with {players} players; "
            f"this game is {game} with {seats}"
        )
    return spec


def parse_specs(texts: list[str]) -> list[AgentSpec]:
    """Parse specs and make their labels unique (a repeated label gets #2, #3, ...)."""
    specs = [parse_spec(t) for t in texts]
    seen: dict[str, int] = {}
    unique = []
    for spec in specs:
        count = seen.get(spec.label, 0) + 1
        seen[spec.label] = count
        if count > 1:
            spec = dataclasses.replace(spec, label=f"{spec.label}#{count}")
        unique.append(spec)
    return unique


def _checkpoint_module():
    """`training.checkpoint`, with an error naming the extra to install when it cannot be imported."""
    try:
        from fowlplay.training import checkpoint
    except ImportError as err:
        raise AgentSpecError(
            f"checkpoint agents need the training package and its libraries ({err}); "
            "install them with: pip install 'fowlplay[eval]'"
        ) from err
    return checkpoint


def check_spec(spec: AgentSpec, env) -> None:
    """Refuse, before any game is played, a checkpoint that does not fit `env` (reads metadata only)."""
    if spec.kind == "baseline":
        name = env.metadata["name"]
        if not hasattr(envs.env_module(name), "BaselineAgent"):
            raise AgentSpecError(f"{name} has no baseline agent; accepted: {ACCEPTED}")
    if spec.kind == "baseline-v0":
        name = env.metadata["name"]
        if not hasattr(envs.env_module(name), "BaselineAgentV0"):
            raise AgentSpecError(
                f"{name} has no frozen baseline-v0 (only Chicken keeps one); use baseline; accepted: {ACCEPTED}"
            )
    if spec.kind == "probe":
        from fowlplay.evaluation.probe_agents import probe_names

        name = env.metadata["name"]
        if spec.path not in probe_names(name):
            raise AgentSpecError(
                f"agent spec {spec.text!r}: {name} has no probe {spec.path!r}; its probes: "
                f"{', '.join(probe_names(name))}"
            )
    if spec.kind != "checkpoint":
        return
    checkpoint = _checkpoint_module()
    try:
        checkpoint.check_compatible(checkpoint.read_metadata(spec.path), env)
    except checkpoint.CheckpointError as err:
        raise AgentSpecError(f"agent {spec.label!r}: {err}") from err


def resolve_spec(spec: AgentSpec, env, trust_checkpoint: bool = False) -> AgentSpec:
    """The spec, checked against `env`; a checkpoint's pinned to the file and weights it plays."""
    if spec.model is not None:
        return spec
    if spec.zoo is not None:
        spec = _zoo_for(spec, env)
    check_spec(spec, env)
    if spec.kind != "checkpoint":
        return spec
    checkpoint = _checkpoint_module()
    try:
        _, metadata = checkpoint.load_policy(spec.path, trust_checkpoint=trust_checkpoint)
    except checkpoint.CheckpointError as err:
        raise AgentSpecError(f"agent {spec.label!r}: {err}") from err
    model = {
        "checkpoint": str(Path(metadata["stem"]).resolve()),
        "file": str(Path(metadata["weights_file"]).resolve()),
        "weights_sha256": metadata["weights_sha256"],
        "timesteps": metadata["timesteps"],
    }
    return dataclasses.replace(spec, model=model)


class ModelCache:
    """Loads each checkpoint once per process, so every seat an agent holds shares one policy."""

    def __init__(self, trust_checkpoint: bool = False) -> None:
        self.trust_checkpoint = trust_checkpoint
        self._models: dict[str, object] = {}

    def model(self, spec: AgentSpec, env):
        """The policy a checkpoint spec plays, checked against `env` (and against its pinned weights)."""
        spec = resolve_spec(spec, env, self.trust_checkpoint)
        key = spec.model["checkpoint"]
        if key not in self._models:
            checkpoint = _checkpoint_module()
            try:
                policy, metadata = checkpoint.load_policy(
                    key, self.trust_checkpoint, expect_sha256=spec.model["weights_sha256"]
                )
                checkpoint.check_compatible(metadata, env)
            except checkpoint.CheckpointError as err:
                raise AgentSpecError(f"agent {spec.label!r}: {err}") from err
            self._models[key] = policy
        return self._models[key]


def build_agent(spec: AgentSpec, env, seed: int | None = None, models: ModelCache | None = None) -> Agent:
    """A fresh agent for one seat of `env`."""
    if spec.kind == "random":
        return RandomAgent(seed)
    if spec.kind == "baseline":
        return envs.env_module(env.metadata["name"]).BaselineAgent(env.unwrapped.options, seed=seed)
    if spec.kind == "baseline-v0":
        return envs.env_module(env.metadata["name"]).BaselineAgentV0(env.unwrapped.options, seed=seed)
    if spec.kind == "probe":
        from fowlplay.evaluation.probe_agents import make_probe

        return make_probe(env.metadata["name"], spec.path, env.unwrapped.options, seed)
    if spec.kind == "ismcts":
        from fowlplay.evaluation.ismcts import make_ismcts_agent

        # The search plans on `env` itself (clone and re-deal), so it must be the env it plays in.
        return make_ismcts_agent(spec.text.rpartition("=")[2], env, seed)
    try:
        from fowlplay.training.agent import PolicyAgent
    except ImportError as err:
        raise AgentSpecError(
            f"checkpoint agents need training.policy ({err}); install them with: pip install 'fowlplay[eval]'"
        ) from err
    policy = (models or ModelCache()).model(spec, env)
    return PolicyAgent(policy, deterministic=spec.deterministic, seed=seed)


def make_agent(text: str, env, seed: int | None = None, trust_checkpoint: bool = False) -> Agent:
    """An agent from a spec string, checked against `env` (used by fowlplay-play as well)."""
    spec = resolve_spec(parse_spec(text), env, trust_checkpoint)
    return build_agent(spec, env, seed, ModelCache(trust_checkpoint))
