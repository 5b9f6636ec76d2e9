"""`trainer: rllib`: self-play on Ray RLlib, on this machine or a Ray cluster (the `rllib` extra).

- env.py: a game as RLlib's `PettingZooEnv` (`illegal_action="lose"`) and the policy-mapping
  function that seats the learner and the frozen opponent pool per episode.
- modules.py: the masked actor-critic (SB3's layout, so our checkpoints hold it), random and baseline.
- trainer.py: the run, its checkpoints (ours plus RLlib's state) and logs, on `training.loop`.

Nothing here is imported unless a config says `trainer: rllib`; Ray loads only then.
"""
