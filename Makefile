# The front door: `make test` runs every test, `make demo` runs the demo experiment.
# Both run the set-up first (system packages, .venv, the project).

VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup test test-quick lint demo demo-publish train-demo train-demo-publish recovery \
	recovery-publish clean vm vm-test vm-shell

setup:
	./setup.sh

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

test: setup lint
	$(BIN)/pytest -q --durations=25

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

# The suite in a Debian 12 VM (the README's "The tests in a VM"): `make vm` builds the
# image or reuses the cached one, `make vm-test PYTEST_ARGS="-m 'not slow'"` runs the
# suite inside it, `make vm-shell` gives a prompt inside. BMV2=DIR puts that BMv2 + p4c
# build into the image (BMV2=none leaves it out; default ../shared/bmv2 when present);
# VM_ACCEL=tcg runs without KVM; VM_MIRROR=URL chooses the Debian mirror.
PYTHON3 ?= python3
VM_IMAGE_ARGS = $(if $(filter none,$(BMV2)),--no-bmv2,$(if $(BMV2),--bmv2 $(BMV2))) \
	$(if $(VM_MIRROR),--mirror $(VM_MIRROR))
VM_BOOT = $(PYTHON3) -m vm.boot $(if $(VM_ACCEL),--accel $(VM_ACCEL))

vm:
	$(strip $(PYTHON3) -m vm.image $(VM_IMAGE_ARGS))

vm-test: vm
	$(strip $(VM_BOOT) test -- $(PYTEST_ARGS))

vm-shell: vm
	$(strip $(VM_BOOT) shell)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
