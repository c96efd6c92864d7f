"""An Engine rank of the digits experiment with differential privacy on both sides: participants
clip and noise what they send (LocalGaussian), the coordinator clips each update again and
averages with the fixed denominator (FixedClipping). Arguments: the experiment's, plus
--local-clip, --local-z, --server-clip, --server-z (before them)."""

import sys

from torchnative.nn.federated import experiment
from torchnative.nn.federated.privacy import FixedClipping, LocalGaussian
from torchnative.nn.federated.transform import Transform


class Both(Transform):
    def __init__(self, local, server):
        self.local, self.server = local, server

    def on_send(self, update, ctx):
        return self.local.on_send(update, ctx)

    def on_receive(self, updates, weights, ctx):
        return self.server.on_receive(updates, weights, ctx)


def main():
    argv = sys.argv[1:]
    opts = {}
    for key in ("--local-clip", "--local-z", "--server-clip", "--server-z"):
        i = argv.index(key)
        opts[key] = float(argv[i + 1])
        del argv[i:i + 2]
    rank = int(argv[argv.index("--rank") + 1])
    t = Both(LocalGaussian(opts["--local-clip"], opts["--local-z"], seed=rank),
             FixedClipping(opts["--server-clip"], opts["--server-z"], seed=0))
    return experiment.worker(argv, transform=t)


if __name__ == "__main__":
    sys.exit(main())
