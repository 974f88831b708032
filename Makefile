# Paceline — the commands a user runs.
#   make up      install what is missing, build the binary, start an all-in-one cluster (Ctrl-C
#                stops it)
#   make test    install what is missing, build the release and run every test; build the unit
#                tests of the libraries without protobuf/gRPC with ASan/UBSan and run them
#   make test-asan-full   every test but the heaviest under ASan/UBSan (about an hour)
#   make bench   run the benchmarks (short versions, minutes); reports into bench/results/
#   make bench-full   the published sizes (50,000 hosts, 1,000,000 tasks; ~2 minutes)
#   make fuzz    run each fuzzer briefly
#   make bench-ha   PostgreSQL: the scale benchmark at 5,000 hosts / 200,000 tasks, failover
#                   time over 10 kills of the leader and 10 of the database's primary under
#                   Patroni (a few minutes)
#   make bench-ui   the web UI's pages in Chromium on 1,000 emulated hosts and 10,000 jobs
#   make bench-scaling   the scale benchmark at 10k/50k/100k hosts x 100k/1M tasks: the table of
#                        how tasks/s, CPU and memory per task and the cycle grow (~5 minutes)
#   make bench-flame     a flame graph (perf) of the master at 50,000 hosts / 1,000,000 tasks
#   make bench-grpc-split   the master alone over gRPC: 5,000 hosts in fleet processes of their
#                           own, 100,000 tasks; the master's CPU per task
#   make bench-retention   10,000,000 finished tasks over a simulated week with a 12h retention
#                   window: the store's size over time, retiring's cost, restart (~10 minutes)
#   make bench-containers   containers on a real agent with crun (root): warm start latency
#                   against plain tasks, 1,000 at once, a cold pull of 100 MB from a local registry
#   make bench-slurm   10,000 real tasks through Slurm (the peer harness) and through Paceline
#   make bench-backfill   one job list (small jobs, gangs up to half the cluster) through paceline
#                   sim without and with backfill and through Slurm's backfill in real time
#                   (root, SLURM_HARNESS=the Slurm peer harness; ~30 minutes; SKIP_SLURM=1: seconds)
#   make bench-fgd   the FGD paper's experiment under its protocol (paceline sim --protocol fgd):
#                   its six policies and Paceline's default on the paper's 17 task lists of the
#                   Alibaba GPU trace in ALIBABA_TRACE (or $$PACELINE_ALIBABA_TRACE), 10 seeds
#                   (~20 minutes on 2 cores)
#   make deb     the Debian package (CPack): build/release/deb/paceline_VERSION_ARCH.deb
#   make format  reformat the sources with clang-format

SHELL := /bin/bash
JOBS ?= $(shell nproc)
RELEASE_DIR := build/release
ASAN_DIR := build/asan
# The Alibaba GPU trace's directory (cluster-trace-gpu-v2023) for make bench-fgd.
ALIBABA_TRACE ?= $(PACELINE_ALIBABA_TRACE)
# Extra flags for `paceline up`, e.g. make up UP_ARGS="--listen 127.0.0.1:0".
UP_ARGS ?=

.PHONY: all deps build build-asan up deb test test-release test-asan test-asan-full bench bench-full bench-ha bench-ui bench-scaling bench-flame bench-grpc-split bench-retention bench-containers bench-slurm bench-backfill bench-fgd fuzz format \
  clean

all: build

deps:
	@bash scripts/install-deps.sh

$(RELEASE_DIR)/build.ninja: | deps
	cmake -S . -B $(RELEASE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

$(ASAN_DIR)/build.ninja: | deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPACELINE_SANITIZE=ON \
	  -DPACELINE_BENCHMARKS=OFF

build: deps $(RELEASE_DIR)/build.ninja
	ninja -C $(RELEASE_DIR) -j $(JOBS)

build-asan: deps $(ASAN_DIR)/build.ninja
	ninja -C $(ASAN_DIR) -j $(JOBS)

# Only what `paceline up` runs: the binary and the task wrapper its agent starts each task with
# (the tests, benchmarks and fuzzers are most of the build).
up: deps $(RELEASE_DIR)/build.ninja
	ninja -C $(RELEASE_DIR) -j $(JOBS) paceline paceline-task-wrapper
	./$(RELEASE_DIR)/paceline up $(UP_ARGS)

deb: build
	cd $(RELEASE_DIR) && cpack -G DEB -B deb
	@ls $(RELEASE_DIR)/deb/*.deb

test-release: build
	ctest --test-dir $(RELEASE_DIR) --output-on-failure -j $(JOBS)

SANITIZER_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1

# The unit tests of the libraries that link no protobuf or gRPC (core-unit-tests): a sanitizer
# build of everything would double the time of `make test`. ctest runs the unit tests that
# were built (the others are listed as *_NOT_BUILT, without the label).
test-asan: deps $(ASAN_DIR)/build.ninja
	ninja -C $(ASAN_DIR) -j $(JOBS) core-unit-tests
	$(SANITIZER_ENV) ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -L unit

test-asan-full: build-asan
	$(SANITIZER_ENV) ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) \
	  -LE "no-asan|e2e-heavy"

test: test-release test-asan

bench: build
	bash scripts/bench.sh $(RELEASE_DIR) short

bench-full: build
	bash scripts/bench.sh $(RELEASE_DIR) full

# Needs root and the Slurm peer harness: SLURM_HARNESS=DIR (the Slurm peer harness directory).
bench-ha: build
	bash scripts/bench-ha.sh $(RELEASE_DIR)

bench-ui: build
	node ui/tests/ui_load_test.mjs --paceline $(RELEASE_DIR)/paceline \
	  --report bench/results/ui-load-$$(date -u +%Y-%m-%d).json

bench-scaling: build
	bash scripts/bench-scaling.sh $(RELEASE_DIR)

bench-flame: build
	bash scripts/bench-flame.sh $(RELEASE_DIR)

bench-grpc-split: build
	bash scripts/bench-grpc-split.sh $(RELEASE_DIR)

bench-retention: build
	./$(RELEASE_DIR)/paceline bench retention --tasks 10000000 --span 7d --retain-terminal 12h \
	  --report bench/results/retention-10m-$$(date -u +%Y-%m-%d).json

bench-containers: build
	bash scripts/bench-containers.sh $(RELEASE_DIR)

bench-fgd: build
	bash scripts/bench-fgd.sh $(RELEASE_DIR) "$(ALIBABA_TRACE)"

bench-slurm: build
	bash bench/vs-slurm.sh

bench-backfill: build
	bash scripts/bench-backfill.sh $(RELEASE_DIR)

fuzz: deps
	bash scripts/fuzz.sh

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf build
