# tessera: two commands set everything up on a fresh Debian 12 machine.
#   make run    installs what is missing, builds, makes the demo data and serves it on :8000
#   make test   installs, builds, checks format and lint (Biome) and runs every test (unit, routes, parity with TiTiler)
#   make bench  tessera against TiTiler 0.18.10 and the newest TiTiler on this machine (.bench/report.md), then micro-benchmarks
#   make docs   writes the settings tables of docs/configuration.md from src/config/settings.ts, and the
#               TiTiler 0.18/2.x collision table of docs/titiler2.md from src/api/generations.ts
# The pinned Node.js LTS and npm in .tools/ (scripts/node.sh, installed by scripts/install.sh) come
# before any other Node on the machine, for every command below.
export PATH := $(CURDIR)/.tools/node/bin:$(PATH)

HOST ?= 127.0.0.1
PORT ?= 8000
SRC := $(shell find src test tools -name '*.ts' 2>/dev/null) tsconfig.json package.json

.PHONY: install build run lint format docs test test-fast parity fuzz bench bench-quick bench-low-zoom bench-deploy bench-catalog bench-pgstac soak clean

install:
	@bash scripts/install.sh

dist/.built: $(SRC) node_modules/.tessera-install
	@rm -rf dist
	@npx tsc -p tsconfig.json
	@mkdir -p dist/src/tms/data dist/src/image/data && cp src/tms/data/*.json dist/src/tms/data/ && cp src/image/data/*.json dist/src/image/data/
	@touch $@

node_modules/.tessera-install: package-lock.json
	@bash scripts/install.sh

build: install dist/.built

# The demo's data is served by tessera itself on loopback, which tessera refuses to read by default.
run: build
	@bin/tessera demo --out .demo --base-url http://$(HOST):$(PORT)/demo/
	@TESSERA_ALLOWED_NETWORKS="$${TESSERA_ALLOWED_NETWORKS:-127.0.0.0/8,::1/128}" TESSERA_CATALOG="$${TESSERA_CATALOG:-.demo/catalog}" bin/tessera serve --host $(HOST) --port $(PORT) --demo .demo

# Biome (biome.json): formatting and lint rules, checked without writing anything; knip
# (knip.json): no unused file, export or dependency.
lint: install
	@npm run --silent lint

# Rewrites the sources in the house format.
format: install
	@npm run --silent format

# Writes the settings tables of docs/configuration.md from their declaration (src/config/settings.ts);
# test/settings.test.ts fails when the committed page differs.
docs: build
	@node dist/tools/docs/settings-table.js docs/configuration.md
	@node dist/tools/docs/collisions-table.js docs/titiler2.md

test: build lint
	@bash tools/parity/setup.sh
	@bash tools/parity/titiler2.sh >/dev/null
	@bash tools/parity/cogeo9.sh
	@bash tools/stac-api/setup.sh
	@bash tools/objstore/setup.sh
	@bash tools/objstore/gcs.sh >/dev/null
	@bash tools/clients/leafmap.sh 0.63.1 >/dev/null
	@bash tools/clients/leafmap.sh 0.30.1 >/dev/null
	@node --test --test-concurrency=1 --test-reporter=spec "dist/test/**/*.test.js"

# The inner loop (under 2 minutes on 2 cores): unit and in-process route tests, two files at a time.
# Left to `make test`: the container, nginx and cluster deployments, the pages in Chromium, the 2.x clients (MapLibre, leafmap), the STAC API,
# the pgSTAC catalogue over PostgreSQL and the catalogue without one, cogeo-mosaic's documents, the object stores (moto), the fuzzing run, the timing tests (shared-load, request-turns) and the parity suite.
SLOW_TESTS := titiler2-clients|container|deploy-nginx|pages|mosaic-stac|mosaic-create|pgstac-routes|cluster|fuzz|shared-load|request-turns|objstore|catalog-pgstac|catalog-stacapi|catalog-routes
test-fast: build
	@bash tools/parity/setup.sh
	@node --test --test-concurrency=2 $$(ls dist/test/*.test.js | grep -vE '/($(SLOW_TESTS))\.test\.js$$')

parity: build
	@bash tools/parity/setup.sh
	@bash tools/parity/titiler2.sh >/dev/null
	@node --test --test-reporter=spec "dist/test/parity/*.test.js"

# A long fuzzing run (minutes) with a random seed; failures are saved in .fuzz/failures/ with their replay.
fuzz: build
	@FUZZ_RUNS=$${FUZZ_RUNS:-20000} FUZZ_SEED=$${FUZZ_SEED:-random} node --test --test-reporter=spec dist/test/fuzz.test.js

# Not a test: measures (several minutes; generates ~800 MB of data in .bench/data once). The newest
# TiTiler from PyPI goes into .parity/titiler-latest once; without it the run measures the others.
bench: build
	@bash tools/parity/setup.sh
	@bash tools/parity/titiler-latest.sh || echo "bench: the newest TiTiler could not be installed; measuring without it" >&2
	@node dist/tools/bench/main.js $(BENCH_ARGS)
	@node dist/tools/bench/micro.js

# Not a test: the catalogue without a database at 10k and 1M generated items (load, heap, lookup p99).
bench-catalog: build
	@node --expose-gc dist/tools/bench/catalog.js $(BENCH_ARGS)

# Not a test: tessera's /searches against titiler-pgstac 3.2.0 on one pgSTAC database (.bench/pgstac/report.md; minutes).
bench-pgstac: build
	@node dist/tools/bench/pgstac.js $(BENCH_ARGS)

bench-quick: build
	@bash tools/parity/setup.sh
	@bash tools/parity/titiler-latest.sh || echo "bench: the newest TiTiler could not be installed; measuring without it" >&2
	@node dist/tools/bench/main.js --quick $(BENCH_ARGS)
	@node dist/tools/bench/micro.js --quick

# Not a test: the benchmark's low-zoom phase alone (a 1,024-COG mosaic, made once in .bench/data/large), both servers.
bench-low-zoom: build
	@bash tools/parity/setup.sh
	@node dist/tools/bench/main.js --low-zoom-only $(BENCH_ARGS)

# Not a test: two replicas behind deploy/nginx.conf with a shared Redis cache, tiles/s cold and warm.
bench-deploy: build
	@node dist/tools/bench/deploy.js

# Not a test: 30 minutes of mixed load with failing upstreams, RSS sampled (.bench/soak/report.md).
soak: build
	@node dist/tools/bench/soak.js $(SOAK_ARGS)

clean:
	rm -rf dist .demo
