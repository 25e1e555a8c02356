"""The fuzz machines of scripts.fuzz, briefly, on every ID (the long run is a documented
command)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

import quadrat_env
from scripts.fuzz import BatchedEnvMachine, SingleEnvMachine, pinned

SETTINGS = settings(max_examples=8, stateful_step_count=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip


@pytest.mark.parametrize("env_id", quadrat_env.ENV_IDS)
@pytest.mark.parametrize("machine", [SingleEnvMachine, BatchedEnvMachine])
def test_fuzz_machine(machine, env_id):
    run_state_machine_as_test(pinned(machine, env_id), settings=SETTINGS)
