"""`fowlplay-exploit`'s best response: a fresh MaskablePPO learner trained against a frozen agent that
plays every seat but the learner's, its training settings, and its learning curve.

The learner trains on the game's score-difference reward where the game has one (a lost game
still says by how much; with the win reward alone a learner that never wins has nothing to follow),
undiscounted (a discount makes a later loss look better than an earlier one, and so rewards
stalling): see `DEFAULT_SETTINGS` and docs/evaluation.md. Scoring it, and the command, are
`evaluation.exploit`.

A warm start (`warm_start`, fowlplay-exploit's `--warm-start baseline`) first fits the learner to the
game's baseline playing the learner's seat against the frozen agent (its moves by masked
cross-entropy, its value by the return of each game under the training reward), saves that as the
run's step-0 checkpoint, and continues from it with PPO: the learner starts where the baseline
stands against the agent instead of at random play, which in Murder, She Crows and Murder Most Fowl
a fresh learner never reached within its budget.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
from fowlplay import envs
from fowlplay.evaluation.agents import AgentSpec, ModelCache, build_agent

PROG = "fowlplay-exploit"
#: The label of the frozen agent in every seat but the learner's (and in the scoring tournament).
AGENT_LABEL = "agent"
#: Training settings of the best response, on top of `TrainConfig`'s defaults, when no --config is given:
#: the in-process layout of the game configs, and no reward for dragging a game to its cap. On top,
#: `default_settings` trains on the score reward where the game has one (`SCORE_REWARD`).
DEFAULT_SETTINGS: dict[str, Any] = {
    "truncation_reward": -1.0,
    "n_envs": 8,
    "vec_env": "batched",
    "checkpoint_every": 50_000,
    "tensorboard": False,
    "progress_bar": False,
    # Undiscounted: the reward comes at the game's end, and with a discount per decision a learner that
    # cannot win yet learns to lose later (a Chicken best response stretched its games from 67 to 357
    # decisions against the pre-issue-32 baseline and never won one), i.e. to stall. A gradient clip of
    # 10, not 0.5: score returns run to tens (a bust costs the sum drawn), the value loss then fills the
    # clipped norm of the joint gradient and the policy barely moves (approx KL about 0.001 an update).
    "ppo": {"n_steps": 128, "gamma": 1.0, "max_grad_norm": 10.0},
    "eval_every": 0,  # the ladder evaluation keeps a best checkpoint; the best response is scored as final
}
#: The training reward where the game's options have `reward_mode`: score differences, so that a lost
#: game still says by how much (the win reward gives a learner that never wins nothing to follow).
SCORE_REWARD: dict[str, Any] = {"reward_options": {"reward_mode": "score"}}
#: Config keys the command sets itself (with the flag that does); --set may not change them.
OWNED_KEYS = {
    "game": "--game",
    "seed": "--seed",
    "total_timesteps": "--total-timesteps",
    "out": "--out",
    "env_options.num_players": "--players",
    "opponents": "--agent (the frozen agent is the only opponent)",
    "trainer": "nothing: the best response is MaskablePPO (trainer ppo)",
}
#: Never trigger a snapshot of the learner: nothing would play it.
_NO_SNAPSHOTS = 10**15
#: Seeds run below this (the learner's, and each frozen agent's drawn from it).
SEED_LIMIT = 2**31 - 1
#: Warm starts: what a learner may start from (`--warm-start`), and the baseline decisions it imitates.
WARM_STARTS = ("none", "baseline")
WARM_DECISIONS = 20_000
#: Passes over the imitated decisions (a fresh order each), in minibatches of this size, at this rate.
WARM_EPOCHS, WARM_BATCH, WARM_LEARNING_RATE = 10, 256, 1e-3


# ----- the frozen agent as the opponent pool ---------------------------------------------------
class FrozenAgentPool:
    """The opponent pool of a best response: every opponent seat is a fresh, seeded copy of one
    agent spec, built on the learner's own environment (a search agent plans on it). A checkpoint
    is checked against the game it plays (`game_options`), not the learner's reward options."""

    def __init__(
        self, spec: AgentSpec, aec_env, models: ModelCache, game_options: dict | None = None
    ) -> None:
        self.spec, self.env, self.models = spec, aec_env, models
        if spec.kind == "checkpoint" and game_options is not None:
            self.env = envs.make(aec_env.metadata["name"], **game_options)

    def draw(self, rng: np.random.Generator) -> tuple[str, Any]:
        """(label, agent) for one seat; the agent is seeded from `rng`."""
        seed = int(rng.integers(SEED_LIMIT))
        return AGENT_LABEL, build_agent(self.spec, self.env, seed=seed, models=self.models)

    def available(self) -> dict[str, float]:
        """The one kind this pool plays."""
        return {AGENT_LABEL: 1.0}

    def set_latest(self, state: dict[str, np.ndarray]) -> None:
        """Ignored: the agent is frozen."""

    def add_snapshot(self, name: str, state: dict[str, np.ndarray]) -> None:
        """Ignored: the agent is frozen."""

    def snapshot_names(self) -> list[str]:
        """None: the learner never plays itself."""
        return []


class FrozenPoolFactory:
    """Builds a `FrozenAgentPool` per environment; one model cache, so in-process environments share a
    checkpoint's network (and `SelfPlayVecEnv` batches its moves). Picklable for subprocess workers."""

    def __init__(
        self, spec: AgentSpec, trust_checkpoint: bool = False, game_options: dict | None = None
    ) -> None:
        self.spec = spec
        self.models = ModelCache(trust_checkpoint)
        #: The options of the game the agent plays (the learner's env adds its reward options).
        self.game_options = game_options

    def __call__(self, aec_env) -> FrozenAgentPool:
        """The pool of the environment `aec_env`."""
        return FrozenAgentPool(self.spec, aec_env, self.models, self.game_options)


#: Agent kinds whose play reads the game's rewards (a search backs them up): against them the learner
#: keeps the game's own reward, since its reward options would change the agent it exploits.
REWARD_READING_KINDS = ("ismcts",)


def default_settings(game: str, agent_kind: str | None = None) -> dict[str, Any]:
    """`DEFAULT_SETTINGS` for `game`, with `SCORE_REWARD` where its rule options have a `reward_mode`
    (unless the agent is of a kind that reads the rewards)."""
    fields = {f.name for f in dataclasses.fields(envs.env_module(game).raw_env.options_cls)}
    score = "reward_mode" in fields and agent_kind not in REWARD_READING_KINDS
    return {"game": game, **DEFAULT_SETTINGS, **(SCORE_REWARD if score else {})}


def build_config(
    game: str,
    players: int,
    seed: int,
    total_timesteps: int,
    out: Path,
    config_path: Path | None,
    sets: dict,
    agent_kind: str | None = None,
):
    """The best response's `TrainConfig`: --config (or `default_settings`), --set, then what the command owns."""
    from fowlplay.training.config import ConfigError, apply_overrides, from_dict, load_config

    for key in sets:
        for owned, flag in OWNED_KEYS.items():
            if key == owned or key.startswith(owned + ".") or (owned.startswith(key + ".")):
                raise ConfigError(f"--set {key}: {PROG} sets {owned} itself; use {flag}")
    owned = {
        "seed": seed,
        "total_timesteps": total_timesteps,
        "out": str(out / "br"),
        "env_options.num_players": players,
        "trainer": "ppo",
        "opponents": {
            "random": 1.0,  # unused: FrozenAgentPool replaces the pool
            "baseline": 0.0,
            "latest": 0.0,
            "snapshot": 0.0,
            "snapshot_every": _NO_SNAPSHOTS,
            "snapshot_window": 1,
        },
    }
    overrides = {**sets, **owned}
    if config_path is None:
        return from_dict(apply_overrides(default_settings(game, agent_kind), overrides))
    as_written = load_config(config_path).game
    if as_written != game:
        raise ConfigError(f"config {config_path} is for {as_written}, but --game is {game}")
    return load_config(config_path, overrides)


# ----- training ---------------------------------------------------------------------------
# ----- the warm start -------------------------------------------------------------------------
def baseline_games(config, factory: FrozenPoolFactory, decisions: int) -> dict[str, np.ndarray]:
    """`decisions` decisions (whole games, the last one cut) of the game's baseline in the learner's
    seat (drawn per game) against the frozen agent in every other: observation, mask, action, and
    the seat's return of that game under the training reward (undiscounted, as the learner's)."""
    aec = envs.make(config.game, **config.training_options())
    pool = factory(aec)
    rng = np.random.default_rng([config.seed, 0xB5])  # the warm start's own stream
    baseline = envs.env_module(config.game).BaselineAgent(
        aec.unwrapped.options, seed=int(rng.integers(SEED_LIMIT))
    )
    rows: dict[str, list] = {"obs": [], "mask": [], "action": [], "value": []}
    while len(rows["action"]) < decisions:
        aec.reset(seed=int(rng.integers(SEED_LIMIT)))
        me = aec.possible_agents[int(rng.integers(len(aec.possible_agents)))]
        seats = {a: (baseline if a == me else pool.draw(rng)[1]) for a in aec.possible_agents}
        start, total = len(rows["action"]), 0.0
        for agent in aec.agent_iter():
            observation, reward, terminated, truncated, _ = aec.last()
            total += float(reward) if agent == me else 0.0
            if terminated or truncated:
                aec.step(None)
                continue
            action = seats[agent].act(observation["observation"], observation["action_mask"])
            if agent == me:
                rows["obs"].append(np.asarray(observation["observation"], np.float32))
                rows["mask"].append(np.asarray(observation["action_mask"], bool))
                rows["action"].append(int(action))
            aec.step(action)
        rows["value"] += [total] * (len(rows["action"]) - start)
    return {key: np.asarray(value[:decisions]) for key, value in rows.items()}


def imitate(model, data: dict[str, np.ndarray], seed: int) -> dict:
    """Fit `model.policy` to `data` (masked cross-entropy of the actions plus the value loss) with
    an optimizer of its own, so PPO starts with a fresh one; what the fit reached on a held-out tenth."""
    import torch

    policy = model.policy
    generator = torch.Generator().manual_seed(seed)
    tensors = {k: torch.as_tensor(v) for k, v in data.items()}
    order = torch.randperm(len(data["action"]), generator=generator)
    held, fitted = order[: max(1, len(order) // 10)], order[max(1, len(order) // 10) :]
    optimizer = torch.optim.Adam(policy.parameters(), lr=WARM_LEARNING_RATE)

    def losses(rows):
        distribution = policy.get_distribution(tensors["obs"][rows], action_masks=tensors["mask"][rows])
        cross_entropy = -distribution.log_prob(tensors["action"][rows]).mean()
        value = policy.predict_values(tensors["obs"][rows]).squeeze(-1)
        agreement = (distribution.distribution.probs.argmax(-1) == tensors["action"][rows]).float().mean()
        return cross_entropy, ((value - tensors["value"][rows].float()) ** 2).mean(), agreement

    policy.set_training_mode(True)
    for _ in range(WARM_EPOCHS):
        for batch in fitted[torch.randperm(len(fitted), generator=generator)].split(WARM_BATCH):
            cross_entropy, value_loss, _ = losses(batch)
            optimizer.zero_grad()
            (cross_entropy + 0.5 * value_loss).backward()
            optimizer.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        cross_entropy, value_loss, agreement = (float(x) for x in losses(held))
    return {
        "decisions": len(order),
        "epochs": WARM_EPOCHS,
        "cross_entropy": cross_entropy,
        "value_loss": value_loss,
        "agreement": agreement,
    }


def warm_start(config, factory: FrozenPoolFactory, decisions: int | None = None) -> dict:
    """A new best-response run in `config.run_dir()` whose step-0 checkpoint imitates the baseline
    against the frozen agent (`baseline_games`, `imitate`); PPO then resumes from it. Returns the fit."""
    from fowlplay.evaluation.report import write_json
    from fowlplay.training.checkpoint import make_metadata, save_checkpoint
    from fowlplay.training.loop import write_config
    from fowlplay.training.sb3.trainer import close_vec_env, make_model, make_vec_env
    from fowlplay.training.train import prepare_run_dir

    run_dir = config.run_dir()
    prepare_run_dir(run_dir, overwrite=True)
    vec_env = make_vec_env(config, factory)
    try:
        model = make_model(config, vec_env)
        data = baseline_games(config, factory, decisions or WARM_DECISIONS)
        fit = imitate(model, data, config.seed)
        aec = envs.make(config.game, **config.env_options)
        metadata = make_metadata(aec, config.to_dict(), config.seed, 0, "periodic")
        save_checkpoint(model, run_dir / "checkpoints" / "step_0", metadata, run_dir=run_dir)
        write_config(config, run_dir)
    finally:
        close_vec_env(vec_env)
    (run_dir / "logs").mkdir(exist_ok=True)
    write_json(run_dir / "logs" / "imitation.json", fit)
    return fit


def train_best_response(
    config, factory: FrozenPoolFactory, trust_checkpoint: bool = False, warm: str = "none"
) -> dict:
    """Train (or continue, or find finished) the best response in `config.run_dir()`: its timesteps,
    whether the safety cap (max_minutes) cut it short, the training's wall time, and whether it
    trained now. Continuing loads only files the run's record vouches for, unless `trust_checkpoint`
    (`training.train.resume`)."""
    from fowlplay.envs.runtime.untrusted import read_json
    from fowlplay.training.checkpoint import CheckpointError, read_metadata, resolve
    from fowlplay.training.train import resume, train

    run_dir = config.run_dir()
    log = run_dir / "training.json"
    if (run_dir / "final.json").exists():
        timesteps = int(read_metadata(run_dir / "final")["timesteps"])
        try:
            done = read_json(log) if log.exists() else {}
        except (OSError, ValueError):
            done = {}  # the wall time is only reported
        done = done if isinstance(done, dict) else {}
        return {
            "timesteps": timesteps,
            "cut_short": timesteps < config.total_timesteps,
            "seconds": done.get("seconds"),
            "trained_now": False,
        }
    try:
        if not run_dir.is_dir():  # resolve() takes a missing folder for a checkpoint stem
            raise CheckpointError(f"run directory {run_dir} does not exist")
        resolve(run_dir)
    except CheckpointError:  # nothing saved yet (a new run, or one stopped before its first checkpoint)
        if warm == "none":
            result = train(config, overwrite=True, verbose=False, pool_factory=factory)
        else:  # a step-0 checkpoint that imitates the baseline, then PPO from it
            warm_start(config, factory)
            result = resume(run_dir, verbose=False, pool_factory=factory, trust_checkpoint=trust_checkpoint)
    else:
        result = resume(run_dir, verbose=False, pool_factory=factory, trust_checkpoint=trust_checkpoint)
    done = {"timesteps": result.timesteps, "cut_short": result.stopped_by_time, "seconds": result.seconds}
    from fowlplay.evaluation.report import write_json

    write_json(log, done)
    return {**done, "trained_now": True}


def learning_curve(run_dir: Path) -> list[dict]:
    """The training log as points: decisions, win rate over the last episodes against the agent, and
    mean episode return (as SB3 logs them after each rollout)."""
    points: dict[int, dict] = {}
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

    for path in sorted((run_dir / "logs").glob("progress*.csv")):
        try:  # within bounds: a link to a device or a pipe in the log's place is passed over
            text = read_bytes(path, 256 * 2**20).decode("utf-8", errors="replace")
        except (OSError, UntrustedFileError):
            continue
        for row in csv.DictReader(text.splitlines()):
            try:
                steps = int(float(row["time/total_timesteps"]))
            except (KeyError, TypeError, ValueError, OverflowError):
                continue
            points[steps] = {
                "timesteps": steps,
                "win_rate": _number(row.get(f"selfplay/win_rate_{AGENT_LABEL}")),
                "episode_return": _number(row.get("rollout/ep_rew_mean")),
            }
    return [points[k] for k in sorted(points)]


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def plot_learning_curve(path: Path, record: dict) -> None:
    """Training win rate and episode return against decisions, with the final duplicate-match score."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from fowlplay.evaluation.report import _save_figure

    curve = record["learning_curve"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for ax, key, label in (
        (top, "win_rate", "training win rate vs agent\n(last 200 episodes)"),
        (bottom, "episode_return", "mean episode return"),
    ):
        xs = [p["timesteps"] for p in curve if p[key] is not None]
        ys = [p[key] for p in curve if p[key] is not None]
        ax.plot(xs, ys, color="tab:blue", label=label)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    own = record["best_response"]  # the learner's own score, whichever candidate was strongest
    top.errorbar(
        [record["total_timesteps"]],
        [own["score"]],
        # max(0, ...): the Wilson bound of a perfect record may sit a rounding error past the score.
        yerr=[
            [max(0.0, own["score"] - own["score_lo"])],
            [max(0.0, own["score_hi"] - own["score"])],
        ],
        fmt="o",
        color="tab:red",
        capsize=4,
        label=f"duplicate-match score, {record['matches']} matches (95% CI)",
    )
    top.axhline(record["fair_score"], color="grey", linestyle="--", label="score of an equal agent")
    top.set_ylim(-0.02, 1.02)
    top.legend(fontsize=8, loc="upper left")
    bottom.set_xlabel("best-response decisions")
    cut = " (cut short by max_minutes)" if record["cut_short"] else ""
    top.set_title(
        f"{record['game']}, {record['players']} players: best response to {record['agent']['spec']}{cut}"
    )
    fig.tight_layout()
    _save_figure(fig, path)
