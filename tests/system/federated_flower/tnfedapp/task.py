"""The experiment both runtimes run: the engine's digits experiment (the same model, Dirichlet
split, batches and learning rate as `torchnative.nn.federated.experiment`)."""

from torchnative.nn.federated import digits

SEED = 0


def model_fn():
    return digits.model(SEED)


def data_fn(participants: int, alpha: float):
    x, y, _, _ = digits.load(SEED)
    parts = digits.dirichlet_split(y, participants, alpha, SEED)
    return lambda pid: digits.batches(x[parts[pid - 1]], y[parts[pid - 1]])
