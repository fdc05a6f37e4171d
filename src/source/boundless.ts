/**
 * Which part of a raster a window read partly off it takes, and where that part lands in the
 * output, as rasterio's boundless read decides it (rio-tiler `read` sets `boundless=True` when a
 * window of a raster in the output CRS reaches past an edge).
 *
 * rasterio (rasterio/vrt.py `_boundless_vrt_doc`) wraps the raster in a VRT whose origin is the
 * window's corner and whose size is the larger of raster and window plus one, the raster placed in
 * it by a DstRect at the window's (fractional) negative offset, and reads the VRT's window (0, 0,
 * width, height) at the output size. GDAL answers it through VRTSimpleSource::GetSrcDstWindow
 * (frmts/vrt/vrtsources.cpp): the request is clipped to the raster, taken into source pixels, and
 * the clipped part put back into the buffer at whole pixels (an offset rounded down past a 1e-3
 * slack, an end rounded up short of it), the source window stretched to match those whole
 * pixels. Only that region of the output is read, from that source window, by the source band's
 * RasterIO (its own overview choice and sampling); the rest is the VRT's background, masked. So
 * which edge rows and columns hold data differs from "the pixel's centre is on the raster" by up
 * to a pixel, and so does the sampling near the edge.
 *
 * When the raster has overviews, the VRT has virtual ones, and a read that is downsampled enough
 * (by GDAL 3.10's rule for nearest, as rasterio reads the VRT) goes to one of those first: the
 * window is scaled by the VRT's own ratio to that overview, the DstRect by the raster's ratio to its
 * overview, and the clipped source window then read at full-resolution coordinates. The virtual
 * overview's size is the raster overview's when the VRT is one or two pixels larger than the raster
 * on both axes (a window inside the raster's extent), else the VRT's size times the raster's ratio,
 * rounded half up — fitted to GDAL 3.10's answers (TiTiler's rasterio wheel) on sizes and windows of
 * two rasters, square and not, with one and two overviews; one case is known to differ (a VRT
 * exactly one or two pixels over a multiple of the raster, which GDAL sizes down).
 *
 * Pure arithmetic, on the same doubles rasterio and GDAL compute (affine's operation order).
 * Checked against GDAL 3.10's own boundless reads in test/parity/sampling.test.ts.
 */
import type { GeoTransform, Window } from './geometry.js';
import { overviewForRead } from './overview-choice.js';

/** A window in source pixels (fractional) or in output pixels (whole). */
export interface PixelRect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface BoundlessPart {
  /** The source window read, in full-resolution pixels (fractional). */
  src: PixelRect;
  /** Its size in whole pixels: what the source band's overview choice weighs. */
  srcWhole: { w: number; h: number };
  /** Where it lands in the output buffer. */
  out: PixelRect;
}

/**
 * rio-tiler `read`: a window is read boundless when it starts before or ends at or past an edge.
 * The whole raster is read without a window (a preview), so not boundless; a part whose bounds are
 * exactly the raster's would be, and is read as the whole raster here.
 */
export function needsBoundless(win: Window, rasterW: number, rasterH: number): boolean {
  if (win.colOff === 0 && win.rowOff === 0 && win.width === rasterW && win.height === rasterH) return false;
  return Math.min(win.colOff, win.rowOff) < 0 || win.colOff + win.width >= rasterW || win.rowOff + win.height >= rasterH;
}

/** CPL's RoundIfCloseToInt: within 1e-10 of an integer, that integer. */
function roundIfCloseToInt(v: number): number {
  const r = Math.round(v);
  return Math.abs(v - r) < 1e-10 ? r : v;
}

/** A source's DstRect (where it sits in the VRT) and its SrcRect's size (the SrcRect starts at 0, 0). */
interface Placement {
  dstX: number;
  dstY: number;
  dstW: number;
  dstH: number;
  srcW: number;
  srcH: number;
}

/**
 * VRTSimpleSource::GetSrcDstWindow for a request (x, y, w, h) of the VRT into a bufW×bufH buffer,
 * the source band being rasterW×rasterH; undefined when the source gives nothing to it.
 */
function srcDstWindow(req: PixelRect, bufW: number, bufH: number, p: Placement, rasterW: number, rasterH: number): BoundlessPart | undefined {
  const { x: dfXOff, y: dfYOff, w: dfXSize, h: dfYSize } = req;
  if (dfXOff >= p.dstX + p.dstW || dfYOff >= p.dstY + p.dstH || dfXOff + dfXSize <= p.dstX || dfYOff + dfYSize <= p.dstY) return undefined;
  let [rx, ry, rw, rh] = [dfXOff, dfYOff, dfXSize, dfYSize];
  let modX = false;
  let modY = false;
  if (rx < p.dstX) {
    rw = rw + rx - p.dstX;
    rx = p.dstX;
    modX = true;
  }
  if (ry < p.dstY) {
    rh = rh + ry - p.dstY;
    ry = p.dstY;
    modY = true;
  }
  if (rx + rw > p.dstX + p.dstW) {
    rw = p.dstX + p.dstW - rx;
    modX = true;
  }
  if (ry + rh > p.dstY + p.dstH) {
    rh = p.dstY + p.dstH - ry;
    modY = true;
  }
  const scaleX = p.srcW / p.dstW;
  const scaleY = p.srcH / p.dstH;
  let reqX = (rx - p.dstX) * scaleX;
  let reqY = (ry - p.dstY) * scaleY;
  let reqW = rw * scaleX;
  let reqH = rh * scaleY;
  if (![reqX, reqY, reqW, reqH].every(Number.isFinite) || reqW < 0 || reqH < 0) return undefined;
  if (reqX < 0) {
    reqW += reqX;
    reqX = 0;
    modX = true;
  }
  if (reqY < 0) {
    reqH += reqY;
    reqY = 0;
    modY = true;
  }
  let nReqX = Math.floor(reqX);
  let nReqY = Math.floor(reqY);
  const EPS = 1e-3;
  if (reqX - nReqX > 1 - EPS) {
    nReqX++;
    reqX = nReqX;
  }
  if (reqY - nReqY > 1 - EPS) {
    nReqY++;
    reqY = nReqY;
  }
  let nReqW = Math.max(1, Math.floor(reqW + 0.5));
  let nReqH = Math.max(1, Math.floor(reqH + 0.5));
  if (nReqX + nReqW > rasterW) {
    nReqW = rasterW - nReqX;
    modX = true;
  }
  if (reqX + reqW > rasterW) {
    reqW = rasterW - reqX;
    modX = true;
  }
  if (nReqY + nReqH > rasterH) {
    nReqH = rasterH - nReqY;
    modY = true;
  }
  if (reqY + reqH > rasterH) {
    reqH = rasterH - reqY;
    modY = true;
  }
  if (nReqX >= rasterW || nReqY >= rasterH || nReqW <= 0 || nReqH <= 0) return undefined;

  let [outX, outY, outW, outH] = [0, 0, bufW, bufH];
  if (modX || modY) {
    // SrcToDst of the (clipped) source window's corners.
    const ulx = (reqX / p.srcW) * p.dstW + p.dstX;
    const uly = (reqY / p.srcH) * p.dstH + p.dstY;
    const lrx = ((reqX + reqW) / p.srcW) * p.dstW + p.dstX;
    const lry = ((reqY + reqH) / p.srcH) * p.dstH + p.dstY;
    if (modX) {
      const scale = bufW / dfXSize;
      const off = (ulx - dfXOff) * scale;
      outX = off <= 0 ? 0 : Math.trunc(off + EPS);
      const delta = ((off - outX) / scale / p.dstW) * p.srcW;
      reqX -= delta;
      reqW += delta;
      const right = (lrx - dfXOff) * scale;
      if (right < off) return undefined;
      const nRight = Math.ceil(right - EPS);
      outW = Math.min(nRight - outX, bufW - outX);
      reqW += ((nRight - right) / scale / p.dstW) * p.srcW;
    }
    if (modY) {
      const scale = bufH / dfYSize;
      const off = (uly - dfYOff) * scale;
      outY = off <= 0 ? 0 : Math.trunc(off + EPS);
      const delta = ((off - outY) / scale / p.dstH) * p.srcH;
      reqY -= delta;
      reqH += delta;
      const bottom = (lry - dfYOff) * scale;
      if (bottom < off) return undefined;
      const nBottom = Math.ceil(bottom - EPS);
      outH = Math.min(nBottom - outY, bufH - outY);
      reqH += ((nBottom - bottom) / scale / p.dstH) * p.srcH;
    }
    if (outW < 1 || outH < 1) return undefined;
  }
  return {
    src: { x: roundIfCloseToInt(reqX), y: roundIfCloseToInt(reqY), w: roundIfCloseToInt(reqW), h: roundIfCloseToInt(reqH) },
    srcWhole: { w: nReqW, h: nReqH },
    out: { x: outX, y: outY, w: outW, h: outH },
  };
}

/**
 * The part of a width×height raster (geotransform `gt`, overview sizes `overviews`) that a boundless
 * read of `win` into a bufW×bufH buffer takes, and where it goes; undefined when it takes nothing
 * (all background).
 */
export function boundlessPart(
  gt: GeoTransform,
  rasterW: number,
  rasterH: number,
  overviews: readonly (readonly [number, number])[],
  win: Window,
  bufW: number,
  bufH: number,
): BoundlessPart | undefined {
  const [c, a, b, f, d, e] = gt;
  // rasterio's window_transform: the window's corner through the affine, then the raster's
  // transform translated by (corner − origin).
  const x = win.colOff * a + win.rowOff * b + c;
  const y = win.colOff * d + win.rowOff * e + f;
  const placement: Placement = {
    dstX: (c - (c + (x - c))) / a,
    dstY: (f - (f + (y - f))) / e,
    dstW: (rasterW * a) / a,
    dstH: (rasterH * e) / e,
    srcW: rasterW,
    srcH: rasterH,
  };
  const vrtW = Math.trunc(Math.max(rasterW, win.width) + 1);
  const vrtH = Math.trunc(Math.max(rasterH, win.height) + 1);
  const snap = (vrtW - rasterW === 1 || vrtW - rasterW === 2) && (vrtH - rasterH === 1 || vrtH - rasterH === 2);
  const virtual = overviews.map(([ow, oh]): [number, number] =>
    snap ? [ow, oh] : [Math.floor((vrtW * ow) / rasterW + 0.5), Math.floor((vrtH * oh) / rasterH + 0.5)],
  );
  // rasterio reads the VRT without naming a resampling: its overview is chosen as for nearest.
  const level = overviewForRead(vrtW, vrtH, virtual, Math.trunc(win.width), Math.trunc(win.height), bufW, bufH, true, 'gdal-3.10');
  if (level === undefined) return srcDstWindow({ x: 0, y: 0, w: win.width, h: win.height }, bufW, bufH, placement, rasterW, rasterH);
  const [vw, vh] = virtual[level]!;
  const [ow, oh] = overviews[level]!;
  const rx = ow / rasterW;
  const ry = oh / rasterH;
  const scaled: Placement = { ...placement, dstX: placement.dstX * rx, dstY: placement.dstY * ry, dstW: placement.dstW * rx, dstH: placement.dstH * ry };
  return srcDstWindow({ x: 0, y: 0, w: win.width / (vrtW / vw), h: win.height / (vrtH / vh) }, bufW, bufH, scaled, rasterW, rasterH);
}
