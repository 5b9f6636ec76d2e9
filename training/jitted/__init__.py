"""The jitted trainer (`trainer: jax`): masked PPO on the batched JAX twins (ppo.py), the run around
it (trainer.py), and the imitation warm start (imitation.py); `python -m fowlplay.evaluation.benchmark.split`
times where an update's time goes. Named `jitted`, not `jax`, so that it never
shadows the library."""
