"""model_equal: bad input is one line and exit status 2 (the comparisons themselves run on the
tiny runs of test_td_jax and test_ppo_jax, which train what they compare)."""

from __future__ import annotations

import pytest

pytest.importorskip("jax")
pytest.importorskip("sb3_contrib")

from quadrat_env.experiments.checks import model_equal  # noqa: E402


@pytest.mark.parametrize(("files", "args", "message"), [
    ({}, [], "is not a td_jax or ppo_jax run"),
    ({"config.yml": "method: PPO from the reward, JAX\n"}, [], "not a finished run"),
    ({"config.yml": "- a list\n"}, [], "is not a td_jax or ppo_jax run"),
    ({}, ["--deals", "-1"], "need a whole number of deals"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, files, args, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(SystemExit) as stop:
        model_equal.main([str(tmp_path), *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert message in err and "Traceback" not in err
