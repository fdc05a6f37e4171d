/**
 * The JPEG encoder against IJG libjpeg 9, the library inside TiTiler's rasterio wheels: the
 * reference files below were written by the parity venv's rasterio 1.4.4 (GDAL 3.10.3, libjpeg 9.6)
 * with `driver='JPEG', quality=85` from the same synthetic pixels this test builds, and base64'd.
 * Both files are decoded by the same decoder (sharp's), so equal planes mean equal DCT coefficients.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { encodeJpegLikeLibjpeg9 } from '../src/image/encode/jpeg.js';

/** r = (37x + 11y) mod 256, g = 255 on the left half, b = 200/30 in a 4-pixel check: hard colour edges. */
function rgbPlanes(w: number, h: number): Uint8Array[] {
  const r = new Uint8Array(w * h);
  const g = new Uint8Array(w * h);
  const b = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      r[i] = (x * 37 + y * 11) % 256;
      g[i] = x < Math.floor(w / 2) ? 255 : 0;
      b[i] = ((x ^ y) & 4) !== 0 ? 200 : 30;
    }
  }
  return [r, g, b];
}

/** (53x + 29y) mod 256. */
function grayPlane(w: number, h: number): Uint8Array {
  return Uint8Array.from({ length: w * h }, (_, i) => ((i % w) * 53 + Math.floor(i / w) * 29) % 256);
}

const LIBJPEG9_RGB_37x21 =
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFhwXExQaFRERGCEYGh0dHx8fExciJCIeJBweHx7/2wBDAQUFBQcGBw4ICA4eFBEUHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh7/wAARCAAVACUDASIAAhEBAxEB/8QAGgAAAQUBAAAAAAAAAAAAAAAAAAQHCAIDBv/EAC8QAAIBAgQEBAQHAAAAAAAAAAECAxEEEgAFIRMGIoExQWEVBxQIUTJSYnGR8PH/xAAYAQADAQEAAAAAAAAAAAAAAAAHCAUCBP/EADERAAECAwYDBAsAAAAAAAAAAAECEQMEABIFEyExQRRhcTKBogYjJDM1UmJkc5GTof/aAAwDAQACEQMRAD8Ae+xRNC5YuXZVmNxHwUUtgqW6dvGtASaembXkftHLsVsvDla9lVSrbMFXqJHfCO/rnTVk9v8AbdPV+JxKzSJhpSmymvd/7TNrwG316CzGKRIIwCCoWjGjEg7k1BXx+2RkFYBtH0WGSr4sF8h9zE8NChUEJQYKQ7JTCHMqZSujDKoj/UqBp/xYu9NXDKZTBO4wkFaW8arv4b1b+Bnh9QAttYtLFAsohjq3SVKu1CR67YTt9z2cD48Ar9QfMJo0qIbeBAyhcOCCMHwrWrFj3y3+hyJZ3V7q8gmnicvMA2zhFqQPE+VBStNsnS6Dwt3QD7IwYafmwTEA/ZieF6Zy4UCNIS6dUrsDqiCkP0Dg0k1dOHrFzhf5iNMMKdOHBhHUPXqLf5kyt5bs3tLNpJC1w8xxMzHcnzJO9a1yZpKvYXYeEE1w9nLDsW7O/a3ftcnaqcG4lXini1IcrdX5OQ7gw7qndYuE5muXfE4EnBVS34QnTt+5qaeuc9DuxZte6zIjTlw8/DZ6EBQSFxb+VB4eWTJlep9IkRNCBlw4hCHvZERreurvu7bUpstHiKVCWTmpUdR5qS9k9zdKiL8b+HovOnM8uDj8WKCOlcNMUESV8/zV7Z4W7HtPLEcahZRdzpG1RTCBVtu4GTJk8SvqUkrAy4fDw97NtIta6vzdtqZHy/7jlR9Kn+kA0o1LV7nlLT7L5SK3uPm8eLiqenDhpSh/UcmTJnonJuLdkdUrLMlCdAwOuZzLnU1q+b8vGVmzCgRlJSAlgGbsjka//9k=';
const LIBJPEG9_GRAY_19x13 =
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFhwXExQaFRERGCEYGh0dHx8fExciJCIeJBweHx7/wAALCAANABMBAREA/8QAGAAAAgMAAAAAAAAAAAAAAAAABAIDBQb/xAAnEAACAQMDAwQDAQAAAAAAAAACAQMEBQYREhMhACIHFBUkFjEyYf/aAAgBAQAAPwAcKKwWyhoLEpYZbFicRXG8nCQNyVqTAKYWaFcopsEkehHPsaRB0muEFfevrBD7e+ZtUqSoijMd9HbI9ojE2DB+QjHCiYNSAE+vXsiv9Q8qtNZLasJx/Ga+wUZe3pKqrppZDn2eJyI4p0BARo2DSWoMW+uvbUFhSx3CbIdbNLFkNdUVt0nkMymqTh4mKMt3mLOZmW5NsgAtU11z9Vkp5Fg9VlR0vtpsmqYLFTwjJyBb6MojZAKNNFujjkEtEHnMci2vp3a5R6v4/wCmt3eE/gHyvx1PB9v5RQ8nJCEv8cJaab9P29dNf87/AP/Z';

/** Decoded pixels (gray files come back as RGB from sharp) and the file's own layout. */
async function decode(jpeg: Buffer): Promise<{ width: number; height: number; channels: number; data: Buffer }> {
  const meta = await sharp(jpeg).metadata();
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: meta.channels ?? 0, data };
}

/** The marker segments before the scan, as [marker, payload]. */
function segments(jpeg: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  assert.equal(jpeg.readUInt16BE(0), 0xffd8, 'SOI');
  for (let i = 2; i < jpeg.length; ) {
    assert.equal(jpeg[i], 0xff, `marker at ${i}`);
    const marker = jpeg[i + 1]!;
    const length = jpeg.readUInt16BE(i + 2);
    out.push([marker, jpeg.subarray(i + 4, i + 2 + length)]);
    if (marker === 0xda) break;
    i += 2 + length;
  }
  return out;
}

function interleave(planes: Uint8Array[]): Buffer {
  const n = planes[0]!.length;
  const out = Buffer.alloc(n * planes.length);
  planes.forEach((p, c) => {
    p.forEach((v, i) => {
      out[i * planes.length + c] = v;
    });
  });
  return out;
}

describe('jpeg encoder (libjpeg 9 coefficients)', () => {
  it("decodes to exactly libjpeg 9's pixels for RGB with hard colour edges (4:2:0, odd size)", async () => {
    const ours = await decode(encodeJpegLikeLibjpeg9(rgbPlanes(37, 21), 37, 21, 85));
    const ref = await decode(Buffer.from(LIBJPEG9_RGB_37x21, 'base64'));
    assert.deepEqual([ours.width, ours.height, ours.channels], [37, 21, 3]);
    assert.ok(ours.data.equals(ref.data), "decoded pixels differ from libjpeg 9's");
  });

  it("decodes to exactly libjpeg 9's pixels for a grayscale image", async () => {
    const ours = await decode(encodeJpegLikeLibjpeg9([grayPlane(19, 13)], 19, 13, 85));
    const ref = await decode(Buffer.from(LIBJPEG9_GRAY_19x13, 'base64'));
    assert.deepEqual([ours.width, ours.height, ours.channels], [19, 13, 1]);
    assert.ok(ours.data.equals(ref.data), "decoded pixels differ from libjpeg 9's");
  });

  it('is discriminating: libjpeg-turbo (sharp) at the same settings decodes differently here', async () => {
    const planes = rgbPlanes(37, 21);
    const turbo = await sharp(interleave(planes), { raw: { width: 37, height: 21, channels: 3 } })
      .jpeg({ quality: 85, chromaSubsampling: '4:2:0' })
      .toBuffer();
    const ref = await decode(Buffer.from(LIBJPEG9_RGB_37x21, 'base64'));
    assert.ok(!(await decode(turbo)).data.equals(ref.data));
  });

  it("writes libjpeg 9's quantization tables, frame header and JFIF header", () => {
    const oursSegments = segments(encodeJpegLikeLibjpeg9(rgbPlanes(37, 21), 37, 21, 85));
    const refSegments = segments(Buffer.from(LIBJPEG9_RGB_37x21, 'base64'));
    const dqt = (list: Array<[number, Buffer]>): string[] => list.filter(([m]) => m === 0xdb).map(([, p]) => p.toString('hex'));
    assert.deepEqual(dqt(oursSegments), dqt(refSegments));
    const ours = new Map(oursSegments);
    const ref = new Map(refSegments);
    assert.equal(ours.get(0xc0)!.toString('hex'), ref.get(0xc0)!.toString('hex'), 'SOF0: 8-bit, 37×21, Y 2×2, Cb/Cr 1×1');
    assert.equal(ours.get(0xe0)!.toString('hex'), ref.get(0xe0)!.toString('hex'), 'APP0 JFIF');
  });

  it('scales the tables with the quality as libjpeg does', () => {
    const table = (quality: number): Buffer => segments(encodeJpegLikeLibjpeg9([grayPlane(8, 8)], 8, 8, quality)).find(([m]) => m === 0xdb)![1];
    // Hand-derived from Annex K's first luminance entries 16, 11 (zig-zag 0, 1): quality 50 keeps
    // them, 100 makes every entry 1, 10 multiplies by 5 (capped at 255 for baseline).
    assert.deepEqual([...table(50).subarray(1, 3)], [16, 11]);
    assert.ok(
      table(100)
        .subarray(1)
        .every((q) => q === 1),
    );
    assert.deepEqual([...table(10).subarray(1, 3)], [80, 55]);
    assert.equal(Math.max(...table(10).subarray(1)), 255);
  });

  it('encodes sizes across MCU boundaries and a single pixel into decodable files close to the source', async () => {
    for (const [w, h] of [
      [1, 1],
      [16, 16],
      [17, 9],
      [300, 257],
    ] as const) {
      // A diagonal ramp per band, offset per band.
      const smooth = [0, 20, 40].map((offset) =>
        Uint8Array.from({ length: w * h }, (_, i) => offset + 64 + Math.floor((120 * ((i % w) + Math.floor(i / w))) / (w + h))),
      );
      const out = await decode(encodeJpegLikeLibjpeg9(smooth, w, h, 85));
      assert.deepEqual([out.width, out.height, out.channels], [w, h, 3]);
      let worst = 0;
      for (let i = 0; i < w * h; i++) {
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(out.data[i * 3 + c]! - smooth[c]![i]!));
      }
      assert.ok(worst <= 24, `${w}×${h}: worst error ${worst}`);
    }
  });
});
