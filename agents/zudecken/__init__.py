"""The Zudecken study's agents: the exact solver (with its memo and canonical key), the optimal agent,
and the networks made for Zudecken's suit-by-rank structure (the afterstate network among them)."""

from quadrat_env.agents.registry import register_agent, register_network

_HERE = "quadrat_env.agents.zudecken"
#: Where the networks lived before (model files saved then record these modules).
_OLD = ("quadrat_env.agents.features", "agents.features")

register_agent("optimal", f"{_HERE}.optimal:OptimalAgent", available=f"{_HERE}.optimal:solvable",
               help="the exact optimal policy: Zudecken variants of up to 10 ranks a suit")  # fmt: skip
register_network("zudecken", f"{_HERE}.features:ZudeckenFeatures", _OLD)
register_network("zudecken-moves", f"{_HERE}.features:ZudeckenMoveFeatures", _OLD)
register_network(
    "zudecken-afterstates",
    f"{_HERE}.features:ZudeckenAfterstates",
    _OLD,
    jax=f"{_HERE}.jax_afterstates:Afterstates",
)
