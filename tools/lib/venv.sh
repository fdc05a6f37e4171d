# Sourced by the test tools' setup scripts: a throw-away Python venv of pinned PyPI packages.
#   ensure_venv DIR STAMP PACKAGE...   creates DIR (physical path) with PACKAGE... unless DIR/STAMP
#                                      says it is done; pip's output to stderr
# Test tools only: tessera never needs Python at run time.

ensure_venv() {
  local dir=$1 stamp=$2
  shift 2
  [ -f "$dir/$stamp" ] && return 0
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
    echo "venv: installing python3-venv" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  mkdir -p "$dir"
  # The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
  local real
  real=$(cd "$dir" && pwd -P)
  python3 -m venv --clear "$real"
  "$real/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
  touch "$real/$stamp"
}
