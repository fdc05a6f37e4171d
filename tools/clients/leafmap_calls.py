"""leafmap's TiTiler helpers pointed at a tessera, as a notebook calls them; prints what they answer.

Usage: python leafmap_calls.py ENDPOINT COG_URL ITEM_URL LON LAT

Prints one JSON object: leafmap's version, each call's answer (or the error it raised), and every URL
leafmap requested (recorded, not altered: its helpers fall back to a public TiTiler when tessera fails,
and the test must see that none did). Run by test/titiler2-clients.test.ts in the venv
tools/clients/leafmap.sh makes.
"""

import json
import sys

import requests

requested = []
_send = requests.sessions.Session.send


def _recording_send(self, request, **kwargs):
    requested.append(request.url)
    return _send(self, request, **kwargs)


requests.sessions.Session.send = _recording_send

import leafmap  # noqa: E402  (after the recorder, so that every request of leafmap's is seen)
from leafmap import stac  # noqa: E402

endpoint, cog, item, lon, lat = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
E = {"titiler_endpoint": endpoint}

calls = {
    "cog_info": lambda: stac.cog_info(cog, **E),
    "cog_bounds": lambda: stac.cog_bounds(cog, **E),
    "cog_center": lambda: stac.cog_center(cog, **E),
    "cog_bands": lambda: stac.cog_bands(cog, **E),
    "cog_stats": lambda: stac.cog_stats(cog, **E),
    "cog_tile": lambda: stac.cog_tile(cog, **E),
    "cog_tile_bands": lambda: stac.cog_tile(cog, bands=[3, 2, 1], **E),
    "cog_tile_colormap": lambda: stac.cog_tile(cog, bands=[2], colormap_name="viridis", rescale="0,255", **E),
    "cog_pixel_value": lambda: stac.cog_pixel_value(lon, lat, cog, None, verbose=False, **E),
    "stac_bands": lambda: stac.stac_bands(item, **E),
    "stac_bounds": lambda: stac.stac_bounds(item, assets="rgb", **E),
    "stac_center": lambda: stac.stac_center(item, assets="rgb", **E),
    "stac_info": lambda: stac.stac_info(item, assets="rgb", **E),
    "stac_stats": lambda: stac.stac_stats(item, assets="rgb", **E),
    "stac_tile": lambda: stac.stac_tile(item, assets="rgb", **E),
    "stac_tile_dem": lambda: stac.stac_tile(item, assets="dem", colormap_name="terrain", **E),
    "stac_tile_expression": lambda: stac.stac_tile(item, assets="dem", expression="b1/10", rescale="0,400", **E),
}


def layers():
    """The ipyleaflet map's own methods (what a notebook calls): the tile layers they add."""
    m = leafmap.Map()
    m.add_cog_layer(cog, name="cog", **E)
    m.add_stac_layer(item, assets="rgb", name="stac", **E)
    return {layer.name: layer.url for layer in m.layers if layer.name in ("cog", "stac")}


calls["map_layers"] = layers

answers = {}
for name, call in calls.items():
    try:
        answers[name] = {"ok": call()}
    except Exception as err:  # reported, not raised: the test says which call failed and how
        answers[name] = {"error": f"{type(err).__name__}: {err}"}

print(json.dumps({"version": leafmap.__version__, "answers": answers, "requested": requested}))
