"""Generates src/tms/data/grids.json from morecantile (dev tool, run in the parity venv).

The 13 grids TiTiler 0.18.10 serves come from morecantile 5.4.2, the version it resolves; NZTM2000 is
taken from morecantile 3.4.0's TMS 1.0 file (TiTiler <= 0.11 served it). Every number the server needs
(cell sizes, origins, matrix sizes, the xy and geographic bounding boxes) is computed here by
morecantile itself, so tessera's grid math starts from exactly the same values.

    .parity/venv/bin/python tools/tms/generate.py [path/to/morecantile-3.4.0.whl]
"""
import json
import re
import sys
import zipfile

import morecantile
from morecantile.models import TileMatrixSet
from morecantile.utils import meters_per_unit

TITILER_GRIDS = sorted(morecantile.tms.list())


def crs_uri(crs) -> str:
    """OGC http URI of a CRS, the form the TMS 1.0 documents use."""
    text = crs if isinstance(crs, str) else crs.to_string()
    m = re.match(r"^urn:ogc:def:crs:([A-Za-z]+):([0-9.]*):(\w+)$", text)
    if m:
        return f"http://www.opengis.net/def/crs/{m.group(1)}/{m.group(2) or '0'}/{m.group(3)}"
    return text


def gdal_srs(uri: str) -> str:
    m = re.match(r"^http://www.opengis.net/def/crs/(EPSG|OGC)/[0-9.]+/(\w+)$", uri)
    if not m:
        raise ValueError(f"unsupported CRS {uri}")
    return f"{m.group(1)}:{m.group(2)}"


def describe(tms: TileMatrixSet, source_crs: str, bounding_box=None) -> dict:
    uri = crs_uri(source_crs)
    xy = tms.xy_bbox
    geo = tms.bbox
    grid = {
        "id": tms.id,
        "title": tms.title,
        "crs": source_crs,
        "crsUri": uri,
        "srs": gdal_srs(uri),
        "orderedAxes": list(tms.orderedAxes) if tms.orderedAxes else None,
        "invertAxis": bool(tms._invert_axis),
        "wellKnownScaleSet": str(tms.wellKnownScaleSet) if tms.wellKnownScaleSet else None,
        # What a TMS 1.0 reader multiplies cell sizes by to get scale denominators (morecantile's from_v1).
        "metersPerUnit": meters_per_unit(tms.crs._pyproj_crs),
        "xyBbox": [xy.left, xy.bottom, xy.right, xy.top],
        "geographicBbox": [geo.left, geo.bottom, geo.right, geo.top],
        "boundingBox": bounding_box,
        "matrices": [],
    }
    if getattr(tms, "description", None):
        grid["abstract"] = tms.description
    if getattr(tms, "keywords", None):
        grid["keywords"] = list(tms.keywords)
    for m in tms.tileMatrices:
        matrix = {
            "id": m.id,
            "scaleDenominator": m.scaleDenominator,
            "cellSize": m.cellSize,
            "pointOfOrigin": list(m.pointOfOrigin),
            # Python's text of the origin (90 vs 90.0), which TiTiler's WMTS prints verbatim.
            "pointOfOriginText": [repr(v) for v in m.pointOfOrigin],
            "tileWidth": m.tileWidth,
            "tileHeight": m.tileHeight,
            "matrixWidth": m.matrixWidth,
            "matrixHeight": m.matrixHeight,
        }
        if m.variableMatrixWidths:
            matrix["variableMatrixWidths"] = [
                {"coalesce": v.coalesce, "minTileRow": v.minTileRow, "maxTileRow": v.maxTileRow}
                for v in m.variableMatrixWidths
            ]
        grid["matrices"].append(matrix)
    grid["matrices"].sort(key=lambda m: int(m["id"]))
    return {k: v for k, v in grid.items() if v is not None}


def main() -> None:
    grids = []
    for name in TITILER_GRIDS:
        tms = morecantile.tms.get(name)
        source = json.loads(tms.model_dump_json(exclude_none=True))
        grids.append(describe(tms, source["crs"]))
    if len(sys.argv) > 1:
        with zipfile.ZipFile(sys.argv[1]) as wheel:
            v1 = json.loads(wheel.read("morecantile/data/NZTM2000.json"))
        bb = dict(v1["boundingBox"])  # from_v1 consumes its input
        tms = TileMatrixSet.from_v1(json.loads(json.dumps(v1)))
        grids.append(describe(tms, v1["supportedCRS"], {
            "crs": crs_uri(bb["crs"]), "lowerCorner": bb["lowerCorner"], "upperCorner": bb["upperCorner"]}))
    grids.sort(key=lambda g: g["id"])
    doc = {
        "generatedBy": "tools/tms/generate.py",
        "source": f"morecantile {morecantile.__version__}" + (" + morecantile 3.4.0 (NZTM2000)" if len(sys.argv) > 1 else ""),
        "grids": grids,
    }
    with open("src/tms/data/grids.json", "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(grids)} grids: {', '.join(g['id'] for g in grids)}")


if __name__ == "__main__":
    main()
