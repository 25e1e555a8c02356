"""The patiences, one folder each; importing this package registers them all."""

from quadrat_env.games import quadrat, zudecken, quadrille  # noqa: I001  (the order of ENV_IDS)

__all__ = ["quadrat", "quadrille", "zudecken"]
