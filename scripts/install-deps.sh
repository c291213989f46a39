#!/usr/bin/env bash
# Installs everything tern's build, tests and demo need on Debian 12 (idempotent).
#   scripts/install-deps.sh          host (amd64) build, tests, demo
#   scripts/install-deps.sh --arm64  also the arm64 cross build and qemu-user to run it
# Needs root (or sudo). Safe to run again: apt skips what is already installed.
set -euo pipefail

want_arm64=0
for arg in "$@"; do
  case "$arg" in
    --arm64) want_arm64=1 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (expected --arm64)" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

host_pkgs=(
  build-essential cmake ninja-build git
  protobuf-compiler libprotobuf-dev
  libonnx-dev            # only for /usr/include/onnx/onnx.proto; tern never links libonnx
  libhwy-dev libstb-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-testdata        # ONNX backend test cases for tests/conformance (data only)
  clang-format            # `make format`
)
arm64_pkgs=(
  g++-aarch64-linux-gnu qemu-user
  libprotobuf-dev:arm64 libhwy-dev:arm64 libstb-dev:arm64 libfmt-dev:arm64
  libgtest-dev:arm64 libgmock-dev:arm64
)

missing=()
check_missing() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
}

if [ "$want_arm64" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
  updated=0
fi

check_missing "${host_pkgs[@]}"
[ "$want_arm64" = 1 ] && check_missing "${arm64_pkgs[@]}"

if [ ${#missing[@]} -gt 0 ] || [ "${updated:-1}" = 0 ]; then
  echo "install-deps: installing ${missing[*]:-}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all dependencies present"
