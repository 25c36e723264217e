# The front door: `make test` runs every test, `make demo` runs the demo experiment.
# Both run the set-up first (system packages, .venv, the project).

VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup test test-quick lint demo demo-publish train-demo train-demo-publish recovery \
	recovery-publish clean

setup:
	./setup.sh

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

test: setup lint
	$(BIN)/pytest -q

test-quick: setup
	$(BIN)/pytest -q -m "not slow" -x

demo: setup
	$(BIN)/ina demo

# Measure the demo again and publish it: docs/demo/ and the README's demo table
demo-publish: setup
	$(BIN)/ina demo --publish docs/demo

# Training through the emulated network: time to accuracy, in-network vs ring (ina train)
train-demo: setup
	$(BIN)/ina train experiments/train-demo.toml

# ... and publish it: docs/train/ and the README's time-to-accuracy block
train-demo-publish: setup
	$(BIN)/ina train experiments/train-demo.toml --publish docs/train

# Faults: detection and recovery times, one fault of each kind (ina recovery)
recovery: setup
	$(BIN)/ina recovery

# ... and publish them: docs/faults/ and the README's recovery table
recovery-publish: setup
	$(BIN)/ina recovery --publish docs/faults

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
