# The two front-door commands. Each one sets up everything it needs on a fresh machine.
PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
# torch is pinned for development; these machines install 2.13.0 from a local file.
TORCH   ?= torch==2.13.0
ECOSYSTEM ?= gluoncv==0.10.5.post0 gluonnlp==0.10.0 portalocker yacs autocfg

.PHONY: demo test conformance conformance-all bench surface clean venv

$(STAMP): pyproject.toml Makefile
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q "$(TORCH)"
	$(VPY) -m pip install -q -e ".[dev]"
	# GluonCV/GluonNLP for tests/test_gluoncv_nlp.py, without their dependencies (they would
	# pull MXNet-era pins); the tests skip when this install is not possible.
	-$(VPY) -m pip install -q --no-deps $(ECOSYSTEM)
	touch $(STAMP)

venv: $(STAMP)

# The demo trains 6 epochs from scratch, stops, then resumes from that checkpoint to 12.
demo: $(STAMP)
	$(VPY) -m neogluon.examples.digits --no-resume --epochs 6 $(DEMO_ARGS)
	$(VPY) -m neogluon.examples.digits --epochs 12 $(DEMO_ARGS)

test: $(STAMP)
	$(VPY) -m pytest -n 2 tests

# MXNet 1.9.1's own unit tests (../shared/mxnet-tests) run unmodified through the mxnet alias.
# conformance skips the tests that are slow on MXNet itself (conformance/slow_tests.txt);
# conformance-all runs them too.
conformance: $(STAMP)
	$(VPY) conformance/run.py
	if [ -d ../shared/mxnet-tests/nightly ]; then \
		$(VPY) conformance/nightly_dist.py ../shared/mxnet-tests/nightly; fi

conformance-all: $(STAMP)
	$(VPY) conformance/run.py --all
	if [ -d ../shared/mxnet-tests/nightly ]; then \
		$(VPY) conformance/nightly_dist.py ../shared/mxnet-tests/nightly; fi

bench: $(STAMP)
	$(VPY) bench/run_all.py

# MXNet 1.9.1's module/name surface under the mxnet alias (tools/surface.py; SURFACE_ARGS=--missing
# lists what each module lacks).
surface: $(STAMP)
	$(VPY) tools/surface.py $(SURFACE_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
