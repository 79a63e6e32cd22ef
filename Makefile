# tcran: two commands.
#   make demo   builds everything and runs the embedded demo
#   make test   builds everything and runs every check and test
# Both install what they need (a Rust toolchain is assumed, as on the dev machines).

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never


.PHONY: demo test fmt lint unit fuzz-smoke bench speed build browser dashboard-screenshots reproduce reproduction-doc generalisation golden golden-record capi capi-header capi-test capi-bench emu-test emu-bench flexric-matrix oai oai-test ns3 ns3-run python python-test python-wheel python-bench

build:
	$(CARGO) build --release --workspace

demo:
	$(CARGO) run --release -q -p tcran-cli -- demo

# The stages of `make test`, in order: add a stage by adding its target
# here. scripts/stages.sh runs them one by one, stops at the first failure
# (with its exit code) and ends with a table of the time each took.
TEST_STAGES = fmt lint unit fuzz-smoke capi-test emu-test python-test

test:
	@MAKE="$(MAKE)" ./scripts/stages.sh $(TEST_STAGES)

fmt:
	$(CARGO) fmt --all -- --check

# In the release profile, as the unit stage builds: the build scripts
# (ring's C code among them), proc macros and generated code it needs are
# then built once for both stages instead of once per profile.
lint:
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

# The report tests open report.html in Debian's headless Chromium.
# Examples are left out (`--lib --bins --tests`, then the doc tests): no
# test runs them, the lint stage checks that they compile, and building
# them in release cost about a minute of every run.
unit: browser
	$(CARGO) test --workspace --release --lib --bins --tests
	$(CARGO) test --workspace --release --doc

browser:
	./scripts/ensure-chromium.sh

# The screenshots of docs/dashboard.md, taken by the dashboard's browser
# test (the same DevTools driver) while it runs the demo live.
dashboard-screenshots: browser
	TCRAN_DASHBOARD_SCREENSHOTS=$(CURDIR)/docs/figures/dashboard $(CARGO) test --release -p tcran-cli --test integration dashboard_browser:: -- --nocapture --test-threads=1

# Runs every fuzz target briefly on stable Rust (see fuzz/README.md);
# libFuzzer itself is C++, built by libfuzzer-sys with the system's g++.
fuzz-smoke:
	./scripts/ensure-cc.sh
	./fuzz/smoke.sh

# Runs every scenario of scenarios/reproduction into tcran-out/reproduce
# (one report per scenario, index.html over all).
reproduce:
	$(CARGO) run --release -q -p tcran-cli -- reproduce

# docs/reproduction.md's generated tables, docs/fidelity.md and the page's
# figures from a fresh `tcran reproduce` (seeds 1..3) into a temporary
# directory: scripts/reproduction-tables.py rewrites every `<!-- table:
# ... -->` block; fidelity.md keeps its 4-line preamble; of the figures only
# those docs/figures already holds (the ones the page shows) are replaced.
reproduction-doc:
	out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && \
	$(CARGO) run --release -q -p tcran-cli -- reproduce --out "$$out" --figures "$$out/figures" && \
	./scripts/reproduction-tables.py "$$out" docs/reproduction.md && \
	{ head -n 4 docs/fidelity.md && cat "$$out/fidelity.md"; } > "$$out/page.md" && \
	mv "$$out/page.md" docs/fidelity.md && \
	for f in docs/figures/*.svg; do \
	  if [ -f "$$out/figures/$${f##*/}" ]; then cp "$$out/figures/$${f##*/}" "$$f"; fi; \
	done

# Every pacer on a corpus of channels nobody tuned for (synthetic fading,
# every shipped trace, and every trace under ../shared/traces when present):
# scripts/generalisation.py, docs/pacer.md "Comparison".
generalisation: build
	./scripts/generalisation.py

bench:
	$(CARGO) bench -p tcran-tc --bench pipeline
	$(CARGO) bench -p tcran-e2 --bench e2
	$(CARGO) bench -p tcran-xapp --bench xapp
	$(CARGO) bench -p tcran-cli --bench dashboard

# Simulator speed on the reference and scale scenarios (docs/performance.md),
# built with the `dist` profile (fat LTO); then the reference scenario in
# the engine alone and through `tcran run`, alternated, in the release
# build (scripts/speed.sh).
speed:
	$(CARGO) build --profile dist -q -p tcran-sim --example speed
	target/dist/examples/speed
	/usr/bin/time -f "scale: %e s wall, %M kB peak memory" target/dist/examples/speed scale
	/usr/bin/time -f "cells: %e s wall, %M kB peak memory" target/dist/examples/speed cells
	./scripts/speed.sh 5 release

# Byte-identical outputs across a refactor: `make golden-record` on the
# commit before the change, `make golden` after it (scripts/golden.sh).
golden-record:
	./scripts/golden.sh record

golden:
	./scripts/golden.sh check

# The C library (docs/c-api.md): libtcran.so/.a, tcran.h and tcran.pc
# installed into $(DESTDIR)$(PREFIX), by default target/capi.
PREFIX ?= $(CURDIR)/target/capi
# `--workspace ... --tests`: the targets and features of the `unit` stage,
# so this reuses its build instead of compiling the tcran crates again
# with other features (scripts/python-env.sh too).
capi:
	$(CARGO) build --release -q --workspace --lib --bins --tests
	./scripts/capi-install.sh "$(DESTDIR)$(PREFIX)"

# Rewrites include/tcran.h from the crate (commit the result).
capi-header:
	TCRAN_BLESS=1 $(CARGO) test -q -p tcran-capi --test integration header::

# The C test program and the example gNB loop with its C plug-in, built
# with gcc -std=c11 -Wall -Wextra -Werror against the installed library and
# run under AddressSanitizer + UndefinedBehaviorSanitizer.
capi-test: capi
	./scripts/ensure-cc.sh
	./scripts/capi-test.sh "$(DESTDIR)$(PREFIX)"

# ns per packet through the C ABI (docs/performance.md).
capi-bench: capi
	./scripts/ensure-cc.sh
	./scripts/capi-test.sh "$(DESTDIR)$(PREFIX)" bench

# The live emulator with real programs (docs/emulator.md): iperf3, ping
# and the kernel's TCP in network namespaces, in real time. Needs root and
# /dev/net/tun; runs alone, one test at a time, so no other load disturbs
# its clock.
emu-test:
	./scripts/ensure-emu-tools.sh
	$(CARGO) test --release -q --workspace --test emulate -- --ignored --test-threads=1

# The emulator's relay throughput, wake-up lateness, added latency and CPU
# per packet (docs/performance.md); needs root and an idle machine.
emu-bench:
	./scripts/emu-bench.sh

# Every stock FlexRIC xApp against `tcran run --realtime --e2`, live
# (docs/e2.md, "Connecting FlexRIC"): needs FLEXRIC_DIR, a FlexRIC built by
# scripts/build-flexric-peer.sh outside the repository; without it the
# script says it skips. Not a stage of `make test` (FlexRIC is not on a
# fresh machine); its reading of logs is tested in the unit stage.
flexric-matrix:
	./scripts/flexric-matrix.sh

# OpenAirInterface v2.1.0's gNB, UE and rfsimulator with tcran between
# SDAP and PDCP (docs/oai.md): sources from ../shared/oai (OAI_SRC), built
# into /work/oai-cache (OAI_CACHE); a second run after a tcran change
# relinks the gNB only.
oai:
	CARGO="$(CARGO)" ./scripts/oai/build.sh

# gNB + UE over rfsimulator in network namespaces: a CUBIC download with
# ping, OAI as it is vs tcran's cure deployed live (needs root and the
# `make oai` build; about 3 minutes; not part of `make test`).
oai-test: oai
	./scripts/oai/test.sh

# ns-3 LENA as an independent reference (docs/simulator.md "Against ns-3
# LENA"): a venv outside the repository (NS3_VENV, default
# ~/.cache/tcran-ns3) with ns3==3.44.post0 from PyPI; `ns3-run` runs the
# three cases of docs/ns3-spec.md into target/ns3/{handover,uplink,speed}.json
# (compare them with scripts/ns3/compare.py): ~3 min of CPU, about 25 min
# on a 2-core machine at load 10. Not part of `make test`.
NS3_VENV ?= $(HOME)/.cache/tcran-ns3
ns3:
	NS3_VENV=$(NS3_VENV) ./scripts/ns3/setup.sh

ns3-run: ns3
	mkdir -p target/ns3
	for case in handover uplink speed; do \
		$(NS3_VENV)/bin/python scripts/ns3/$$case.py >target/ns3/$$case.json || exit; \
	done

# The Python package (docs/python.md): a virtualenv in target/venv with
# the pinned tools of python/requirements-dev.txt, and `tcran` installed
# into it, its native module the workspace's own release build of
# crates/tcran-py (with the `tcran` binary the tests compare against):
# after the `unit` stage that compiles tcran-py only
# (scripts/python-env.sh says why not `maturin develop`).
VENV ?= target/venv
python:
	VENV=$(VENV) CARGO="$(CARGO)" ./scripts/python-env.sh

# The pytest suite of the package (runs, pipelines, sweeps on the local,
# Dask and Ray backends, xApps against `tcran run --realtime --e2`, the
# example notebook); it compares errors and files with the `tcran` binary.
python-test: python
	$(VENV)/bin/python -m pytest -q python/tests

# A wheel of the package (target/wheels), built by maturin (release, abi3,
# stripped).
python-wheel: python
	cd python && $(abspath $(VENV))/bin/maturin build --release --quiet

# tcran.run against the CLI, batched pipeline ns/packet, sweep runs/s per
# backend (docs/performance.md); needs an idle machine.
python-bench: python
	$(VENV)/bin/python python/bench/bench.py
