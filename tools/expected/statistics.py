"""Computes the expected statistics of test/statistics.test.ts with the reference libraries.

tessera's /statistics must answer what TiTiler 0.18.10 answers, so the test's expected values come
from TiTiler itself (rio-tiler 6.8.0, numpy 2.4.6): each case's band goes through TiTiler's query
dependencies, `ImageData.statistics`, the `Statistics` response model and TiTiler's JSONResponse.
Bands without a valid pixel make rio-tiler 6.8 raise (a 500 in TiTiler); for those, its two weighted
helpers return NaN on empty input, as rio-tiler 7 does, which is what tessera answers.

Reads test/fixtures/expected/statistics-cases.json (the inputs) and writes
test/fixtures/expected/statistics.json (the same cases, each with its expected response body).
Non-finite inputs are written as the strings "NaN", "Infinity", "-Infinity" (JSON has no such
numbers). Large bands come from a seeded mulberry32 generator, the same as the TypeScript test's.
Run from anywhere, in the parity venv:

    .parity/venv/bin/python tools/expected/statistics.py
"""
import json
import math
import pathlib
import warnings

# Empty bands (numpy.ma converting `masked` to NaN), overflowing squares (1e300) and the deprecated
# httpx test client all warn, by design: the values, not the warnings, are the output. Set before the
# imports, since the test client warns as it is imported.
warnings.simplefilter("ignore")

import numpy
import rio_tiler.utils
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient
from rio_tiler.models import ImageData
from titiler.core.dependencies import HistogramParams, StatisticsParams
from titiler.core.models.responses import Statistics
from titiler.core.resources.responses import JSONResponse

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "test/fixtures/expected/statistics-cases.json"
OUTPUT = ROOT / "test/fixtures/expected/statistics.json"


def empty_is_nan(helper):
    """rio-tiler 7's guard: NaN instead of an exception when a band has no valid pixel."""
    return lambda values, weights, *rest: math.nan if values.size == 0 else helper(values, weights, *rest)


rio_tiler.utils._weighted_quantiles = empty_is_nan(rio_tiler.utils._weighted_quantiles)
rio_tiler.utils._weighted_stdev = empty_is_nan(rio_tiler.utils._weighted_stdev)


def mulberry32(seed: int, count: int) -> numpy.ndarray:
    """The first `count` draws of mulberry32(seed) as float64 in [0, 1), bit for bit as the test's.

    Its state only ever adds 0x6D2B79F5, so draw k is a pure function of seed + (k + 1) * 0x6D2B79F5
    (mod 2**32) and the whole sequence is computed at once in uint32 (wrapping, like Math.imul).
    """
    with numpy.errstate(over="ignore"):
        a = numpy.uint32(seed) + numpy.arange(1, count + 1, dtype=numpy.uint64).astype(numpy.uint32) * numpy.uint32(0x6D2B79F5)
        t = (a ^ (a >> 15)) * (a | 1)
        t = (t + (t ^ (t >> 7)) * (t | 61)) ^ t
        return (t ^ (t >> 14)).astype(numpy.float64) / 4294967296


def generate(spec: dict, n: int):
    """The test's generators: three draws per pixel (u1, u2, u3), giving values and masked flags."""
    u = mulberry32(spec["seed"], 3 * n).reshape(n, 3)
    u1, u2, u3 = u[:, 0], u[:, 1], u[:, 2]
    unmasked = numpy.zeros(n, dtype=bool)
    gen = spec["gen"]
    if gen == "float32-noisy":
        values = (u1 * 2000 - 500).astype(numpy.float32).astype(numpy.float64)
        values[u2 < 0.01] = numpy.nan
        values[u2 > 0.995] = numpy.inf
        return values, u3 < 0.05
    if gen == "uint16-nodata":
        values = numpy.floor(u1 * 4096)
        return values, values < 16
    if gen == "float32-offset":
        return (1e6 + u1 * 1000).astype(numpy.float32).astype(numpy.float64), unmasked
    if gen == "uint8-classes":
        return numpy.floor(u1 * u1 * 12), u3 < 0.2
    if gen == "float64-normalish":
        return (u1 + u2 + u3 - 1.5) * 1e-3, unmasked
    if gen == "coverage":
        return numpy.floor(u1 * 101) / 100, unmasked
    raise ValueError(f"unknown generator {gen}")


def image_of(case: dict):
    """The case's band as the masked array TiTiler's reader hands over, and its coverage (float64)."""
    h, w = case["height"], case["width"]
    if isinstance(case["data"], dict):
        values, masked = generate(case["data"], w * h)
    else:
        values = numpy.array([float(v) for v in case["data"]])
        masked = numpy.array(case.get("masked", [0] * (w * h))) == 1
    band = values.astype(case["dtype"])
    if band.dtype.kind in "iu":
        # The test's typed arrays and numpy wrap out-of-range integers differently: keep to exact ones.
        assert (band == values).all(), f"{case['name']}: integer data out of range for {case['dtype']}"
    coverage = case.get("coverage")
    if coverage is not None:
        coverage = generate(coverage, w * h)[0] if isinstance(coverage, dict) else numpy.array([float(v) for v in coverage])
        coverage = coverage.reshape(h, w)
    array = numpy.ma.MaskedArray(band.reshape(1, h, w), mask=masked.reshape(1, h, w))
    return ImageData(array), coverage


def titiler_response(case: dict) -> str:
    """The body TiTiler's GET /statistics route returns for this band and query."""
    image, coverage = image_of(case)
    app = FastAPI()

    @app.get("/statistics", response_model=Statistics, response_class=JSONResponse)
    def statistics(stats_params=Depends(StatisticsParams), histogram_params=Depends(HistogramParams)):
        return image.statistics(**stats_params, hist_options={**histogram_params}, coverage=coverage)

    response = TestClient(app).get("/statistics", params=case.get("query", {}))
    assert response.status_code == 200, f"{case['name']}: {response.status_code} {response.text}"
    return response.text


def main() -> None:
    source = json.loads(CASES.read_text())
    cases = [{**case, "expected": titiler_response(case)} for case in source["cases"]]
    about = (
        "Expected TiTiler 0.18.10 statistics for test/statistics.test.ts, written by "
        "tools/expected/statistics.py from statistics-cases.json; do not edit, re-run: "
        ".parity/venv/bin/python tools/expected/statistics.py"
    )
    lines = ",\n".join("    " + json.dumps(case, ensure_ascii=False) for case in cases)
    OUTPUT.write_text(f'{{\n  "about": {json.dumps(about)},\n  "cases": [\n{lines}\n  ]\n}}\n')
    print(f"wrote {len(cases)} cases to {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
