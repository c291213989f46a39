#!/bin/sh
# ctest: BENCH --benchmark_list_tests lists its benchmarks and measures nothing, so the
# roofline cache stays empty (a roofline measured while a build loads the machine would be
# cached low, and every later run's roof% read against it).
# Usage: list_only_test.sh BENCH CACHE_DIR
set -eu
bench=$1
cache=$2
rm -rf "$cache"
mkdir -p "$cache"
out=$(XDG_CACHE_HOME="$cache" "$bench" --benchmark_list_tests)
if [ -z "$out" ]; then
  echo "$bench --benchmark_list_tests listed no benchmark" >&2
  exit 1
fi
written=$(find "$cache" -type f)
if [ -n "$written" ]; then
  echo "$bench --benchmark_list_tests wrote $written" >&2
  exit 1
fi
echo "$(echo "$out" | wc -l) benchmarks listed, nothing cached"
