"""The benchmark commands in one room: `fowlplay-bench` (`cli`) with its AEC figures and anchors
(`aec`), the JAX twins' batched rollouts (`batched`, `--batched`) and the trainers' learner
decisions per second (`training`, `--training`; `python -m fowlplay.evaluation.benchmark.training`
compares settings and checkouts), and where a `trainer: jax` update's time goes (`split`,
`python -m fowlplay.evaluation.benchmark.split`)."""
