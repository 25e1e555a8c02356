"""The env class the four-slot games share: their pictures."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from quadrat_env.core.env import PatienceEnv
from quadrat_env.slots.picture import slots_frame, slots_text
from quadrat_env.slots.rules import SlotState


class SlotEnv(PatienceEnv):
    """What the Quadrat and Zudecken envs share: pictures with the upcards in ``rows`` rows."""

    rows: ClassVar[int] = 1

    def draw_text(self, state: SlotState) -> str:
        return slots_text(self.game.name, state, rows=self.rows)

    def draw_rgb(self, state: SlotState) -> np.ndarray:
        return slots_frame(self.game.name, state, rows=self.rows)
