/** The TileMatrixSets tessera serves: TiTiler 0.18.10's thirteen plus NZTM2000 (generated data). */
import { readFileSync } from 'node:fs';
import { TileMatrixSet, type GridDefinition } from './grid.js';

interface GridFile {
  grids: GridDefinition[];
}

const file = JSON.parse(readFileSync(new URL('./data/grids.json', import.meta.url), 'utf8')) as GridFile;

const grids = new Map<string, TileMatrixSet>(file.grids.map((def) => [def.id, new TileMatrixSet(def)]));

/** Grid ids in the order TiTiler lists them (sorted). */
export const tmsIds: readonly string[] = [...grids.keys()].sort();

export function getTms(id: string): TileMatrixSet | undefined {
  return grids.get(id);
}

export const WEB_MERCATOR_QUAD = 'WebMercatorQuad';
