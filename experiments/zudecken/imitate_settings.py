"""The settings of an imitation run (``quadrat_env.experiments.zudecken.imitate``): one typed object whose
fields with a help text are the command line's options."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from quadrat_env.agents.zudecken.features import AFTER_LIMITS, EXTRACTORS, SCORES
from quadrat_env.experiments.zudecken.imitate_labels import ENV_ID, Collection

from quadrat_env import seeds

#: The losses ``fit`` knows, each with how a run's ``method`` names it.
LOSSES = {
    "bce": "per-move BCE",
    "softmax": "softmax of the winning moves",
    "ranked": "per-move BCE and ranking",
}
#: The games imitate trains on: 52 cards with the clairvoyant solver's labels, and every rung of the
#: ladder the exact solver plays (4 to 10 ranks a suit) with its exact optimal values as labels.
EXACT_ID = "quadrat_env/Zudecken32-v0"


def _exact_ids() -> tuple[str, ...]:
    from quadrat_env.registry import rules_for, spec_for

    sizes = {i: rules_for(i).pack_size for i in spec_for(ENV_ID).every_id}
    return tuple(sorted((i for i, size in sizes.items() if size <= 40), key=sizes.__getitem__))


EXACT_IDS = _exact_ids()
ENV_IDS = (ENV_ID, *EXACT_IDS)
LR_DECAYS = ("none", "cosine")


def _opt(default: Any, help: str, **argparse_kwargs: Any) -> Any:  # noqa: A002
    """A setting that is also a command-line option (``--name-with-dashes``)."""
    return field(default=default, metadata={"help": help, **argparse_kwargs})


@dataclass
class Settings:
    """Everything an imitation run depends on: the command line's options (each field with a help
    text is one), resolved. The run folder's ``config.yml`` is this object (with, once made, how
    round 0's labels were made)."""

    env_id: str = _opt(ENV_ID, "the game: Zudecken (52 cards; the solver's labels) or a pack of up to 10 "
                       "ranks, Zudecken16 ... Zudecken40 (the exact optimal values as labels)",
                       choices=ENV_IDS, flag="--env")  # fmt: skip
    algo: str = "maskable_ppo"
    method: str = ""
    seed: int = _opt(0, "training seed (its deals, the network's initial weights)")
    rounds: int = _opt(1, "round 0 follows winning moves, later rounds the network (DAgger); each "
                       "round's labels join the earlier ones")  # fmt: skip
    deals_per_round: int = _opt(150_000, "training deals played and labelled per round")
    epochs: int = _opt(4, "passes over the data, per round")
    eval_every: int = _opt(1, "epochs between validation checkpoints")
    epsilon: float = _opt(0.1, "share of random moves when collecting")
    features: str = _opt(SCORES, "the policy network's features", choices=(*EXTRACTORS, "none"))
    channels: int = _opt(32, "the afterstate network's channels a layer (--features zudecken-afterstates)")
    layers: int = _opt(4, "the afterstate network's exchangeable layers")
    hidden: int = _opt(64, "the afterstate network's head units")
    batch_size: int = 256
    learning_rate: float = 1e-3
    net_arch: list[int] | None = _opt(None, "hidden layer sizes of the policy and value networks (default: "
                                      "256 256; none with --features zudecken-afterstates, whose outputs "
                                      "are the logits)", nargs="+", metavar="UNITS")  # fmt: skip
    loss: str = _opt("bce", "bce: each move's P(still wins); softmax: the winning moves' shares per "
                     "decision; ranked: bce and each decision's order of moves",
                     choices=tuple(LOSSES))  # fmt: skip
    augment: bool = _opt(False, "train on copies of each decision with suits, ranks and slots renamed "
                         "at random")  # fmt: skip
    lr_decay: str = _opt("none", "learning rate over each round's epochs: constant, or cosine down to "
                         "1%%", choices=LR_DECAYS)  # fmt: skip
    label_samples: int = _opt(0, "label each move with its win share over this many sampled unseen "
                              "orders (0: whether it wins the true deal)")  # fmt: skip
    play_batch: int = _opt(0, "later rounds: the network plays N deals side by side, one batched "
                           "prediction per step (much faster; other random moves than the default 0, "
                           "one deal at a time)", metavar="N")  # fmt: skip
    labels: str | None = _opt(None, "round 0's labels: loaded from this .npz if it exists, else made "
                              "and saved there", metavar="PATH")  # fmt: skip
    behaviour: str | None = _opt(None, "round 0 plays this MaskablePPO model (10%% random moves) instead "
                                 "of following winning moves: labels where a player that cannot see "
                                 "the stock goes", metavar="MODEL")  # fmt: skip
    labels_made: dict[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.method:
            labels = "exact optimal values" if self.exact else "solver labels"
            self.method = f"imitation of {labels} ({LOSSES.get(self.loss, LOSSES['bce'])})"
        if self.net_arch is None:
            self.net_arch = [] if self.features == SCORES else [256, 256]

    def check(self) -> None:
        """Raise ``ValueError`` naming the first setting that cannot work."""
        if min(self.rounds, self.deals_per_round, self.epochs, self.eval_every) < 1:
            raise ValueError("--rounds, --deals-per-round, --epochs, --eval-every and --jobs must be >= 1")
        if self.label_samples < 0:
            raise ValueError("--label-samples must be >= 0")
        if self.exact and (self.label_samples or self.features != SCORES):
            raise ValueError(f"{self.env_id}: the labels are the exact values (no --label-samples), learned "
                             f"by the afterstate network (--features {SCORES})")  # fmt: skip
        if self.play_batch < 0:
            raise ValueError(f"--play-batch must be >= 0, got {self.play_batch}")
        if self.behaviour and self.labels:
            raise ValueError(
                "--behaviour and --labels exclude each other (shared labels follow winning moves)"
            )
        if self.features == SCORES and self.net_arch:
            raise ValueError(f"--net-arch does not apply to --features {SCORES} (its outputs are the logits)")
        for name in ("channels", "layers", "hidden"):
            value = getattr(self, name)
            if not 1 <= value <= AFTER_LIMITS[name]:
                raise ValueError(f"--{name} must be in 1..{AFTER_LIMITS[name]}, got {value}")
        if self.net_arch and min(self.net_arch) < 1:
            raise ValueError("--net-arch sizes must be >= 1")
        if not 0 <= self.epsilon <= 1:
            raise ValueError(f"--epsilon must be in [0, 1], got {self.epsilon}")
        seeds.imitation(self.seed, self.rounds * self.deals_per_round)  # raises if the seeds run out

    def config(self) -> dict[str, Any]:
        """As written to ``config.yml`` (``labels_made`` only once known)."""
        out = asdict(self)
        if out["labels_made"] is None:
            del out["labels_made"]
        return out

    @property
    def exact(self) -> bool:
        """Labels are the exact optimal values (the exact solver plays this pack)."""
        return self.env_id in EXACT_IDS

    def collection(self, first: bool) -> Collection:
        width = 0 if first else self.play_batch
        return Collection(self.epsilon, first, self.label_samples, width, self.env_id, self.exact)
