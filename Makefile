# timerkit: the two commands of the README, and a few helpers.
#   make bench     the main job: install what is missing, build in Release, run the
#                  quick benchmark suite, render its figures and report
#   make test      the whole test suite (see scripts/test.sh)
#   make example   build and run the example programs (examples/*.c) on every engine
#   make abi-baseline  write tests/abi/timerkit.abi from a shared build (after a deliberate
#                  ABI change: tests/abi/README.md)
#   make full      the full benchmark suite (long)
#   make docs      the API reference (Doxygen) in build/docs/docs/api/html
#   make format    clang-format the tree;  make format-check  fail if it is not formatted
JOBS ?= 2
# the engines, from their one list (engines/CMakeLists.txt)
ENGINES = $(shell sed -n '/^set(TIMERKIT_ENGINES/,/^)/s/^  \([a-z][a-z0-9_]*\)$$/\1/p' engines/CMakeLists.txt)
# the example programs, one file each (examples/CMakeLists.txt)
EXAMPLES = $(basename $(notdir $(wildcard examples/*.c)))
SUITE ?= quick
RESULTS ?= results/$(shell date -u +%Y%m%d-%H%M%S)-$(SUITE)

.PHONY: all deps build test bench full example abi-baseline docs format format-check clean

all: build

deps:
	@scripts/install-deps.sh all

build: deps
	cmake -S . -B build/default -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIMERKIT_WERROR=ON
	cmake --build build/default -j $(JOBS)

test: deps
	@scripts/test.sh

bench: deps
	@scripts/bench.sh $(SUITE) "$(RESULTS)"

full:
	@$(MAKE) --no-print-directory bench SUITE=full

example: deps
	cmake -S . -B build/default -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIMERKIT_WERROR=ON -DTIMERKIT_BUILD_BENCH=OFF
	cmake --build build/default -j $(JOBS) --target $(EXAMPLES:%=tk_%)
	for x in $(EXAMPLES); do for e in $(ENGINES); do build/default/examples/tk_$$x $$e || exit 1; done; done

abi-baseline: deps
	cmake -S . -B build/shared -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIMERKIT_WERROR=ON -DBUILD_SHARED_LIBS=ON -DTIMERKIT_BUILD_BENCH=OFF
	cmake --build build/shared -j $(JOBS) --target abi-baseline

# Only the library is configured: the reference needs neither the tests nor the benchmarks.
docs:
	@scripts/install-deps.sh docs
	cmake -S . -B build/docs -DTIMERKIT_BUILD_TESTS=OFF -DTIMERKIT_BUILD_BENCH=OFF -DTIMERKIT_BUILD_EXAMPLES=OFF
	cmake --build build/docs --target docs
	@echo "API reference: build/docs/docs/api/html/index.html"

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.cc')
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf build build-*
