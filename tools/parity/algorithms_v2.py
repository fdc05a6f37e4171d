"""TiTiler 2.4.0's algorithms run on the arrays test/parity/algorithms-v2.test.ts sends (issue 37).

Reads a JSON list of cases on stdin and writes one JSON result per case on stdout. Each case names
an algorithm of titiler.core.algorithm (2.4.0, rio-tiler 9.4.12, numpy 2.4) and either holds an
image (bands little-endian base64, a numpy mask per band, bounds, band descriptions) to apply it
to, or only parameters to validate. Run with the venv of tools/parity/titiler2.sh:

    .parity/titiler-2.4.0/bin/python tools/parity/algorithms_v2.py < cases.json

Test tool only; tessera never needs Python at run time.
"""

import base64
import json
import sys
import warnings

import numpy
from pydantic import ValidationError
from rio_tiler.models import ImageData
from titiler.core.algorithm import algorithms


def decode(text, dtype, shape):
    """Little-endian base64 bytes as a numpy array."""
    raw = base64.b64decode(text)
    return numpy.frombuffer(raw, dtype=numpy.dtype(dtype).newbyteorder("<")).reshape(shape).astype(dtype)


def encode(array):
    """A numpy array as little-endian base64 bytes."""
    arr = numpy.ascontiguousarray(array)
    return base64.b64encode(arr.astype(arr.dtype.newbyteorder("<")).tobytes()).decode("ascii")


def run(case):
    """One case: a validation verdict, or the algorithm's output image."""
    model = algorithms.get(case["algorithm"])
    try:
        algo = model(**case["params"])
    except ValidationError as e:
        return {"validation": str(e)}
    if "image" not in case:
        return {"valid": True}
    img = case["image"]
    shape = (len(img["bands"]), img["height"], img["width"])
    data = numpy.stack([decode(b, img["dtype"], shape[1:]) for b in img["bands"]])
    mask = numpy.stack([decode(m, "uint8", shape[1:]) for m in img["masks"]]).astype(bool)
    array = numpy.ma.MaskedArray(data, mask=mask)
    image = ImageData(
        array,
        bounds=tuple(img["bounds"]),
        crs=None,
        band_descriptions=img["names"],
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = algo(image)
    except Exception as e:  # noqa: BLE001 - the reference's failures are compared too
        return {"error": f"{type(e).__name__}: {e}"}
    arr = out.array
    return {
        "dtype": str(arr.dtype),
        "shape": list(arr.shape),
        "bounds": list(out.bounds),
        "names": list(out.band_descriptions),
        "data": [encode(arr.data[b]) for b in range(arr.shape[0])],
        "mask": [encode(numpy.ma.getmaskarray(arr)[b].astype("uint8")) for b in range(arr.shape[0])],
    }


def main():
    cases = json.load(sys.stdin)
    json.dump([run(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
