"""Quadrat's rules: the four-slot engine with pairs of one suit, won when the stock is used up."""

from __future__ import annotations

from quadrat_env.core.checks import whole
from quadrat_env.slots import kernel as k
from quadrat_env.slots.rules import SlotRules


def quadrat(n_cards: int = 32) -> SlotRules:
    """Quadrat: lay off two upcards of one suit. Won iff the stock is used up."""
    pack_size = whole("n_cards", n_cards)
    if pack_size not in (32, 52):
        raise ValueError(f"n_cards must be 32 or 52, got {pack_size!r}")
    name = "Quadrat" if pack_size == 32 else f"Quadrat{pack_size}"
    return SlotRules(name, pack_size, match_rank=False, max_group=2, win_needs_clear=False,
                     num_moves=k.NUM_PAIRS)  # fmt: skip
