"""Hostile model files cost bounded resources: each crafted file below (about a megabyte or two on
disk) is refused in one line, its memory use while refused well under 300 MB."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from quadrat_env.experiments.publish import MODELS  # noqa: E402

SOURCE = MODELS / "Zudecken-ppo.zip"


def rebuild(path: Path, data: dict | None = None, extra: dict[str, bytes] | None = None) -> Path:
    """The shipped Zudecken PPO model with its ``data`` JSON and members replaced."""
    with zipfile.ZipFile(SOURCE) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if extra and info.filename in extra:
                continue
            body = src.read(info)
            if info.filename == "data" and data is not None:
                body = json.dumps(data).encode()
            dst.writestr(info.filename, body)
        for name, body in (extra or {}).items():
            dst.writestr(name, body)
    return path


def shipped_data() -> dict:
    with zipfile.ZipFile(SOURCE) as z:
        return json.loads(z.read("data"))


def encrypted(path: Path) -> Path:
    """The shipped model with every member marked encrypted (flag bit 0, in the local headers and the
    central directory: zipfile cannot write it, so the bytes are set)."""
    raw = bytearray(rebuild(path).read_bytes())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.find(signature)
        while at >= 0:
            raw[at + flags_at] |= 0x1
            at = raw.find(signature, at + 4)
    path.write_bytes(bytes(raw))
    return path


def with_policy_kwargs(value: dict) -> dict:
    return {**shipped_data(), "policy_kwargs": value}


CASES = {
    # zip bombs: hundreds of MB packed into well under a megabyte
    "bomb in data": (lambda p: rebuild(p, extra={"data": b" " * (200 << 20)}), "unpacks to over"),
    "256 MB of weights": (lambda p: rebuild(p, extra={"policy.pth": bytes(256 << 20)}), "unpacks to over"),
    "huge layers (JSON)": (
        lambda p: rebuild(p, with_policy_kwargs({"net_arch": [8000, 8000]})), "larger than quadrat_env"),
    "layer over 8192 units (JSON)": (
        lambda p: rebuild(p, with_policy_kwargs({"net_arch": [16000, 16000]})), "1..8192 units each"),
    "string net_arch (JSON)": (
        lambda p: rebuild(p, with_policy_kwargs({"net_arch": "os.system"})), "is not a list of layer sizes"),
    "huge afterstate network (JSON)": (
        lambda p: rebuild(p, with_policy_kwargs({"features_extractor_kwargs": {"channels": 100000}})),
        "features_extractor_kwargs"),
    "huge rollout": (lambda p: rebuild(p, {**shipped_data(), "n_steps": 10**9}), "n_steps"),
    "many members": (
        lambda p: rebuild(p, extra={f"m{i}": b"" for i in range(100)}), "holds 106 files"),
    "JSON nested 100,000 deep": (
        lambda p: rebuild(p, extra={"data": b"[" * 100_000 + b"]" * 100_000}), "not a saved SB3 model"),
    "an encrypted member": (encrypted, "encrypted"),
    "a number where a shape belongs": (
        lambda p: rebuild(p, {**shipped_data(), "observation_space": {":serialized:": "x", "_shape": 5}}),
        "malformed"),
}  # fmt: skip

#: One process imports torch and SB3 once, then loads each file it is sent in a child of its own
#: (``fork``), so each file's peak memory is measured alone, as in a fresh process (a child's peak
#: starts at its size when forked), without paying the imports again for each file.
MEASURER = """
import json, os, resource, sys
from quadrat_env.agents.safe_load import load_model
import torch, sb3_contrib, stable_baselines3  # loaded before the baseline
import gymnasium as gym, quadrat_env
gym.make("quadrat_env/Zudecken-v0")
print("READY", flush=True)
for path in map(str.strip, sys.stdin):
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            load_model(path, "ppo", "quadrat_env/Zudecken-v0")
            said = "LOADED\\n"
        except ValueError as err:
            said = "REFUSED " + str(err).replace("\\n", " ") + "\\n"
        said += f"MB {(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}\\n"
        os.write(write, said.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as child:
        said = child.read()
    status = os.wait()[1]
    print(json.dumps({"said": said, "status": status}), flush=True)
"""


@pytest.fixture(scope="module")
def measurer():
    """``measure(path)``: what loading ``path`` said (``REFUSED ...``, ``MB ...``) and its exit status."""
    proc = subprocess.Popen([sys.executable, "-c", MEASURER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    assert proc.stdout.readline().strip() == "READY"

    def measure(path: Path) -> dict:
        proc.stdin.write(f"{path}\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    yield measure
    proc.stdin.close()
    proc.wait(timeout=60)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_crafted_file_is_refused_in_one_line_with_bounded_memory(tmp_path, case, measurer):
    make, message = CASES[case]
    path = make(tmp_path / "model.zip")
    assert path.stat().st_size < 4 << 20
    out = measurer(path)
    assert out["status"] == 0, out
    lines = dict(line.split(" ", 1) for line in out["said"].splitlines())
    assert "REFUSED" in lines and message in lines["REFUSED"], out
    assert str(path) in lines["REFUSED"]  # every refusal names the file
    assert float(lines["MB"]) < 300, f"refusing it cost {lines['MB']} MB"


@pytest.mark.parametrize("case", sorted(CASES))
def test_quadrat_bench_refuses_a_crafted_file_in_one_line(tmp_path, capsys, case):
    from quadrat_env.experiments import compare

    make, message = CASES[case]
    path = make(tmp_path / "model.zip")
    with pytest.raises(SystemExit) as exc:
        compare.main(
            ["--env", "Zudecken", "--model", str(path), "--algo", "ppo", "--out", str(tmp_path / "out")]
        )
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("quadrat-bench: error")]) == 1
