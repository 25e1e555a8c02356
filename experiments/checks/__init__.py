"""The project's checks of itself, each a command that wrote one committed record in ``results/``:
``jax_equal`` (every ID's JAX rules against its compiled rules, step by step: ``jax_equal.json``),
``model_equal`` (a JAX learner's exported model against its JAX policy: ``model_equal/``) and
``startup`` (seconds from ``import quadrat_env`` to the first step: the speed page's table)."""
