"""What the commands share: run folders and checkpoints, the committed models' places, learning
curves, plots, the docs' generated sections, worker processes, the studies' hooks, the TD(0)
learner and the JAX learners' loop (``jax_learners/``). Nothing here is a user command."""
