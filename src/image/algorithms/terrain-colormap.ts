/**
 * rio-tiler's `terrain` colormap (matplotlib's), as 256 RGB triplets: the palette the contours
 * algorithm paints elevations with. Its alpha is 255 throughout, so only RGB is kept. Base64 of
 * the 768 bytes of `make_lut(cmap.get("terrain"))[:, :3]` from rio-tiler 6.8.
 */
const TERRAIN_RGB_BASE64 =
  'MzOZMTWbMDieLzuhLT2jLECmK0OpKUWrKEiuJ0uxJU2zJFC2I1O5IVW7IFi+H1vBHV3DHGDGG2LJGWXLGGjOF2vRFW3TFHDWE3PZEXXbEHjeDnvhDX3jDIDmC4PpCYXrCIjuB4rxBY3zBJD2A5P5AZX7AJj+AJr6AJz0AJ7uAKDoAKLiAKTcAKbWAKjQAKrKAKzEAK6+ALC4ALKyALSsALamALigALqaALyUAL6OAMCIAMKCAMR8AMZ2AMhwAMpqAcxmBc1nCM1nDc5oEc9pFdBqGdFrHdFrIdJsJdNtKNRuLdVvMdVvNdZwOddxPdhyQdlzRdlzSNp0Tdt1Udx2Vd13Wd13Xd54Yd95ZeB6aOF6beF7ceJ8deN9eeR+feV/geV/heaAiOeBjeiCkemDlemDmeqEneuFoeyGpe2HqO2Hre6Ise+JtfCKufGLvfGLwfKMxfONyPSOzfWP0fWP1faQ2feR3fiS4fmT5fmT6PqU7fuV8fyW9f2X+f2X/f6Y/v2Y/PuX+viW+PaV9vOU9PCT8u6R8OuQ7umP7OaO6uSN6OGM5t+L5NyK4tmJ4NeI3tSH3NKG2s+F2M2D1sqC08eB0sWA0MJ/zsB+zL19yrt8yLh7xrZ6w7N5wrB4wK52vqt1vKl0uqZzuKRytqFxs59wspxvsJlurpdtrJRsqpJrqI9qpo1oo4pnoodmoIVlnoJknIBjmn1imHthlnhgk3ZfknNekHBdjm5bjGtaimlZiGZYhmRXg2FWgl9VgFxUgV1Wg2BYhWJbh2VeiGdgi2pjjW1mj29okXJrk3RulXdwl3lzmXx2m395nYF7n4R+oYaBo4mDpYuGp46JqJCLq5OOrZaRr5iTsZuWs52ZtaCbt6KeuaWhu6ejvaqmv62pwa+rw7KuxLSxx7ezyLm2y7y5zb+7z8G+0cTB08bE1MnG18vJ2c7M29DO3dPR39bU4djW49vZ5N3c5+De6OLh6+Xk7efm7+rp8e3s8+/u9PLx9/T0+ff2+/n5/fz8////';

/** `TERRAIN_RGB[3 * i + k]` is channel k (0 = red) of the colour for index i. */
export const TERRAIN_RGB: Uint8Array = new Uint8Array(Buffer.from(TERRAIN_RGB_BASE64, 'base64'));
