"""The jitted trainer (`trainer: jax`): masked PPO on the batched JAX twins (ppo.py), the run around
it (trainer.py), the imitation warm start (imitation.py) and `python -m fowlplay.training.jitted.split`,
which times where an update's time goes (split.py). Named `jitted`, not `jax`, so that it never
shadows the library."""
