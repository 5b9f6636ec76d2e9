"""The SB3 trainers (`trainer: ppo`, `psro`, `dqn`): one seat of a game as a gymnasium env against
an opponent pool (selfplay.py, opponents.py, vec_env.py), the callback that fires the run's cadence
(callbacks.py), the masked DQN (dqn.py), the PSRO meta-game (psro.py) and the run (trainer.py)."""
