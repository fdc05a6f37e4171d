"""What cogeo-mosaic 7.2 makes of a list of COGs, for test/mosaic-create.test.ts to compare `tessera mosaic create` with.

The test runs this live in the parity venv (its COGs are served on a port chosen at run time, and the
URLs are part of the document), in one of three ways:

    mosaic_create.py urls [--minzoom Z] [--maxzoom Z] [--quadkey-zoom Z] [--name N] URL...
        MosaicJSON.from_urls(URLs) as `cogeo-mosaic create` runs it, written as it writes it
        (model_dump_json(exclude_none=True)) on stdout; MultipleDataTypeError: exit 3.

    mosaic_create.py footprints < cases.json
        The same for footprints given directly (a list of cases, each {"footprints": [{url, bounds,
        minzoom, maxzoom, datatype}], "quadkey_zoom": Z?}): cogeo-mosaic's own from_urls with its
        footprint reading replaced by those footprints, turned into features as get_dataset_info does.
        One document per line.

    mosaic_create.py rectangles < cases.json
        rasterio.features.rasterize(all_touched=True) of axis-aligned rectangles given in pixel
        coordinates ({"width", "height", "rects": [[x0, r0, x1, r1]]}), as supermorecado burns a
        footprint: the burned cells of each, as [row, col] pairs, one JSON list per line.
"""
import argparse
import json
import sys
from unittest import mock

import morecantile
import numpy
from affine import Affine
from rasterio import features
from cogeo_mosaic import mosaic as cogeo_mosaic
from cogeo_mosaic.errors import MultipleDataTypeError
from cogeo_mosaic.mosaic import MosaicJSON

WEB_MERCATOR = morecantile.tms.get("WebMercatorQuad")


def from_urls(args) -> None:
    try:
        document = MosaicJSON.from_urls(args.urls, minzoom=args.minzoom, maxzoom=args.maxzoom, quadkey_zoom=args.quadkey_zoom)
    except MultipleDataTypeError as err:
        print(f"MultipleDataTypeError: {err}", file=sys.stderr)
        sys.exit(3)
    if args.name:
        document.name = args.name
    print(document.model_dump_json(exclude_none=True))


def feature(footprint: dict) -> dict:
    """get_dataset_info's feature for a COG with these properties."""
    w, s, e, n = footprint["bounds"]
    ring = [WEB_MERCATOR.truncate_lnglat(x, y) for x, y in [(w, n), (w, s), (e, s), (e, n), (w, n)]]
    properties = {key: footprint[key] for key in ("minzoom", "maxzoom", "datatype")}
    return {"geometry": {"type": "Polygon", "coordinates": [ring]}, "properties": {"path": footprint["url"], **properties}, "type": "Feature"}


def from_footprints() -> None:
    for case in json.load(sys.stdin):
        found = [feature(f) for f in case["footprints"]]
        with mock.patch.object(cogeo_mosaic, "get_footprints", return_value=found):
            document = MosaicJSON.from_urls([f["url"] for f in case["footprints"]], quadkey_zoom=case.get("quadkey_zoom"))
        print(document.model_dump_json(exclude_none=True))


def rectangles() -> None:
    case = json.load(sys.stdin)
    height = case["height"]
    # Row r of the raster spans y in [height - r - 1, height - r]: pixel and world coordinates agree on x.
    transform = Affine(1, 0, 0, 0, -1, height)
    for x0, r0, x1, r1 in case["rects"]:
        ring = [(x0, height - r0), (x0, height - r1), (x1, height - r1), (x1, height - r0), (x0, height - r0)]
        burned = features.rasterize([({"type": "Polygon", "coordinates": [ring]}, 1)], out_shape=(height, case["width"]), transform=transform, all_touched=True)
        print(json.dumps(numpy.argwhere(burned).tolist()))


def main() -> None:
    parser = argparse.ArgumentParser()
    modes = parser.add_subparsers(dest="mode", required=True)
    urls = modes.add_parser("urls")
    urls.add_argument("--minzoom", type=int)
    urls.add_argument("--maxzoom", type=int)
    urls.add_argument("--quadkey-zoom", type=int)
    urls.add_argument("--name")
    urls.add_argument("urls", nargs="+")
    modes.add_parser("footprints")
    modes.add_parser("rectangles")
    args = parser.parse_args()
    if args.mode == "urls":
        from_urls(args)
    elif args.mode == "footprints":
        from_footprints()
    else:
        rectangles()


if __name__ == "__main__":
    main()
