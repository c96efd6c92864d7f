"""An Engine rank of the digits experiment with secure aggregation as its Transform.
Arguments: the experiment's, plus --view DIR (where the coordinator's view is saved) and
optionally --die-after-send (this participant exits right after sending its masked update) and
--threshold T (default 2; the neighbourhood is 3)."""

import os
import sys

from torchnative.nn.federated import experiment
from torchnative.nn.federated.secagg.engine_transform import SecureAggregation


class DieAfterSend(SecureAggregation):
    """Crashes between sending its masked update and the unmask stage: it never answers the
    coordinator's request for shares, and the process ends a few seconds later (once the update
    has surely left)."""

    @staticmethod
    def _answer_unmask_later(store, pid, me, ctx):
        import threading
        threading.Timer(5.0, lambda: os._exit(0)).start()


def main():
    argv = sys.argv[1:]
    i = argv.index("--view")
    view = argv[i + 1]
    del argv[i:i + 2]
    die = "--die-after-send" in argv
    if die:
        argv.remove("--die-after-send")
    threshold = 2
    if "--threshold" in argv:
        i = argv.index("--threshold")
        threshold = int(argv[i + 1])
        del argv[i:i + 2]
    cls = DieAfterSend if die else SecureAggregation
    return experiment.worker(argv, transform=cls(num_shares=3, threshold=threshold, view_dir=view))


if __name__ == "__main__":
    sys.exit(main())
