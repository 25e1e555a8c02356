"""What the JAX learners share (``run``: the loop, checkpoints and files of a run; ``cli``: their
command line) and their jitted cores (``td``: afterstate TD(0); ``ppo``: PPO with action masks).
The commands are ``quadrat_env.experiments.td_jax`` and ``quadrat_env.experiments.ppo_jax``."""
