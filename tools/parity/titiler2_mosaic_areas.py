"""TiTiler 2.4.0's application with the mosaic area routes on (a parity reference, never run by tessera).

titiler.application 2.4.0 mounts /mosaicjson with MosaicTilerFactory's defaults, which leave
`add_part`, `add_statistics` and `add_ogc_maps` off; titiler-pgstac turns the first two on for its
searches. tessera answers /mosaicjson/bbox, /feature, POST /statistics and (TESSERA_TITILER_API=2)
/map, so test/parity/titiler2-mosaic-areas.test.ts measures them against the same factory with the
three switched on, mounted beside the application's own /mosaicjson routes (its routes match first;
none of them has these paths).
"""

from cogeo_mosaic.backends import MosaicBackend
from titiler.application.main import app
from titiler.mosaic.factory import MosaicTilerFactory

areas = MosaicTilerFactory(
    backend=MosaicBackend,
    router_prefix="/mosaicjson",
    add_viewer=False,
    add_part=True,
    add_statistics=True,
    add_ogc_maps=True,
)
app.include_router(areas.router, prefix="/mosaicjson", tags=["MosaicJSON areas"])
