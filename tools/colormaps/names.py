"""Writes src/image/data/colormap-names.json: the colormap names rio-tiler 6.8 offers (TiTiler 0.18.10).

Dev tool, run in the parity venv: .parity/venv/bin/python tools/colormaps/names.py
"""
import json

from rio_tiler.colormap import cmap

with open("src/image/data/colormap-names.json", "w") as f:
    json.dump(sorted(cmap.list()), f, separators=(",", ":"))
    f.write("\n")
