# Two commands for a newcomer: `make demo` (the main job) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench install clean playthroughs

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

test: $(STAMP) lint
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

bench: $(STAMP)
	$(BIN)/fowlplay-bench

clean:
	rm -rf $(VENV) build *.egg-info
