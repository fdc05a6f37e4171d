"""Writes STAC items (newline-delimited JSON, or generated) as stac-geoparquet with rustac.

    write.py ITEMS.ndjson OUT.parquet            the items of a file, as they are
    write.py --generate N OUT.parquet [SEED]     N generated items (the benchmark's catalogue)

The generated catalogue: items on a grid over Europe (lon -10..30, lat 35..70), footprints a
little larger than their cell so neighbours overlap, 24 dates, two collections, two assets each.
"""
import json
import random
import sys

import rustac


def read_items(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def generated(n, seed):
    rng = random.Random(seed)
    side = max(1, int((n / 24) ** 0.5))
    dx = 40.0 / side
    dy = 35.0 / side
    out = []
    for k in range(n):
        cell = k // 24
        t = k % 24
        col, row = cell % side, (cell // side) % side
        w = -10 + col * dx - dx * 0.1
        s = 35 + row * dy - dy * 0.1
        e, north = w + dx * 1.2, s + dy * 1.2
        collection = "s2" if t % 2 == 0 else "ls"
        out.append({
            "type": "Feature",
            "stac_version": "1.0.0",
            "stac_extensions": [],
            "id": f"{collection}-{cell}-{t}",
            "collection": collection,
            "bbox": [w, s, e, north],
            "geometry": {"type": "Polygon", "coordinates": [[[w, s], [e, s], [e, north], [w, north], [w, s]]]},
            "properties": {
                "datetime": f"2024-{1 + t // 2:02d}-{1 + (cell % 27):02d}T10:00:00Z",
                "eo:cloud_cover": rng.randint(0, 100),
                "platform": collection,
            },
            "assets": {
                "visual": {"href": f"https://data.example/{collection}/{cell}/{t}/visual.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["visual"]},
                "data": {"href": f"https://data.example/{collection}/{cell}/{t}/data.tif", "type": "image/tiff; application=geotiff", "roles": ["data"]},
            },
            "links": [],
        })
    return out


def main(argv):
    if argv[1] == "--generate":
        items = generated(int(argv[2]), int(argv[4]) if len(argv) > 4 else 1)
        out = argv[3]
    else:
        items = read_items(argv[1])
        out = argv[2]
    rustac.write_sync(out, {"type": "FeatureCollection", "features": items})


if __name__ == "__main__":
    main(sys.argv)
