# Two commands: `make demo` sets everything up and runs the offline demo; `make test` sets
# everything up and runs every check (lint, types, the documentation's build, the tests).
# Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export LANGSMITH_TRACING := false
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true

# The opt-in small model (SmolLM2-135M behind llama.cpp's server) for the slow test.
# llama-cpp-python builds from source; with its default -march=native a wheel carries every
# instruction the build host offers, and pip's cache (keyed by the source, not the flags)
# hands it to hosts that lack them (SIGILL).  So it builds once with a portable instruction
# set into a cache named for it (≈12 minutes on 2 cores), and installs from there.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
LLAMA_WHEELS := $(HOME)/.cache/ripplegraph/wheels/llama-cpp-avx2

# Setuptools serves this editable install with a meta path finder (the package-dir mapping
# above the four folders the design fixes) and then prints a boxed note that folders named
# like the package may take precedence: the case tests/integration/test_packaging.py checks.
# That one note, matched by its title, is not printed; every other warning is.
QUIET_EDITABLE_NOTE := PYTHONWARNINGS="ignore:Editable installation.:UserWarning"

.PHONY: install demo test lint docs clean studio small-llm mutate results

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(QUIET_EDITABLE_NOTE) $(BIN)/python -m pip install --quiet -c constraints.txt \
		-e '.[local,dev,bench,postgres,mcp,ui,docs]'
	$(BIN)/python -m ripplegraph.agent.models.local_embeddings
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/ripplegraph demo

# mypy reads the package as it installs (build/view: ripplegraph.agent at ripplegraph/agent…),
# and reports errors at the real files (tests/package_view.py).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m tests.package_view typecheck
	$(BIN)/python -m tests.package_view layers

# The documentation site, from docs/ into docs/_build/html; any warning fails it.
docs: $(STAMP)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html

test: lint docs
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache mutants docs/_build build

# Mutation testing (mutmut; not part of `make test`): the modules the README's numbers rest
# on, whole, and the LLM call path's budget and reply limits and the store's checker, by
# function.  Which tests judge them: [tool.mutmut] in pyproject.toml.
MUTANTS := 'ripplegraph.agent.eval.metrics.*' 'ripplegraph.agent.decisions.policies.assembly.*' \
	'ripplegraph.agent.decisions.policies.sufficiency.*' 'ripplegraph.agent.routing.*' \
	'ripplegraph.agent.models.llm.x_estimate_tokens__*' 'ripplegraph.agent.spend.*' \
	'ripplegraph.agent.models.llm.xǁRoleCallerǁ_attempts__*' 'ripplegraph.agent.models.llm.xǁRoleCallerǁ_attempt__*' \
	'ripplegraph.agent.models.llm.xǁRoleCallerǁ_request_options__*' \
	'ripplegraph.agent.store.upkeep.xǁUpkeepǁcheck__*' \
	'ripplegraph.agent.store.sql.namespaces.xǁNamespaceTablesǁdangling__*' \
	'ripplegraph.agent.store.sql.namespaces.xǁNamespaceTablesǁrepair_references__*' \
	'ripplegraph.agent.store.sql.namespaces.xǁNamespaceTablesǁnamespaces__*'

# mutmut names a mutant by the folders its file sits in, so it runs in build/mutation: this
# checkout with the package laid out as it installs (tests/package_view.py).
mutate: $(STAMP)
	$(BIN)/python -m tests.package_view checkout
	cd build/mutation && rm -rf mutants && ../../$(BIN)/mutmut run --max-children 2 $(MUTANTS)
	cd build/mutation && ../../$(BIN)/python -m tests.mutation_scores $(MUTANTS)

small-llm: $(STAMP)
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip wheel \
		--quiet --no-cache-dir --no-deps -w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/python -m pip install --quiet -c constraints.txt --find-links $(LLAMA_WHEELS) \
		-e '.[small-llm]'

studio: $(STAMP)
	$(BIN)/langgraph dev --no-browser --no-reload --host 127.0.0.1 --port 2024

# The published results in benchmarks/results/, refreshed from the data named here (a bench run
# elsewhere never writes there).  DATA is a folder holding LoCoMo's locomo10.json-format file
# as locomo/locomo_dev.json, REALTALK's Chat_*.json files as realtalk/, Mem-Gallery's dialog files as memgallery/, PrefEval's
# benchmark_dataset as prefeval/ and IMLogic's qa_user*.json files as imlogic/.  The load benchmarks (soak, tenants) are run by hand: half an
# hour each (see the README).
RESULTS := benchmarks/results
results: $(STAMP)
	@test -n "$(DATA)" || { echo "make results DATA=<folder with locomo/ realtalk/ memgallery/ prefeval/ imlogic/>"; exit 2; }
	@echo "refreshing $(RESULTS) from $(DATA)/locomo/locomo_dev.json, $(DATA)/realtalk, $(DATA)/memgallery, $(DATA)/prefeval, $(DATA)/imlogic"
	$(BIN)/ripplegraph bench ranker --data $(DATA)/locomo/locomo_dev.json --data $(DATA)/realtalk \
		--data $(DATA)/memgallery --write agent/ranker.json --write-walker agent/walker.json \
		--results $(RESULTS)
	$(BIN)/ripplegraph bench ranker --data $(DATA)/locomo/locomo_dev.json --data $(DATA)/realtalk \
		--data $(DATA)/memgallery --leave kind --no-charts --results $(RESULTS)/ranker_kinds
	$(BIN)/ripplegraph bench locomo --data $(DATA)/locomo/locomo_dev.json --results $(RESULTS)
	$(BIN)/ripplegraph bench locomo --data $(DATA)/realtalk --results $(RESULTS)/realtalk
	$(BIN)/ripplegraph bench locomo --data $(DATA)/memgallery --results $(RESULTS)/memgallery
	$(BIN)/ripplegraph bench folds --data $(DATA)/locomo/locomo_dev.json --results $(RESULTS)
	$(BIN)/ripplegraph bench folds --data $(DATA)/locomo/locomo_dev.json --data $(DATA)/realtalk \
		--data $(DATA)/memgallery --results $(RESULTS)/seventeen
	$(BIN)/ripplegraph bench prefeval --data $(DATA)/prefeval --results $(RESULTS)
	$(BIN)/ripplegraph bench imlogic --data $(DATA)/imlogic --results $(RESULTS)
	$(BIN)/ripplegraph bench scale --data $(DATA)/locomo/locomo_dev.json --results $(RESULTS)
	$(BIN)/ripplegraph bench cli --results $(RESULTS)
