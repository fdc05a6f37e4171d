"""Computes the expected MosaicJSON answers of test/mosaic-document.test.ts with cogeo-mosaic 7.2.

tessera reads MosaicJSON documents and looks assets up as TiTiler 0.18.10 does, so the test's expected
values come from the reference libraries: cogeo-mosaic's MemoryBackend answers `assets_for_tile`,
`assets_for_point` and `assets_for_bbox` (on the WebMercatorQuad backend, and on one opened with
morecantile's WGS1984Quad for the cross-grid tiles) and its zoom range; TiTiler's own mosaic endpoints
(MosaicTilerFactory over that backend, through FastAPI's test client) give the document dumps and the
/info bodies exactly as it writes them; morecantile 5.4 gives the quadkeys.

Reads test/fixtures/expected/mosaic-document-cases.json (documents and queries) and writes
test/fixtures/expected/mosaic-document.json; lookups are keyed by their query joined with commas
(numbers written as in the cases file). Tiles far above the quadkey zoom make cogeo-mosaic list every
descendant (z0 over a zoom-9 index: 4^9 cells), so this takes a couple of minutes. Run from anywhere,
in the parity venv:

    .parity/venv/bin/python tools/expected/mosaic_document.py
"""
import json
import pathlib
import warnings

# The test client warns (deprecated httpx transport) as it is imported; the responses are what matter.
warnings.simplefilter("ignore")

import morecantile
from cogeo_mosaic.backends import MemoryBackend
from fastapi import FastAPI, Query
from fastapi.testclient import TestClient
from rasterio.crs import CRS
from titiler.mosaic.factory import MosaicTilerFactory

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "test/fixtures/expected/mosaic-document-cases.json"
OUTPUT = ROOT / "test/fixtures/expected/mosaic-document.json"

WEB_MERCATOR = morecantile.tms.get("WebMercatorQuad")
WGS1984 = morecantile.tms.get("WGS1984Quad")
EPSG_3857 = CRS.from_epsg(3857)


def key(query) -> str:
    return ",".join(str(n) for n in query)


def titiler_client(documents: dict) -> TestClient:
    """TiTiler's mosaic endpoints, reading the cases' documents by name (?url=<name>) from memory."""

    def document(url: str = Query(...)) -> dict:
        return documents[url]

    app = FastAPI()
    app.include_router(MosaicTilerFactory(reader=MemoryBackend, path_dependency=document).router, prefix="/mosaicjson")
    return TestClient(app)


def body(client: TestClient, path: str) -> str:
    response = client.get(path)
    if response.status_code != 200:
        raise SystemExit(f"{path}: {response.status_code} {response.text}")
    return response.text


def main() -> None:
    cases = json.loads(CASES.read_text())
    documents = cases["documents"]
    client = titiler_client(documents)

    queries = cases["lookups"]["lookup"]
    lookup = MemoryBackend(documents["lookup"])
    lookup_wgs = MemoryBackend(documents["lookup"], tms=WGS1984)
    lookup_out = {
        "tile_assets": {key(t): lookup.assets_for_tile(*t) for t in queries["tiles"]},
        "point_assets": {key(p): lookup.assets_for_point(*p) for p in queries["points"]},
        "bbox_assets": {key(b): lookup.assets_for_bbox(*b) for b in queries["bboxes"]},
        "bbox_3857_assets": lookup.assets_for_bbox(*queries["bbox_3857"], coord_crs=EPSG_3857),
        "point_3857_assets": lookup.assets_for_point(*queries["point_3857"], coord_crs=EPSG_3857),
        "wgs1984quad_tile_assets": {key(t): lookup_wgs.assets_for_tile(*t) for t in queries["wgs1984quad_tiles"]},
        "zooms": {
            "WebMercatorQuad": {"minzoom": lookup.minzoom, "maxzoom": lookup.maxzoom},
            "WGS1984Quad": {"minzoom": lookup_wgs.minzoom, "maxzoom": lookup_wgs.maxzoom},
        },
        "info": json.loads(body(client, "/mosaicjson/info?url=lookup")),
    }

    full = MemoryBackend(documents["full"])
    full_out = {
        "dump_body": body(client, "/mosaicjson/?url=full"),
        "info_body": body(client, "/mosaicjson/info?url=full"),
        "tile_assets": {key(t): full.assets_for_tile(*t) for t in cases["lookups"]["full"]["tiles"]},
    }
    fixture_out = {"dump_body": body(client, "/mosaicjson/?url=fixture")}

    quadkeys = {}
    for x, y, z in cases["quadkey_tiles"]:
        quadkey = WEB_MERCATOR.quadkey(x, y, z)
        if tuple(WEB_MERCATOR.quadkey_to_tile(quadkey)) != (x, y, z):
            raise SystemExit(f"quadkey {quadkey!r} does not map back to {x},{y},{z}")
        quadkeys[key((x, y, z))] = quadkey

    def section(name: str, values: dict) -> str:
        lines = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in values.items())
        return f"  {json.dumps(name)}: {{\n{lines}\n  }}"

    about = (
        "Expected cogeo-mosaic 7.2 / TiTiler 0.18.10 / morecantile 5.4 answers for test/mosaic-document.test.ts, "
        "written by tools/expected/mosaic_document.py from mosaic-document-cases.json; do not edit, re-run: "
        ".parity/venv/bin/python tools/expected/mosaic_document.py"
    )
    parts = [
        section("lookup", lookup_out),
        section("full", full_out),
        section("fixture", fixture_out),
        f'  "quadkeys": {json.dumps(quadkeys)}',
    ]
    OUTPUT.write_text(f'{{\n  "about": {json.dumps(about)},\n' + ",\n".join(parts) + "\n}\n")


if __name__ == "__main__":
    main()
