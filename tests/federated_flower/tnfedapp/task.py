"""The experiment both runtimes run: digits split by Dirichlet label skew, a small classifier."""

from torchnative.nn.federated import digits

SEED = 0


def model_fn():
    return digits.model(seed=SEED, hidden=16)


def data_fn(participants: int, alpha: float):
    x, y, _, _ = digits.load(seed=SEED)
    parts = digits.dirichlet_split(y, participants, alpha, seed=SEED)
    return lambda pid: digits.batches(x[parts[pid - 1]], y[parts[pid - 1]])
