/**
 * Statistics (rio-tiler 6.8 `get_array_statistics` as TiTiler 0.18.10 serves it).
 *
 * Expected outputs were computed while writing these tests with rio-tiler 6.8.0 / numpy 2.4.6 in the
 * parity venv, through TiTiler's own response pipeline (`ImageData.statistics`, the `Statistics`
 * response model, TiTiler's JSONResponse), from the same inputs: small arrays written out here, large
 * ones from a seeded mulberry32 generator implemented identically in Python and below. Bands without
 * valid pixels make rio-tiler 6.8 raise (TiTiler answers 500); their expected outputs come from the
 * same code with its two weighted helpers returning NaN for empty input, as rio-tiler 7 does.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pyDumps } from '../src/pyjson.js';
import { TesseraError } from '../src/errors.js';
import { ARRAY_OF, type DType, type ImageData } from '../src/image/image-data.js';
import { sumOf } from '../src/image/pairwise-sum.js';
import { sortValues } from '../src/image/sort-values.js';
import { statisticsMapToJson, statisticsToJson } from '../src/image/statistics-json.js';
import { parseStatisticsOptions, type StatisticsOptions } from '../src/image/statistics-options.js';
import { bandStatistics, castToDtype, imageStatistics, roundHalfEven2 } from '../src/image/statistics.js';

type Generated = { gen: string; seed: number };

interface StatisticsCase {
  name: string;
  dtype: DType;
  width: number;
  height: number;
  data: number[] | Generated;
  /** 1 = masked. */
  masked?: number[];
  coverage?: number[] | Generated;
  query?: Record<string, string | string[]>;
  /** TiTiler's response body for `{"b1": BandStatistics}`. */
  expected: string;
}

const CASES: StatisticsCase[] = [
  {"name": "uint8 small, defaults", "dtype": "uint8", "width": 5, "height": 4, "data": [3, 7, 7, 1, 0, 255, 7, 3, 3, 9, 12, 12, 1, 7, 200, 3, 0, 1, 4, 7], "expected": "{\"b1\":{\"min\":0.0,\"max\":255.0,\"mean\":27.1,\"count\":20.0,\"sum\":542.0,\"std\":67.4558374049274,\"median\":4.0,\"majority\":7.0,\"minority\":4.0,\"unique\":9.0,\"histogram\":[[18,0,0,0,0,0,0,1,0,1],[0.0,25.5,51.0,76.5,102.0,127.5,153.0,178.5,204.0,229.5,255.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":20.0,\"percentile_2\":0.0,\"percentile_98\":255.0}}"},
  {"name": "uint8 categorical, every value", "dtype": "uint8", "width": 5, "height": 4, "data": [3, 7, 7, 1, 0, 255, 7, 3, 3, 9, 12, 12, 1, 7, 200, 3, 0, 1, 4, 7], "query": {"categorical": "true"}, "expected": "{\"b1\":{\"min\":0.0,\"max\":255.0,\"mean\":27.1,\"count\":20.0,\"sum\":542.0,\"std\":67.4558374049274,\"median\":4.0,\"majority\":7.0,\"minority\":4.0,\"unique\":9.0,\"histogram\":[[2,3,4,1,5,1,2,1,1],[0,1,3,4,7,9,12,200,255]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":20.0,\"percentile_2\":0.0,\"percentile_98\":255.0}}"},
  {"name": "uint8 categorical with c (absent, fractional, out-of-range categories cast to uint8)", "dtype": "uint8", "width": 5, "height": 4, "data": [3, 7, 7, 1, 0, 255, 7, 3, 3, 9, 12, 12, 1, 7, 200, 3, 0, 1, 4, 44], "query": {"categorical": "true", "c": ["3", "5", "2.7", "-1", "300", "7"]}, "expected": "{\"b1\":{\"min\":0.0,\"max\":255.0,\"mean\":28.95,\"count\":20.0,\"sum\":579.0,\"std\":67.38655281285726,\"median\":4.0,\"majority\":3.0,\"minority\":4.0,\"unique\":10.0,\"histogram\":[[4,0,0,1,1,4],[3,5,2,255,44,7]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":20.0,\"percentile_2\":0.0,\"percentile_98\":255.0}}"},
  {"name": "uint16 with a nodata mask", "dtype": "uint16", "width": 6, "height": 5, "data": [0, 0, 1200, 1300, 65535, 0, 1200, 999, 1000, 1001, 0, 0, 4000, 4000, 4000, 12, 13, 0, 0, 0, 0, 0, 0, 0, 500, 501, 502, 503, 504, 0], "masked": [1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1], "expected": "{\"b1\":{\"min\":12.0,\"max\":65535.0,\"mean\":5104.117647058823,\"count\":17.0,\"sum\":86770.0,\"std\":15163.389117066505,\"median\":1000.0,\"majority\":4000.0,\"minority\":12.0,\"unique\":14.0,\"histogram\":[[16,0,0,0,0,0,0,0,0,1],[12.0,6564.3,13116.6,19668.9,26221.2,32773.5,39325.8,45878.1,52430.4,58982.700000000004,65535.0]],\"valid_percent\":56.67,\"masked_pixels\":13.0,\"valid_pixels\":17.0,\"percentile_2\":12.0,\"percentile_98\":65535.0}}"},
  {"name": "int16 negative values, many percentiles, 4 bins", "dtype": "int16", "width": 4, "height": 4, "data": [-32768, -100, -100, -7, 0, 5, 5, 5, 32767, -1, 2, 3, -2, -3, 100, 1000], "query": {"p": ["0", "1", "25", "50", "75", "99", "100"], "histogram_bins": "4"}, "expected": "{\"b1\":{\"min\":-32768.0,\"max\":32767.0,\"mean\":56.625,\"count\":16.0,\"sum\":906.0,\"std\":11587.700812040972,\"median\":0.0,\"majority\":5.0,\"minority\":-32768.0,\"unique\":13.0,\"histogram\":[[1,6,8,1],[-32768.0,-16384.25,-0.5,16383.25,32767.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":16.0,\"percentile_0\":-32768.0,\"percentile_1\":-32768.0,\"percentile_25\":-7.0,\"percentile_50\":0.0,\"percentile_75\":5.0,\"percentile_99\":32767.0,\"percentile_100\":32767.0}}"},
  {"name": "float32 with NaN, Inf and masked pixels", "dtype": "float32", "width": 4, "height": 3, "data": [0.1, NaN, 2.5, -Infinity, 0.001, 3.3, 2.5, Infinity, -7.25, 1000000.0, 0.30000001192092896, 2.5], "masked": [0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0], "expected": "{\"b1\":{\"min\":-7.25,\"max\":2.5,\"mean\":0.09300000192264893,\"count\":7.0,\"sum\":0.6510000134585425,\"std\":3.192669237150887,\"median\":0.30000001192092896,\"majority\":2.5,\"minority\":-7.25,\"unique\":5.0,\"histogram\":[[1,0,0,0,0,0,0,3,0,3],[-7.25,-6.275000095367432,-5.300000190734863,-4.324999809265137,-3.3499999046325684,-2.375,-1.3999996185302734,-0.4249997138977051,0.5500001907348633,1.5250005722045898,2.5]],\"valid_percent\":58.33,\"masked_pixels\":5.0,\"valid_pixels\":7.0,\"percentile_2\":-7.25,\"percentile_98\":2.5}}"},
  {"name": "float32 categorical with c", "dtype": "float32", "width": 4, "height": 3, "data": [0.1, NaN, 2.5, -Infinity, 0.001, 3.3, 2.5, Infinity, -7.25, 1000000.0, 0.1, 2.5], "query": {"categorical": "yes", "c": ["0.1", "2.5", "7", "nan"]}, "expected": "{\"b1\":{\"min\":-7.25,\"max\":1000000.0,\"mean\":111111.52788888392,\"count\":9.0,\"sum\":1000003.7509999553,\"std\":314269.53318838385,\"median\":2.5,\"majority\":2.5,\"minority\":-7.25,\"unique\":6.0,\"histogram\":[[2,3,0,0],[0.10000000149011612,2.5,7.0,null]],\"valid_percent\":75.0,\"masked_pixels\":3.0,\"valid_pixels\":9.0,\"percentile_2\":-7.25,\"percentile_98\":1000000.0}}"},
  {"name": "float32 categorical, every value", "dtype": "float32", "width": 4, "height": 3, "data": [0.1, NaN, 2.5, -Infinity, 0.001, 3.3, 2.5, Infinity, -7.25, 1000000.0, 0.1, 2.5], "query": {"categorical": "true"}, "expected": "{\"b1\":{\"min\":-7.25,\"max\":1000000.0,\"mean\":111111.52788888392,\"count\":9.0,\"sum\":1000003.7509999553,\"std\":314269.53318838385,\"median\":2.5,\"majority\":2.5,\"minority\":-7.25,\"unique\":6.0,\"histogram\":[[1,1,2,3,1,1],[-7.25,0.0010000000474974513,0.10000000149011612,2.5,3.299999952316284,1000000.0]],\"valid_percent\":75.0,\"masked_pixels\":3.0,\"valid_pixels\":9.0,\"percentile_2\":-7.25,\"percentile_98\":1000000.0}}"},
  {"name": "float64 with explicit bin edges (infinite last edge)", "dtype": "float64", "width": 4, "height": 3, "data": [-20.5, -10, -3.25, 0, 0, 0.25, 0.5, 0.75, 9.999, 10, 1e+300, 5], "query": {"histogram_bins": "-10,0,0.5,10,inf"}, "expected": "{\"b1\":{\"min\":-20.5,\"max\":1e+300,\"mean\":8.333333333333334e+298,\"count\":12.0,\"sum\":1e+300,\"std\":null,\"median\":0.25,\"majority\":0.0,\"minority\":-20.5,\"unique\":11.0,\"histogram\":[[2,3,4,2],[-10.0,0.0,0.5,10.0,null]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":12.0,\"percentile_2\":-20.5,\"percentile_98\":1e+300}}"},
  {"name": "uint8 explicit edges with a repeated edge (range ignored)", "dtype": "uint8", "width": 5, "height": 1, "data": [0, 5, 10, 200, 255], "query": {"histogram_bins": "0,10,10,250", "histogram_range": "10,0"}, "expected": "{\"b1\":{\"min\":0.0,\"max\":255.0,\"mean\":94.0,\"count\":5.0,\"sum\":470.0,\"std\":110.42644610780518,\"median\":10.0,\"majority\":0.0,\"minority\":0.0,\"unique\":5.0,\"histogram\":[[2,0,2],[0.0,10.0,10.0,250.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":5.0,\"percentile_2\":0.0,\"percentile_98\":255.0}}"},
  {"name": "all-masked uint8", "dtype": "uint8", "width": 3, "height": 2, "data": [1, 2, 3, 4, 5, 6], "masked": [1, 1, 1, 1, 1, 1], "expected": "{\"b1\":{\"min\":null,\"max\":null,\"mean\":null,\"count\":null,\"sum\":null,\"std\":null,\"median\":null,\"majority\":null,\"minority\":null,\"unique\":0.0,\"histogram\":[[0,0,0,0,0,0,0,0,0,0],[0.0,0.1,0.2,0.30000000000000004,0.4,0.5,0.6000000000000001,0.7000000000000001,0.8,0.9,1.0]],\"valid_percent\":0.0,\"masked_pixels\":6.0,\"valid_pixels\":0.0,\"percentile_2\":null,\"percentile_98\":null}}"},
  {"name": "all-masked float32 (NaN), categorical with c", "dtype": "float32", "width": 3, "height": 1, "data": [NaN, NaN, 1], "masked": [0, 0, 1], "query": {"categorical": "true", "c": ["1", "2"]}, "expected": "{\"b1\":{\"min\":null,\"max\":null,\"mean\":null,\"count\":null,\"sum\":null,\"std\":null,\"median\":null,\"majority\":null,\"minority\":null,\"unique\":0.0,\"histogram\":[[0,0],[1.0,2.0]],\"valid_percent\":0.0,\"masked_pixels\":3.0,\"valid_pixels\":0.0,\"percentile_2\":null,\"percentile_98\":null}}"},
  {"name": "all-masked float32, numeric histogram", "dtype": "float32", "width": 2, "height": 1, "data": [NaN, Infinity], "expected": "{\"b1\":{\"min\":null,\"max\":null,\"mean\":null,\"count\":null,\"sum\":null,\"std\":null,\"median\":null,\"majority\":null,\"minority\":null,\"unique\":0.0,\"histogram\":[[0,0,0,0,0,0,0,0,0,0],[0.0,0.10000000149011612,0.20000000298023224,0.30000001192092896,0.4000000059604645,0.5,0.6000000238418579,0.699999988079071,0.800000011920929,0.8999999761581421,1.0]],\"valid_percent\":0.0,\"masked_pixels\":2.0,\"valid_pixels\":0.0,\"percentile_2\":null,\"percentile_98\":null}}"},
  {"name": "single valid pixel", "dtype": "float32", "width": 3, "height": 3, "data": [1, 2, 3, 4, 42.5, 6, 7, 8, 9], "masked": [1, 1, 1, 1, 0, 1, 1, 1, 1], "expected": "{\"b1\":{\"min\":42.5,\"max\":42.5,\"mean\":42.5,\"count\":1.0,\"sum\":42.5,\"std\":0.0,\"median\":42.5,\"majority\":42.5,\"minority\":42.5,\"unique\":1.0,\"histogram\":[[0,0,0,0,0,1,0,0,0,0],[42.0,42.099998474121094,42.20000076293945,42.29999923706055,42.400001525878906,42.5,42.599998474121094,42.70000076293945,42.79999923706055,42.900001525878906,43.0]],\"valid_percent\":11.11,\"masked_pixels\":8.0,\"valid_pixels\":1.0,\"percentile_2\":42.5,\"percentile_98\":42.5}}"},
  {"name": "constant uint8 band", "dtype": "uint8", "width": 4, "height": 2, "data": [7, 7, 7, 7, 7, 7, 7, 7], "expected": "{\"b1\":{\"min\":7.0,\"max\":7.0,\"mean\":7.0,\"count\":8.0,\"sum\":56.0,\"std\":0.0,\"median\":7.0,\"majority\":7.0,\"minority\":7.0,\"unique\":1.0,\"histogram\":[[0,0,0,0,0,8,0,0,0,0],[6.5,6.6,6.7,6.8,6.9,7.0,7.1,7.2,7.3,7.4,7.5]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":8.0,\"percentile_2\":7.0,\"percentile_98\":7.0}}"},
  {"name": "constant float32 band (float32 edges ±0.5)", "dtype": "float32", "width": 4, "height": 2, "data": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], "expected": "{\"b1\":{\"min\":0.10000000149011612,\"max\":0.10000000149011612,\"mean\":0.10000000149011612,\"count\":8.0,\"sum\":0.800000011920929,\"std\":0.0,\"median\":0.10000000149011612,\"majority\":0.10000000149011612,\"minority\":0.10000000149011612,\"unique\":1.0,\"histogram\":[[0,0,0,0,0,8,0,0,0,0],[-0.4000000059604645,-0.30000001192092896,-0.20000000298023224,-0.09999999403953552,0.0,0.09999999403953552,0.20000001788139343,0.29999998211860657,0.4000000059604645,0.5,0.6000000238418579]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":8.0,\"percentile_2\":0.10000000149011612,\"percentile_98\":0.10000000149011612}}"},
  {"name": "uint8 with histogram_range and 4 bins", "dtype": "uint8", "width": 5, "height": 1, "data": [0, 5, 10, 200, 255], "query": {"histogram_bins": "4", "histogram_range": "5.5,200"}, "expected": "{\"b1\":{\"min\":0.0,\"max\":255.0,\"mean\":94.0,\"count\":5.0,\"sum\":470.0,\"std\":110.42644610780518,\"median\":10.0,\"majority\":0.0,\"minority\":0.0,\"unique\":5.0,\"histogram\":[[1,0,0,1],[5.5,54.125,102.75,151.375,200.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":5.0,\"percentile_2\":0.0,\"percentile_98\":255.0}}"},
  {"name": "float32 with histogram_range (float32 edges from a float64 range)", "dtype": "float32", "width": 4, "height": 1, "data": [0.1, 0.3, 0.7, 0.2], "query": {"histogram_bins": "2", "histogram_range": " 0.1 , 0.3 "}, "expected": "{\"b1\":{\"min\":0.10000000149011612,\"max\":0.699999988079071,\"mean\":0.3250000011175871,\"count\":4.0,\"sum\":1.3000000044703484,\"std\":0.22776083346772266,\"median\":0.20000000298023224,\"majority\":0.10000000149011612,\"minority\":0.10000000149011612,\"unique\":4.0,\"histogram\":[[1,2],[0.10000000149011612,0.20000000298023224,0.30000001192092896]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":4.0,\"percentile_2\":0.10000000149011612,\"percentile_98\":0.699999988079071}}"},
  {"name": "int32, uint32 and int8 dtypes: int32", "dtype": "int32", "width": 3, "height": 2, "data": [-2147483648, 2147483647, 0, 0, 5, -5], "expected": "{\"b1\":{\"min\":-2147483648.0,\"max\":2147483647.0,\"mean\":-0.16666666666666666,\"count\":6.0,\"sum\":-1.0,\"std\":1239850261.9644444,\"median\":0.0,\"majority\":0.0,\"minority\":-2147483648.0,\"unique\":5.0,\"histogram\":[[1,0,0,0,1,3,0,0,0,1],[-2147483648.0,-1717986918.5,-1288490189.0,-858993459.5,-429496730.0,-0.5,429496729.0,858993458.5,1288490188.0,1717986917.5,2147483647.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":6.0,\"percentile_2\":-2147483648.0,\"percentile_98\":2147483647.0}}"},
  {"name": "uint32", "dtype": "uint32", "width": 3, "height": 2, "data": [4294967295, 0, 1, 1, 3000000000, 7], "query": {"categorical": "true"}, "expected": "{\"b1\":{\"min\":0.0,\"max\":4294967295.0,\"mean\":1215827884.0,\"count\":6.0,\"sum\":7294967304.0,\"std\":1759607882.6473486,\"median\":1.0,\"majority\":1.0,\"minority\":0.0,\"unique\":5.0,\"histogram\":[[1,2,1,1,1],[0,1,7,3000000000,4294967295]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":6.0,\"percentile_2\":0.0,\"percentile_98\":4294967295.0}}"},
  {"name": "int8", "dtype": "int8", "width": 3, "height": 2, "data": [-128, 127, -1, -1, 0, 3], "query": {"histogram_bins": "3"}, "expected": "{\"b1\":{\"min\":-128.0,\"max\":127.0,\"mean\":0.0,\"count\":6.0,\"sum\":0.0,\"std\":73.62517685321147,\"median\":-1.0,\"majority\":-1.0,\"minority\":-128.0,\"unique\":5.0,\"histogram\":[[1,4,1],[-128.0,-43.0,42.0,127.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":6.0,\"percentile_2\":-128.0,\"percentile_98\":127.0}}"},
  {"name": "valid_percent rounds half to even (97/800 → 12.12)", "dtype": "uint8", "width": 40, "height": 20, "data": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46], "masked": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "expected": "{\"b1\":{\"min\":0.0,\"max\":96.0,\"mean\":48.0,\"count\":97.0,\"sum\":4656.0,\"std\":28.0,\"median\":48.0,\"majority\":0.0,\"minority\":0.0,\"unique\":97.0,\"histogram\":[[10,10,9,10,9,10,10,9,10,10],[0.0,9.6,19.2,28.799999999999997,38.4,48.0,57.599999999999994,67.2,76.8,86.39999999999999,96.0]],\"valid_percent\":12.12,\"masked_pixels\":703.0,\"valid_pixels\":97.0,\"percentile_2\":1.0,\"percentile_98\":95.0}}"},
  {"name": "repeated percentile and underscore bins", "dtype": "uint16", "width": 4, "height": 2, "data": [10, 20, 30, 40, 50, 60, 70, 80], "query": {"p": ["50", "2", "50", "33"], "histogram_bins": "1_0"}, "expected": "{\"b1\":{\"min\":10.0,\"max\":80.0,\"mean\":45.0,\"count\":8.0,\"sum\":360.0,\"std\":22.9128784747792,\"median\":40.0,\"majority\":10.0,\"minority\":10.0,\"unique\":8.0,\"histogram\":[[1,1,1,0,1,1,0,1,1,1],[10.0,17.0,24.0,31.0,38.0,45.0,52.0,59.0,66.0,73.0,80.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":8.0,\"percentile_50\":40.0,\"percentile_2\":10.0,\"percentile_33\":30.0}}"},
  {"name": "coverage weights (rio-tiler docs example)", "dtype": "int32", "width": 2, "height": 2, "data": [1, 2, 3, 4], "coverage": [0.5, 0, 1, 0.25], "expected": "{\"b1\":{\"min\":1.0,\"max\":4.0,\"mean\":2.5714285714285716,\"count\":1.75,\"sum\":4.5,\"std\":1.049781318335648,\"median\":3.0,\"majority\":1.0,\"minority\":1.0,\"unique\":4.0,\"histogram\":[[1,0,0,1,0,0,1,0,0,1],[1.0,1.3,1.6,1.9,2.2,2.5,2.8,3.1,3.4,3.6999999999999997,4.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":4.0,\"percentile_2\":1.0,\"percentile_98\":4.0}}"},
  {"name": "float32 1024x1024 noisy, defaults", "dtype": "float32", "width": 1024, "height": 1024, "data": {"gen": "float32-noisy", "seed": 42}, "expected": "{\"b1\":{\"min\":-499.9990234375,\"max\":1499.999267578125,\"mean\":499.9774209431917,\"count\":981236.0,\"sum\":490595844.6166136,\"std\":577.5866710610858,\"median\":500.27899169921875,\"majority\":1257.0582275390625,\"minority\":-499.9990234375,\"unique\":967902.0,\"histogram\":[[98710,97627,98130,98107,97915,98034,98481,97574,98782,97876],[-499.9990234375,-299.99920654296875,-99.99935913085938,100.00048828125,300.00030517578125,500.0001220703125,700.0,899.999755859375,1099.9996337890625,1299.99951171875,1499.999267578125]],\"valid_percent\":93.58,\"masked_pixels\":67340.0,\"valid_pixels\":981236.0,\"percentile_2\":-459.747314453125,\"percentile_98\":1460.2786865234375}}"},
  {"name": "uint16 1024x1024 with nodata, percentiles", "dtype": "uint16", "width": 1024, "height": 1024, "data": {"gen": "uint16-nodata", "seed": 7}, "query": {"p": ["1", "5", "50", "95", "99"], "histogram_bins": "16"}, "expected": "{\"b1\":{\"min\":16.0,\"max\":4095.0,\"mean\":2057.1127952301663,\"count\":1044397.0,\"sum\":2148442432.0,\"std\":1178.5187366469574,\"median\":2059.0,\"majority\":3840.0,\"minority\":3460.0,\"unique\":4080.0,\"histogram\":[[65549,65473,64884,64897,65090,65078,65245,64952,65415,65291,65314,65570,65579,64902,65498,65660],[16.0,270.9375,525.875,780.8125,1035.75,1290.6875,1545.625,1800.5625,2055.5,2310.4375,2565.375,2820.3125,3075.25,3330.1875,3585.125,3840.0625,4095.0]],\"valid_percent\":99.6,\"masked_pixels\":4179.0,\"valid_pixels\":1044397.0,\"percentile_1\":56.0,\"percentile_5\":219.0,\"percentile_50\":2059.0,\"percentile_95\":3892.0,\"percentile_99\":4055.0}}"},
  {"name": "float32 1024x1024 around 1e6 (summation order)", "dtype": "float32", "width": 1024, "height": 1024, "data": {"gen": "float32-offset", "seed": 3}, "expected": "{\"b1\":{\"min\":1000000.0,\"max\":1001000.0,\"mean\":1000500.0762599111,\"count\":1048576.0,\"sum\":1049100367964.3125,\"std\":288.73144553288836,\"median\":1000499.9375,\"majority\":1000464.6875,\"minority\":1000000.0,\"unique\":16001.0,\"histogram\":[[104597,105255,104756,104613,105110,105130,104220,104955,104837,105103],[1000000.0,1000100.0,1000200.0,1000300.0,1000400.0,1000500.0,1000600.0,1000700.0,1000800.0,1000900.0,1001000.0]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":1048576.0,\"percentile_2\":1000019.9375,\"percentile_98\":1000980.1875}}"},
  {"name": "uint8 512x512 categorical", "dtype": "uint8", "width": 512, "height": 512, "data": {"gen": "uint8-classes", "seed": 11}, "query": {"categorical": "true"}, "expected": "{\"b1\":{\"min\":0.0,\"max\":11.0,\"mean\":3.555857518153515,\"count\":209739.0,\"sum\":745802.0,\"std\":3.518320188893201,\"median\":2.0,\"majority\":0.0,\"minority\":11.0,\"unique\":12.0,\"histogram\":[[60833,24781,19311,16252,14276,12766,11879,11059,10430,9910,9270,8972],[0,1,2,3,4,5,6,7,8,9,10,11]],\"valid_percent\":80.01,\"masked_pixels\":52405.0,\"valid_pixels\":209739.0,\"percentile_2\":0.0,\"percentile_98\":11.0}}"},
  {"name": "float64 300x200 tiny values, range", "dtype": "float64", "width": 300, "height": 200, "data": {"gen": "float64-normalish", "seed": 5}, "query": {"histogram_range": "-0.001,0.001", "histogram_bins": "7"}, "expected": "{\"b1\":{\"min\":-0.0014875187776051462,\"max\":0.0014678350912872703,\"mean\":-3.987377716422394e-07,\"count\":60000.0,\"sum\":-0.023924266298534363,\"std\":0.0005004156081779425,\"median\":1.749016810208559e-07,\"majority\":-0.0014875187776051462,\"minority\":-0.0014875187776051462,\"unique\":60000.0,\"histogram\":[[3652,7491,11222,12703,11463,7393,3598],[-0.001,-0.0007142857142857143,-0.00042857142857142855,-0.00014285714285714281,0.00014285714285714292,0.00042857142857142877,0.0007142857142857144,0.001]],\"valid_percent\":100.0,\"masked_pixels\":0.0,\"valid_pixels\":60000.0,\"percentile_2\":-0.001005397869972512,\"percentile_98\":0.0010040463518816978}}"},
  {"name": "float32 64x64 noisy with coverage fractions", "dtype": "float32", "width": 64, "height": 64, "data": {"gen": "float32-noisy", "seed": 9}, "coverage": {"gen": "coverage", "seed": 10}, "query": {"p": ["10", "50", "90"]}, "expected": "{\"b1\":{\"min\":-496.80706787109375,\"max\":1499.7291259765625,\"mean\":504.6649670168074,\"count\":1915.88,\"sum\":966877.517008161,\"std\":572.057302282974,\"median\":516.9402465820312,\"majority\":-496.80706787109375,\"minority\":-496.80706787109375,\"unique\":3828.0,\"histogram\":[[391,361,368,360,402,417,403,359,382,385],[-496.80706787109375,-297.1534423828125,-97.49984741210938,102.15374755859375,301.807373046875,501.46099853515625,701.1145629882812,900.7682495117188,1100.421875,1300.075439453125,1499.7291259765625]],\"valid_percent\":93.46,\"masked_pixels\":268.0,\"valid_pixels\":3828.0,\"percentile_10\":-304.0484619140625,\"percentile_50\":516.9402465820312,\"percentile_90\":1287.945068359375}}"},
];

/** mulberry32, bit for bit as the Python generator that produced the expected values. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generators of the Python oracle: three draws per pixel, values and masked flags. */
function generate(spec: Generated, n: number): { values: number[]; masked: boolean[] } {
  const next = mulberry32(spec.seed);
  const values = new Array<number>(n);
  const masked = new Array<boolean>(n);
  for (let i = 0; i < n; i++) {
    const u1 = next();
    const u2 = next();
    const u3 = next();
    switch (spec.gen) {
      case 'float32-noisy': {
        let v = Math.fround(u1 * 2000 - 500);
        if (u2 < 0.01) v = NaN;
        if (u2 > 0.995) v = Infinity;
        values[i] = v;
        masked[i] = u3 < 0.05;
        break;
      }
      case 'uint16-nodata':
        values[i] = Math.floor(u1 * 4096);
        masked[i] = values[i]! < 16;
        break;
      case 'float32-offset':
        values[i] = Math.fround(1e6 + u1 * 1000);
        masked[i] = false;
        break;
      case 'uint8-classes':
        values[i] = Math.floor(u1 * u1 * 12);
        masked[i] = u3 < 0.2;
        break;
      case 'float64-normalish':
        values[i] = (u1 + u2 + u3 - 1.5) * 1e-3;
        masked[i] = false;
        break;
      case 'coverage':
        values[i] = Math.floor(u1 * 101) / 100;
        masked[i] = false;
        break;
      default:
        throw new Error(`unknown generator ${spec.gen}`);
    }
  }
  return { values, masked };
}

interface Inputs {
  band: ReturnType<typeof ARRAY_OF.uint8.prototype.slice>;
  mask: Uint8Array;
  coverage: Float64Array | undefined;
}

function inputsOf(c: StatisticsCase): Inputs {
  const n = c.width * c.height;
  const generated = Array.isArray(c.data) ? undefined : generate(c.data, n);
  const values = generated ? generated.values : (c.data as number[]);
  const band = new ARRAY_OF[c.dtype](n);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    band[i] = values[i]!;
    const masked = generated ? generated.masked[i]! : c.masked?.[i] === 1;
    mask[i] = masked ? 0 : 255;
  }
  let coverage: Float64Array | undefined;
  if (c.coverage) coverage = Float64Array.from(Array.isArray(c.coverage) ? c.coverage : generate(c.coverage, n).values);
  return { band, mask, coverage };
}

function statisticsText(c: StatisticsCase, inputs: Inputs = inputsOf(c), opts: StatisticsOptions = parseStatisticsOptions(c.query ?? {})): string {
  const stats = bandStatistics(inputs.band, inputs.mask, opts, inputs.coverage, c.dtype);
  return pyDumps({ b1: statisticsToJson(stats) });
}

/** Strings kept, every number replaced by I (Python int) or F (Python float): keys, order, nulls and number kinds. */
function shape(json: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    token.startsWith('"') ? token : /[.eE]/.test(token) ? 'F' : 'I',
  );
}

/** Same structure, numbers within 1e-9 relative (absolute near zero), nulls where nulls are. */
function assertClose(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', `${path}: expected a number, got ${JSON.stringify(actual)}`);
    const a = actual as number;
    const tolerance = 1e-9 * Math.max(Math.abs(expected), 1e-300);
    assert.ok(Math.abs(a - expected) <= tolerance, `${path}: ${a} differs from ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array`);
    assert.equal((actual as unknown[]).length, expected.length, `${path}: length`);
    expected.forEach((e, i) => assertClose((actual as unknown[])[i], e, `${path}[${i}]`));
  } else if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object`);
    assert.deepEqual(Object.keys(actual as object), Object.keys(expected), `${path}: keys`);
    for (const [k, e] of Object.entries(expected)) assertClose((actual as Record<string, unknown>)[k], e, `${path}.${k}`);
  } else {
    assert.equal(actual, expected, path);
  }
}

describe('bandStatistics against rio-tiler 6.8 / TiTiler 0.18.10', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const text = statisticsText(c);
      assert.equal(shape(text), shape(c.expected), 'keys, order, nulls and int/float kinds');
      assertClose(JSON.parse(text), JSON.parse(c.expected), 'stats');
      // numpy's summation order is reproduced, so the text is byte-identical, not merely close.
      assert.equal(text, c.expected);
    });
  }

  it('reads each band through its own typed array, leaving the input untouched', () => {
    const c = CASES.find((x) => x.name === 'float32 with NaN, Inf and masked pixels')!;
    const inputs = inputsOf(c);
    const before = Array.from(inputs.band);
    const maskBefore = Array.from(inputs.mask);
    statisticsText(c, inputs);
    assert.deepEqual(Array.from(inputs.band), before);
    assert.deepEqual(Array.from(inputs.mask), maskBefore);
  });

  it('refuses more bins than float32 can separate (numpy: "Too many bins for data range")', () => {
    const band = Float32Array.from([1, 1.0000001]);
    const opts = parseStatisticsOptions({ histogram_bins: '100' });
    assert.throws(() => bandStatistics(band, new Uint8Array([255, 255]), opts), (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest' && /Too many bins/.test(e.message));
  });

  it('computes a 1024×1024 float32 band with default options quickly', (t) => {
    const c = CASES.find((x) => x.name === 'float32 1024x1024 noisy, defaults')!;
    const inputs = inputsOf(c);
    const opts = parseStatisticsOptions({});
    bandStatistics(inputs.band, inputs.mask, opts); // warm-up
    const runs = 5;
    const start = performance.now();
    for (let i = 0; i < runs; i++) bandStatistics(inputs.band, inputs.mask, opts);
    const ms = (performance.now() - start) / runs;
    t.diagnostic(`1024×1024 float32, default options: ${ms.toFixed(1)} ms per band`);
    assert.ok(ms < 2000, `${ms} ms`);
  });
});

describe('imageStatistics', () => {
  it('keys the bands by name in band order, each with its own mask', () => {
    const img: ImageData = {
      width: 2, height: 2, dtype: 'int16', bounds: [0, 0, 1, 1], crs: 'EPSG:4326',
      bands: [Int16Array.from([1, 2, 3, 4]), Int16Array.from([-5, 5, 5, 9])],
      masks: [Uint8Array.from([255, 255, 255, 0]), Uint8Array.from([255, 255, 255, 255])],
      bandNames: ['B09_b1', 'B01_b1'],
    };
    const stats = imageStatistics(img, parseStatisticsOptions({}));
    assert.deepEqual([...stats.keys()], ['B09_b1', 'B01_b1']);
    const json = statisticsMapToJson(stats) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(json), ['B09_b1', 'B01_b1']);
    // hand-derived: band 1 valid = 1, 2, 3; band 2 = -5, 5, 5, 9
    assert.equal(stats.get('B09_b1')!.sum, 6);
    assert.equal(stats.get('B09_b1')!.maskedPixels, 1);
    assert.equal(stats.get('B01_b1')!.majority, 5);
    assert.equal(stats.get('B01_b1')!.median, 5);
    assert.equal(pyDumps(json['B01_b1']!['count']), '4.0');
  });
});

describe('sortValues (radix and counting sorts by dtype)', () => {
  const random = mulberry32(2024);
  const draws: Record<string, () => number> = {
    uint8: () => Math.floor(random() * 256),
    int8: () => Math.floor(random() * 256) - 128,
    uint16: () => Math.floor(random() * 65536),
    int16: () => Math.floor(random() * 65536) - 32768,
    uint32: () => Math.floor(random() * 2 ** 32),
    int32: () => Math.floor(random() * 2 ** 32) - 2 ** 31,
    float32: () => Math.fround((random() - 0.5) * 10 ** (random() * 60 - 30)),
    float64: () => (random() - 0.5) * 10 ** (random() * 600 - 300),
    int64: () => Math.floor((random() - 0.5) * 2 ** 53),
  };
  for (const [dtype, draw] of Object.entries(draws)) {
    it(`orders ${dtype} values as the built-in numeric sort does`, () => {
      const values = new Float64Array(5000).map(draw);
      if (dtype.startsWith('float')) values.set([-0, 0, -0, Infinity, -Infinity, dtype === 'float32' ? 3.4028234663852886e38 : Number.MAX_VALUE, dtype === 'float32' ? Math.fround(1e-45) : 5e-324], 10);
      else values.set([0, 0], 10);
      const expected = Float64Array.from(values).sort();
      sortValues(values, dtype as DType);
      assert.equal(values.length, expected.length);
      for (let i = 0; i < values.length; i++) assert.ok(Object.is(values[i], expected[i]), `${dtype}[${i}]: ${values[i]} vs ${expected[i]}`);
    });
  }
});

describe('pairwise summation', () => {
  // numpy float64 sums (repr) of (u - 0.3) * 1e6 for the first n draws of mulberry32(123).
  const expected: Array<[number, string]> = [
    [0, '0.0'], [5, '568264.2676401883'], [8, '2294392.289966345'], [9, '2778684.577392414'], [127, '22203631.343180314'],
    [128, '22233723.228471354'], [129, '22718796.07667215'], [1000, '201256376.40524656'], [100003, '20107364032.049805'],
  ];
  for (const [n, text] of expected) {
    it(`matches numpy bit for bit over ${n} values`, () => {
      const next = mulberry32(123);
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) values[i] = (next() - 0.3) * 1e6;
      assert.equal(sumOf(values), Number(text));
    });
  }
});

describe('numpy casts and Python rounding', () => {
  it('casts categories to the band dtype as numpy astype does (values observed with numpy 2.4.6 on x86-64)', () => {
    const cases: Array<[number, DType, number]> = [
      [-1, 'uint8', 255], [300, 'uint8', 44], [2.7, 'uint8', 2], [70000, 'int16', 4464], [-2.7, 'int16', -2], [1e20, 'int16', 0],
      [3e9, 'int16', 0], [5e9, 'int32', -2147483648], [-1, 'uint32', 4294967295], [-3e9, 'uint32', 1294967296],
      [3e9, 'int64', 3000000000], [0.1, 'float32', 0.10000000149011612], [0.1, 'float64', 0.1],
    ];
    for (const [x, dtype, want] of cases) assert.equal(castToDtype(x, dtype), want, `${x} as ${dtype}`);
  });

  it('rounds valid_percent like Python round(x, 2) (exact halves to even)', () => {
    const cases: Array<[number, number]> = [
      [12.125, 12.12], [0.375, 0.38], [0.125, 0.12], [56.666666666666664, 56.67], [93.58, 93.58], [99.995, 100], [100, 100],
      [87.5, 87.5], [0.625, 0.62], [33.33333333333333, 33.33], [1.005, 1],
    ];
    for (const [x, want] of cases) assert.equal(roundHalfEven2(x), want, String(x));
  });
});

describe('parseStatisticsOptions (TiTiler StatisticsParams + HistogramParams)', () => {
  const bad = (query: Record<string, unknown>, pattern: RegExp): void => {
    assert.throws(() => parseStatisticsOptions(query), (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest' && pattern.test(e.message), JSON.stringify(query));
  };

  it('defaults: numeric, p=[2, 98], 10 bins, no range, no categories', () => {
    assert.deepEqual(parseStatisticsOptions({}), { categorical: false, percentiles: [2, 98], histogramBins: 10 });
  });

  it('reads categorical spellings, categories and percentiles', () => {
    const o = parseStatisticsOptions({ categorical: 'yes', c: ['1', '2.5', 'nan', '1e3', ' -4 '], p: ['50', '2', 50, '2.0'] });
    assert.equal(o.categorical, true);
    assert.deepEqual(o.categories, [1, 2.5, NaN, 1000, -4]);
    assert.deepEqual(o.percentiles, [50, 2, 50, 2]);
    assert.equal(parseStatisticsOptions({ categorical: true }).categorical, true);
    assert.equal(parseStatisticsOptions({ categorical: 'off' }).categorical, false);
    assert.deepEqual(parseStatisticsOptions({ c: 7, p: '5' }).categories, [7]);
    assert.deepEqual(parseStatisticsOptions({ p: [] }).percentiles, [2, 98]);
  });

  it('reads histogram_bins as Python int() or a list of float()', () => {
    const bins = (text: string): number | number[] => parseStatisticsOptions({ histogram_bins: text }).histogramBins;
    assert.equal(bins(''), 10);
    assert.equal(bins(' 5 '), 5);
    assert.equal(bins('+5'), 5);
    assert.equal(bins('1_0'), 10);
    assert.deepEqual(bins('1,2, 3'), [1, 2, 3]);
    assert.deepEqual(bins('1e2,1_000.5,inf'), [100, 1000.5, Infinity]);
    assert.deepEqual(bins('0,10,10'), [0, 10, 10]);
    assert.deepEqual(bins('-inf,0'), [-Infinity, 0]);
  });

  it('reads histogram_range as min,max', () => {
    assert.deepEqual(parseStatisticsOptions({ histogram_range: '0,1000' }).histogramRange, [0, 1000]);
    assert.deepEqual(parseStatisticsOptions({ histogram_range: ' -1.5 , 2e3 ' }).histogramRange, [-1.5, 2000]);
    assert.equal(parseStatisticsOptions({ histogram_range: '' }).histogramRange, undefined);
    // numpy ignores the range when the edges are explicit, so an inverted one is not an error there
    assert.deepEqual(parseStatisticsOptions({ histogram_bins: '0,10', histogram_range: '10,0' }).histogramRange, [10, 0]);
  });

  it('refuses bad text with a 400 and a clear message', () => {
    bad({ p: '2.5' }, /Invalid percentile '2\.5': expected an integer/);
    bad({ p: 'abc' }, /Invalid percentile 'abc'/);
    bad({ p: ['2', '101'] }, /percentiles must be in the range \[0, 100\]/);
    bad({ p: '-1' }, /percentiles must be in the range \[0, 100\]/);
    bad({ c: ['1', 'abc'] }, /Invalid category 'abc': expected a number/);
    bad({ categorical: 'maybe' }, /Invalid categorical 'maybe'/);
    bad({ histogram_bins: '5.0' }, /Invalid histogram_bins '5\.0': expected a whole number of bins or comma-separated bin edges/);
    bad({ histogram_bins: 'ten' }, /Invalid histogram_bins 'ten'/);
    bad({ histogram_bins: '1,,2' }, /Invalid histogram_bins '1,,2': '' is not a number/);
    bad({ histogram_bins: '1,' }, /Invalid histogram_bins '1,'/);
    bad({ histogram_bins: '0' }, /the number of bins must be positive/);
    bad({ histogram_bins: '-5' }, /the number of bins must be positive/);
    bad({ histogram_bins: '100001' }, /at most 100000 bins/);
    bad({ histogram_bins: '3,1' }, /bin edges must increase monotonically/);
    bad({ histogram_range: '0' }, /Invalid histogram_range values: 0, should be of form 'min,max'/);
    bad({ histogram_range: '0,1,2' }, /should be of form 'min,max'/);
    bad({ histogram_range: 'a,b' }, /should be of form 'min,max'/);
    bad({ histogram_range: '10,0' }, /max must be larger than min/);
    bad({ histogram_range: 'nan,1' }, /the range must be finite/);
    bad({ histogram_range: '0,inf' }, /the range must be finite/);
  });

  it('leaves the histogram options unchecked for categorical statistics, as TiTiler does', () => {
    const o = parseStatisticsOptions({ categorical: 'true', histogram_bins: '0', histogram_range: '10,0' });
    assert.equal(o.histogramBins, 0);
    assert.deepEqual(o.histogramRange, [10, 0]);
    assert.equal(parseStatisticsOptions({ categorical: 'true', histogram_bins: '3,1' }).categorical, true);
  });
});
