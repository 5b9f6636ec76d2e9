# Two commands for a newcomer: `make demo` (the main job) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench install clean playthroughs pictures docs browser

$(STAMP): requirements-dev.txt setup.cfg setup.py pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# The demo needs only the package and the extras it runs (train, eval) or offers next (web: the
# README's fowlplay-web), at the versions make test pins (requirements-dev.txt as constraints), with
# pip's progress shown: a few hundred MB, mostly torch.
DEMO_STAMP := $(VENV)/.demo-installed
$(DEMO_STAMP): requirements-dev.txt setup.cfg setup.py pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --progress-bar on -c requirements-dev.txt -e '.[train,eval,web]'
	touch $(DEMO_STAMP)

# Headless Chromium for the browser tests (tests/evaluation/test_web_browser.py): Debian's package,
# installed when it is missing and this is root (as in CI); without root, install it once yourself
# (the browser tests are skipped without it, except in CI).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
		else \
			echo "make: chromium is missing; install it with: sudo apt-get install chromium chromium-driver"; \
		fi; }

# Train Chicken by self-play with its default config, then score the checkpoint against uniform
# random play and the rule-based baseline in a duplicate tournament and print the table.
demo: $(DEMO_STAMP)
	rm -rf runs/demo
	$(BIN)/fowlplay-train --config configs/chicken_v1.yaml --out runs/demo/chicken_v1
	$(BIN)/fowlplay-eval --game chicken_v1 --agents trained=ckpt:runs/demo/chicken_v1 random baseline \
		--matches 100 --out runs/demo/eval

test: $(STAMP) lint docs browser
	$(BIN)/python -m pytest -n auto -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Rewrite the golden playthroughs (tests/envs/playthroughs) after an intended rules or encoding change.
playthroughs: $(STAMP)
	$(BIN)/python -m fowlplay.envs.core.playthrough --out tests/envs/playthroughs

# Redraw the pictures of the README and the docs (docs/images) from their seeded games, after an
# intended change to a drawing or to the rules; tests/envs/test_pictures.py fails on a stale one.
pictures: $(STAMP)
	$(BIN)/python -m fowlplay.envs.core.picture --out docs/images

# Build the docs site from docs/ into site/, every warning an error (mkdocs.yml).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)
	$(BIN)/fowlplay-bench

clean:
	rm -rf $(VENV) build *.egg-info site
