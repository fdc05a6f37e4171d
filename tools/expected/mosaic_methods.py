"""Computes the expected pixel selection results of test/mosaic-methods.test.ts with rio-tiler 6.8.

tessera's mosaic `pixel_selection` methods must give what TiTiler 0.18.10 gives, so the test's expected
arrays come from rio-tiler's own `PixelSelectionMethod` classes (numpy 2.4): every image of a stack is
fed, as a masked array of shape (bands, 1, pixels), to a fresh method object, and its `data` is written
out whole: the output dtype, the data numpy leaves under masked pixels and the mask.

Reads test/fixtures/expected/mosaic-methods-cases.json (the stacks and which dtype/method pairs to
compute) and writes test/fixtures/expected/mosaic-methods.json. The "big" stack is generated from its
sizes by the same formula as the test's bigLayers(). Run from anywhere, in the parity venv:

    .parity/venv/bin/python tools/expected/mosaic_methods.py
"""
import json
import pathlib

import numpy
from rio_tiler.mosaic.methods import PixelSelectionMethod

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "test/fixtures/expected/mosaic-methods-cases.json"
OUTPUT = ROOT / "test/fixtures/expected/mosaic-methods.json"


def masked(values: numpy.ndarray, masks) -> numpy.ma.MaskedArray:
    """One image: (bands, pixels) values and masks (1 = masked) as a (bands, 1, pixels) masked array."""
    bands, pixels = values.shape
    mask = numpy.array(masks, dtype=bool).reshape(bands, 1, pixels)
    return numpy.ma.MaskedArray(values.reshape(bands, 1, pixels), mask=mask)


def small_stack(spec: dict, dtype: str) -> list:
    images = []
    for values, masks in zip(spec["values"], spec["masks"]):
        raw = numpy.array(values)
        if dtype == "float32":
            data = raw.astype(numpy.float32) * numpy.float32(1.37)
        else:
            data = raw.astype(dtype)
        images.append(masked(data, masks))
    return images


def big_stack(spec: dict, dtype: str) -> list:
    k = numpy.arange(spec["images"]).reshape(-1, 1, 1)
    b = numpy.arange(spec["bands"]).reshape(1, -1, 1)
    i = numpy.arange(spec["pixels"]).reshape(1, 1, -1)
    raw = (k * 7919 + b * 3571 + i * 104729) % 10007
    masks = (k * 31 + b * 7 + i * 17) % 5 == 0
    data = (raw / 7.3).astype(numpy.float32) if dtype == "float32" else (raw * 6).astype(dtype)
    return [masked(data[n], masks[n]) for n in range(spec["images"])]


STACKS = {"small": small_stack, "big": big_stack}


def select(method: str, images: list) -> dict:
    selection = PixelSelectionMethod[method].value()
    for image in images:
        selection.feed(image)
    result = selection.data
    return {
        "dtype": str(result.dtype),
        "data": result.data.ravel().tolist(),
        "mask": numpy.ma.getmaskarray(result).ravel().astype(int).tolist(),
    }


def main() -> None:
    cases = json.loads(CASES.read_text())
    sections = []
    for stack, keys in cases["cases"].items():
        spec = cases["stacks"][stack]
        entries = []
        for key in keys:
            dtype, method = key.split("/")
            entries.append(f"    {json.dumps(key)}: {json.dumps(select(method, STACKS[stack](spec, dtype)))}")
        sections.append(f'  {json.dumps(stack)}: {{\n' + ",\n".join(entries) + "\n  }")
    about = (
        "Expected rio-tiler 6.8 pixel selection results for test/mosaic-methods.test.ts (band-sequential data, "
        "masked pixels included; mask 1 = masked), written by tools/expected/mosaic_methods.py from "
        "mosaic-methods-cases.json; do not edit, re-run: .parity/venv/bin/python tools/expected/mosaic_methods.py"
    )
    OUTPUT.write_text(f'{{\n  "about": {json.dumps(about)},\n' + ",\n".join(sections) + "\n}\n")


if __name__ == "__main__":
    main()
