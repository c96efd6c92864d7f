"""`torchnative federated` refuses bad options before starting any process."""

import pytest

from torchnative import cli


@pytest.mark.parametrize("argv,needle", [
    (["federated", "--aggregator", "FedNope"], "unknown aggregator 'FedNope'"),
    (["federated", "--alpha", "0"], "--alpha > 0"),
    (["federated", "--participants", "0"], "--participants and --rounds must be >= 1"),
])
def test_bad_options_refused(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert needle in capsys.readouterr().err


def test_listed_in_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "federated" in capsys.readouterr().out
