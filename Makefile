# gpu-batch: two commands on a fresh machine.
#   make preview [STACK=dev] [BASE=<git ref>]   offline preview of a stack with the policy pack -> build/<stack>/;
#                              with BASE, what `pulumi up` would create/update/replace/delete against that ref
#   make test [TEST_WORKERS=auto TEST_MAX_WORKERS=4]  lint, type-check and the whole test suite (a pytest worker per core, at most 4);
#                              every test's seconds go to ~/.cache/gpu-batch/test-durations/ (python -m benchmarks.suite_time ranks the files)
#   make test-live             only the live tier (tests/live/: kube-apiserver, etcd and Kueue's manager run locally)
#   make live-tools            build the live tier's binaries once per machine (~/.cache/gpu-batch/live; see tests/live/README.md)
#   make bench [BENCH_ARGS="--sizes 100,1000 --repeat 3 --baseline DIR"]   scale figures
#   make bench-pack-memory [PACK_MEMORY_ARGS="--stacks 1000 --reference-teams 1000"]   one pack process's RSS over many stacks
#   make bench-differential [DIFFERENTIAL_ARGS="--count 1020 --seed 41"] [PACK_DIFFERENTIAL_ARGS="--seed 41"]
#                              upstream code as the judge (issue 41): the pack against kube-apiserver
#                              v1.37.2 (the live tier's binaries, root), and the what-if against Kueue
#                              v0.19.2's scheduler over whole runs (needs Go); each prints its own line
#   make fuzz [FUZZ_MUTATIONS=5000]  hostile mutations through the real policy pack (issue 12)
#   make gate-venvs [GATE_PYTHONS="python3.12 python3.13"]   other CPython minors for tests/test_gate_portability.py
#   make whatif [STACK=dev] [BASE=<git ref>]   Kueue (or KAI) admission what-if; with BASE, the change per queue
#   make whatif-compiled       build the what-if's simulator modules with mypyc once per source (~/.cache/gpu-batch/whatif-mypyc;
#                              see whatif/compiled.py); python -m whatif and make bench-whatif use it, pure Python without it
#   make bench-whatif [WHATIF_BENCH_ARGS="--sizes 100000 --loads overloaded"]   the what-if at scale (issue 44)
STACK ?= dev
TEST_WORKERS ?= auto
# each worker runs the stacks' programs and previews: bounded so a many-core runner does not multiply the memory
TEST_MAX_WORKERS ?= 4
FUZZ_MUTATIONS ?= 5000
PYTHON ?= python3
VENV := venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: preview preview-all test test-live live-tools whatif-compiled bench-whatif lint typecheck unit bench bench-pack-memory bench-differential fuzz whatif clean gate-venvs

$(STAMP): requirements.txt requirements-dev.txt policies/requirements.txt
	$(PYTHON) -m venv $(VENV)
		$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt -r policies/requirements.txt
	touch $(STAMP)

preview: $(STAMP)
	$(PY) -m preview --stack $(STACK) $(if $(BASE),--base $(BASE))

preview-all: $(STAMP)
	@for s in $$(ls Pulumi.*.yaml | sed -e 's/Pulumi\.//' -e 's/\.yaml//'); do \
		$(PY) -m preview --stack $$s --quiet || exit 1; done

# The stack's program is run afresh (not a stale build/<stack>/plan.json); BASE runs the stack's
# own preview at that git ref and simulates both with one trace.  WHATIF_ARGS passes more options
# (e.g. --ignore-fair-sharing, --trace FILE).
whatif: $(STAMP) whatif-compiled
	$(PY) -m whatif --stack $(STACK) --fresh $(if $(BASE),--base $(BASE)) $(WHATIF_ARGS)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(STAMP)
	$(PY) -m mypy
	# The pack's entry point is checked on its own: two __main__ modules cannot share one run.
	$(PY) -m mypy policies/__main__.py

# gate-venvs first: the readiness gates' cross-minor tests run wherever another CPython minor is installed;
# live-tools first: the live tier's binaries are built once per machine, not inside a test's timeout.
# whatif-compiled first: tests/whatif/test_compiled_events.py compares the mypyc build with pure Python.
# --durations=25: the slowest tests, where a faster warm `make test` starts (the standard aims at ~15 min).
# --dist loadgroup: the live tier's tests (xdist group "live") share one worker and one etcd (under pytest 9.2
# only through tests/conftest.py's group suffix: pytest-dev/pytest-xdist#1386).
# --junitxml: every test's seconds, every run, outside the checkout (TEST_DURATIONS); the summed seconds
# per file, slowest first: `venv/bin/python -m benchmarks.suite_time --top 25`.
TEST_DURATIONS ?= $(shell $(PY) -m benchmarks.suite_time --path)
unit: $(STAMP) gate-venvs live-tools whatif-compiled
	$(PY) -m pytest -q -rs --durations=25 -n $(TEST_WORKERS) --maxprocesses $(TEST_MAX_WORKERS) --dist loadgroup \
		--junitxml=$(TEST_DURATIONS) -o junit_family=xunit1

test: lint typecheck unit

# The live tier alone: a real kube-apiserver (k8s.io/kubernetes by module name), etcd (go.etcd.io/etcd/server/v3) and
# Kueue's manager (sigs.k8s.io/kueue by module name), see tests/live/README.md.
test-live: $(STAMP) live-tools
	$(PY) -m pytest -q tests/live

# Builds (or finds) the live tier's binaries in $GPU_BATCH_LIVE_CACHE (default ~/.cache/gpu-batch/live):
# a fresh machine's first run builds kube-apiserver and Kueue from the Go module proxy (see the README
# for the time), every later run finds them in seconds.
live-tools: $(STAMP)
	$(PY) -m tests.live.toolchain

# Builds (or finds) the what-if's simulator modules compiled with mypyc for the sources as they are
# (a changed source is another build, ~45 s of CPU); one line and pure Python where it cannot build.
whatif-compiled: $(STAMP)
	$(PY) -m benchmarks.whatif_compile

bench: $(STAMP)
	$(PY) -m benchmarks.scale $(BENCH_ARGS)

bench-whatif: $(STAMP) whatif-compiled
	$(PY) -m benchmarks.whatif_bench $(WHATIF_BENCH_ARGS)

bench-pack-memory: $(STAMP)
	$(PY) -m benchmarks.pack_memory $(PACK_MEMORY_ARGS)

# Each whole set prints one line: `whatif-vs-kueue: agree=X/N excluded=E ...` (per family below it).
# The oracle is whatif/oracle's Go test binary (sigs.k8s.io/kueue v0.19.2 from the module proxy),
# built once per machine into ~/.cache/gpu-batch/oracle/.
DIFFERENTIAL_ARGS ?= --count 1020 --seed 41
bench-differential: $(STAMP) live-tools
	$(PY) -m benchmarks.differential_pack $(PACK_DIFFERENTIAL_ARGS)
	$(PY) -m benchmarks.differential_whatif $(DIFFERENTIAL_ARGS)

fuzz: $(STAMP)
	$(PY) -m tests.policies.pack_fuzz --mutations $(FUZZ_MUTATIONS)

clean:
	rm -rf build $(VENV) .mypy_cache .pytest_cache .ruff_cache

# The readiness gates' state must load under another CPython minor than the one that wrote it
# (tests/test_gate_portability.py): a venv per other minor, outside the checkout, with the pins
# the dynamic-provider process imports.
GATE_PYTHONS ?= python3.12 python3.13
GATE_PINS = $$(grep -E '^(pulumi|kubernetes|PyYAML)==' requirements.txt) dill==$$($(PY) -c 'import dill; print(dill.__version__)')
gate-venvs:
	@tmp=$$($(PY) -c 'import tempfile; print(tempfile.gettempdir())'); \
	for py in $(GATE_PYTHONS); do \
		exe=$$($$py -c 'import sys; print(sys.executable)' 2>/dev/null || \
			PYENV_VERSION=$$(pyenv versions --bare 2>/dev/null | grep -E "^$${py#python}\\." | tail -1) \
			$$py -c 'import sys; print(sys.executable)' 2>/dev/null) || \
			{ echo "gate-venvs: $$py not found, skipped"; continue; }; \
		minor=$$($$exe -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
		[ -x $$tmp/gpu-batch-gate-py$$minor/.installed ] && continue; \
		$$exe -m venv $$tmp/gpu-batch-gate-py$$minor && \
		$$tmp/gpu-batch-gate-py$$minor/bin/pip install --quiet --disable-pip-version-check $(GATE_PINS) && \
		install -m 755 /dev/null $$tmp/gpu-batch-gate-py$$minor/.installed || \
		{ rm -rf $$tmp/gpu-batch-gate-py$$minor; echo "gate-venvs: $$py: install failed, the cross-minor gate tests will skip"; }; \
	done
