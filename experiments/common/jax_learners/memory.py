"""What a JAX run's training call takes in memory, said and checked before it is taken.

XLA reports the memory of a compiled program (its arguments, outputs and temporaries). The training
call is compiled ahead here, on the carry's shapes only (``jax.eval_shape``: nothing allocated),
and the jitted function then reuses that compilation, so the check costs no second compile. A run
that would not fit is refused in one line naming the setting that lowers it; a large one says what
it is about to take first, so that a process the kernel kills for memory has said why. An
out-of-memory error from XLA during the run (``RESOURCE_EXHAUSTED``) becomes the same kind of line.
"""

from __future__ import annotations

import sys
from typing import Any

import jax

from quadrat_env.core.checks import available_memory

#: Runs that take at least this much say so before they start.
SAY_FROM = 1 << 30
#: The share of the free memory a run may take.
SHARE = 0.8
LOWER = "lower --n-envs"


class OutOfMemory(RuntimeError):
    """The run does not fit (before it starts) or ran out (XLA's RESOURCE_EXHAUSTED)."""


def need(train: Any, carry_shapes: Any) -> int:
    """Bytes the training call ``train(carry, n_updates)`` takes at once, as XLA reports them."""
    compiled = train.lower(carry_shapes, 1).compile()  # 1: traced like the int the run passes
    m = compiled.memory_analysis()
    if m is None:  # a backend without the figure: nothing to check against
        return 0
    took = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    return int(took - m.alias_size_in_bytes)


def free_memory() -> tuple[int | None, str]:
    """Bytes free where the run's arrays live (the accelerator's memory, or the host's) and where."""
    device = jax.devices()[0]
    if device.platform != "cpu":
        stats = device.memory_stats() or {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0)), f"{device.platform} memory"
    return available_memory(), "memory"


def check(train: Any, carry_shapes: Any, n_envs: int) -> None:
    """Refuse (``OutOfMemory``) a run whose training call would take more than ``SHARE`` of the free
    memory; print what a large one is about to take."""
    bytes_needed = need(train, carry_shapes)
    free, where = free_memory()
    size = f"about {bytes_needed / 2**30:,.1f} GiB of {where}"
    if free is not None and bytes_needed > SHARE * free:
        raise OutOfMemory(f"n_envs {n_envs:,} takes {size}, more than {SHARE:.0%} of the "
                          f"{free / 2**30:,.1f} GiB free: {LOWER}")  # fmt: skip
    if bytes_needed >= SAY_FROM:
        print(f"training takes {size} (n_envs {n_envs:,})", file=sys.stderr, flush=True)


def out_of_memory(err: Exception, n_envs: int) -> OutOfMemory | None:
    """XLA's out-of-memory error as one line (None for any other error)."""
    if "RESOURCE_EXHAUSTED" not in str(err):
        return None
    return OutOfMemory(f"out of memory with n_envs {n_envs:,} (XLA: RESOURCE_EXHAUSTED): {LOWER}; "
                       "the last checkpoint stays")  # fmt: skip
