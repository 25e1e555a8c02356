"""rgb_array pictures against committed reference images; terminal play and recording."""

from __future__ import annotations

import io
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image, ImageSequence
from quadrat_env.experiments import play, record

DATA = Path(__file__).resolve().parents[1] / "data"
# A fixed position per game: a seeded deal after a few greedy moves.
POSITIONS = {"Quadrat": (11, 2), "Quadrat52": (12, 2), "Zudecken": (13, 3), "Quadrille": (1, 60)}


def frame_after(game: str, seed: int, moves: int) -> np.ndarray:
    env = gym.make(play.GAMES[game], render_mode="rgb_array")
    _, info = env.reset(seed=seed)
    rule = env.unwrapped.game.greedy
    for _ in range(moves):
        _, _, done, _, info = env.step(rule(info["action_mask"]))
        assert not done
    return env.render()


@pytest.mark.parametrize("game", sorted(POSITIONS))
def test_frame_matches_reference_image(game, request):
    frame = frame_after(game, *POSITIONS[game])
    path = DATA / f"{game}.png"
    if request.config.getoption("--regen-images", default=False):  # pragma: no cover
        Image.fromarray(frame).save(path)
    reference = np.asarray(Image.open(path).convert("RGB"))
    assert frame.shape == reference.shape
    diff = np.abs(frame.astype(int) - reference.astype(int))
    assert diff.mean() < 1.0 and (diff.max(axis=2) > 40).mean() < 0.005, f"{game}: picture changed"


def test_reference_images_differ_between_positions():
    # the comparison above can fail: two different positions give clearly different frames
    a, b = frame_after("Zudecken", 13, 3), frame_after("Zudecken", 13, 4)
    assert np.abs(a.astype(int) - b.astype(int)).mean() > 1.0


def run_play(game: str, seed: int, keys: str) -> tuple[int, str]:
    out = io.StringIO()
    code = play.play(play.GAMES[game], seed, io.StringIO(keys), out)
    return code, out.getvalue()


def test_terminal_play_a_whole_game_with_a_hint_and_a_bad_entry():
    env = gym.make(play.GAMES["Quadrat"])
    _, info = env.reset(seed=8)
    moves, done = [], False
    while not done:  # the greedy line of a deal that it wins
        moves.append(env.unwrapped.game.greedy(info["action_mask"]))
        _, _, done, _, info = env.step(moves[-1])
    assert info["won"]
    keys = "h\nseven\n99\n" + "\n".join(map(str, moves)) + "\n"
    code, text = run_play("Quadrat", 8, keys)
    assert code == 0 and "You won!" in text
    assert "greedy suggests" in text and "planner suggests" in text
    assert "'seven' is not a legal move" in text and "'99' is not a legal move" in text
    assert "lay off slots" in text


def test_terminal_play_quit_and_end_of_input():
    code, text = run_play("Quadrille", 1, "0\nq\n")
    assert code == 1 and text.rstrip().endswith("quit") and "deal" in text
    code, text = run_play("Zudecken", 1, "")
    assert code == 1 and "no more input" in text


def test_record_writes_a_gif_and_a_png(tmp_path):
    agent = record.make_agent("greedy", play.GAMES["Zudecken"])
    result = record.record(play.GAMES["Zudecken"], agent, 18, tmp_path / "z.gif", fps=4)
    gif = Image.open(tmp_path / "z.gif")
    assert gif.n_frames == result["frames"] >= 2
    record.record(play.GAMES["Quadrat"], record.make_agent("random", "x"), 1, tmp_path / "q.png", 4)
    assert Image.open(tmp_path / "q.png").size[0] > 100
    with pytest.raises(ValueError, match="--agent must be"):
        record.make_agent("smart", play.GAMES["Zudecken"])


ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = re.findall(r"experiments\.record (.+) --out (docs/\S+)", (ROOT / "docs/usage.md").read_text())


def frames_of(path: Path) -> list[np.ndarray]:
    return [
        np.asarray(frame.convert("RGB"), dtype=np.int16) for frame in ImageSequence.Iterator(Image.open(path))
    ]


def test_every_picture_in_the_docs_has_its_command():
    pictures = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*") if p.suffix in (".gif", ".png")}
    assert pictures == {out for _, out in RECORDINGS}


@pytest.mark.parametrize(("args", "out"), RECORDINGS, ids=[out for _, out in RECORDINGS])
def test_the_recording_commands_make_the_committed_pictures(args, out, tmp_path, capsys):
    made = tmp_path / Path(out).name
    assert record.main([*args.split(), "--out", str(made)]) == 0
    ours, committed = frames_of(made), frames_of(ROOT / out)
    assert len(ours) == len(committed)
    # GIF palettes may differ a little between Pillow versions; another deal or move differs a lot
    assert all(np.abs(a - b).mean() < 2 for a, b in zip(ours, committed, strict=True))


@pytest.mark.parametrize("game", sorted(POSITIONS))
def test_human_mode_shows_the_frame_in_a_window(game, monkeypatch):
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # no screen on CI
    env = gym.make(play.GAMES[game], render_mode="human")
    env.unwrapped.metadata = {**env.unwrapped.metadata, "render_fps": 1000}  # no waiting in tests
    _, info = env.reset(seed=0)  # human mode draws on reset and on every step
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    shown = pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)
    expected = gym.make(play.GAMES[game], render_mode="rgb_array")
    _, info2 = expected.reset(seed=0)
    expected.step(int(np.flatnonzero(info2["action_mask"])[0]))
    assert np.array_equal(shown, expected.render())
    env.close()
