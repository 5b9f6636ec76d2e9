# Two commands for a newcomer: `make demo` (the main job) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench install clean playthroughs pictures docs

$(STAMP): requirements-dev.txt setup.cfg setup.py pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Train Chicken by self-play with its default config, then score the checkpoint against uniform
# random play and the rule-based baseline in a duplicate tournament and print the table.
demo: $(STAMP)
	rm -rf runs/demo
	$(BIN)/fowlplay-train --config configs/chicken_v1.yaml --out runs/demo/chicken_v1
	$(BIN)/fowlplay-eval --game chicken_v1 --agents trained=ckpt:runs/demo/chicken_v1 random baseline \
		--matches 100 --out runs/demo/eval

test: $(STAMP) lint docs
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
