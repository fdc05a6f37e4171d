"""Writes the named colormaps tessera serves, taken from rio-tiler 6.8 (TiTiler 0.18.10).

Outputs (both committed, both deterministic: sorted names, no timestamps):
  src/image/data/colormap-names.json  the names, sorted: ["accent", "accent_r", ...]
  src/image/data/colormaps.json       {"<name>": "<base64 of the 256x4 RGBA uint8 table>", ...}
                                      in the same order as colormap-names.json

Dev tool; regenerate (from the repository root) with the parity venv, whose rio-tiler is the reference:
  .parity/venv/bin/python tools/colormaps/generate.py
"""
import base64
import json
import pathlib

import numpy
import rio_tiler

CMAP_DIR = pathlib.Path(rio_tiler.__file__).parent / "cmap_data"
OUT_DIR = pathlib.Path("src/image/data")


def load_tables() -> dict:
    tables = {}
    for path in sorted(CMAP_DIR.glob("*.npy")):
        table = numpy.load(path)
        # rio-tiler's own loader asserts the same shape and type.
        if table.shape != (256, 4) or table.dtype != numpy.uint8:
            raise SystemExit(f"{path.name}: expected a (256, 4) uint8 table, got {table.shape} {table.dtype}")
        tables[path.stem.lower()] = numpy.ascontiguousarray(table).tobytes()
    return tables


def main() -> None:
    tables = load_tables()
    names = sorted(tables)
    # rio-tiler 6.8 ships 211 colormaps; a different count means a different reference version.
    if len(names) != 211:
        raise SystemExit(f"expected 211 colormaps in {CMAP_DIR}, found {len(names)}")

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with open(OUT_DIR / "colormap-names.json", "w") as f:
        json.dump(names, f, separators=(",", ":"))
        f.write("\n")
    with open(OUT_DIR / "colormaps.json", "w") as f:
        body = {name: base64.b64encode(tables[name]).decode("ascii") for name in names}
        # One name per line keeps diffs of a regenerated file readable.
        f.write("{\n")
        f.write(",\n".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in body.items()))
        f.write("\n}\n")
    print(f"wrote {len(names)} colormaps to {OUT_DIR}")


if __name__ == "__main__":
    main()
