# Two commands for a new user on Debian 12 (see README.md):
#   make demo   installs dependencies, builds tern and runs the face-detection demo
#   make test   installs dependencies, builds release, asan and arm64, runs every test
# Other targets: build (release only), check (release tests only), conformance-report
# (regenerates docs/conformance.md), format, clean.

JOBS ?= $(shell nproc)
CTEST = ctest --output-on-failure -j $(JOBS)
TERN = build/release/tools/tern/tern

.PHONY: demo test build check deps deps-arm64 test-release test-asan test-arm64 \
        conformance-report format clean

deps:
	bash scripts/install-deps.sh

deps-arm64:
	bash scripts/install-deps.sh --arm64

build: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)

demo: build
	$(TERN) demo -o tern-demo.jpg

check: build
	cd build/release && $(CTEST)

# The ONNX backend test suite (Debian's libonnx-testdata) -> docs/conformance.md. Exits
# non-zero, after writing the report, when a case of an op tern supports fails.
conformance-report: build
	build/release/tests/conformance/tern_conformance --report docs/conformance.md

test-release: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)
	cd build/release && $(CTEST)

test-asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  TERN_TEST_PASS_SWEEP_MAX_PIXELS=0 $(CTEST)

# The release run checks every model with each graph pass off in turn; the sanitizer and
# qemu runs check every model with all passes on only (TERN_TEST_PASS_SWEEP_MAX_PIXELS=0):
# the passes are the same code in every build, and those runs are CI's slowest part.
# arm64: unit tests and every model case (RetinaFace at 640x640 took 7 s, UltraFace RFB-640
# 5 s under qemu on AMD Zen 4), under qemu-aarch64 (Cortex-A72).
# Debian 12's qemu-user (7.2) hangs when an arm64 program starts a thread on this host
# kernel, so tern's thread pool is capped at one thread there (TERN_NUM_THREADS_LIMIT=1).
ARM64_TEST_ENV = TERN_TEST_PASS_SWEEP_MAX_PIXELS=0 TERN_NUM_THREADS_LIMIT=1
test-arm64: deps-arm64
	cmake --preset arm64
	cmake --build --preset arm64 -j $(JOBS)
	cd build/arm64 && $(ARM64_TEST_ENV) $(CTEST)

test: deps-arm64 test-release test-asan test-arm64

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf build
