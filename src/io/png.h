/* 8-bit gray and RGB PNG images through libpng, and tiling of many small
 * images (samples, attention maps) into one grid picture.
 *
 * Pixels are row-major (height, width, channels) uint8, channels 1 (gray) or
 * 3 (RGB). Sizes are given width first, as PNG does. */
#ifndef LT_IO_PNG_H
#define LT_IO_PNG_H

#include <stdint.h>

#include "core/status.h"

/* Writes the image atomically (temporary file, then rename). LT_E_INPUT for
 * non-positive sizes or channels other than 1 or 3; LT_E_IO when the file
 * cannot be written or libpng refuses the image (its message is kept). */
lt_status lt_png_write(const char *path, const uint8_t *pixels /* (height, width, channels) */,
                       int width, int height, int channels);

/* Reads an 8-bit gray or RGB PNG into *pixels (lt_mem_alloc'd, release with
 * lt_mem_free). LT_E_IO if the file cannot be opened; LT_E_INPUT for a file
 * that is not a PNG, is damaged, or has another bit depth or colour type
 * (palette, alpha, 16-bit). On failure *pixels is NULL. */
lt_status lt_png_read(uint8_t **pixels /* (height, width, channels) */, int *width, int *height,
                      int *channels, const char *path);

/* Size of the grid lt_png_grid draws: min(cols, count) tiles across,
 * ceil(count / cols) down, `pad` pixels between tiles and around the edge.
 * LT_E_INPUT for count, sizes or cols below 1, a negative pad, or a grid too
 * large for int sizes. */
lt_status lt_png_grid_size(int *grid_width, int *grid_height, int count, int tile_width,
                           int tile_height, int cols, int pad);

/* Tiles `count` images into `out` (sized by lt_png_grid_size), tile i at grid
 * row i / cols, column i % cols; padding and empty cells get `background`. */
lt_status lt_png_grid(uint8_t *out /* (grid_height, grid_width, channels) */,
                      const uint8_t *tiles /* (count, tile_height, tile_width, channels) */,
                      int count, int tile_width, int tile_height, int channels, int cols, int pad,
                      uint8_t background);

/* `in` (height, width, channels) enlarged `factor` times in each direction
 * into `out` (height * factor, width * factor, channels), each pixel a
 * factor x factor block: small images (28 x 28) become readable without
 * blurring their pixels. */
void lt_png_scale(uint8_t *out, const uint8_t *in, int width, int height, int channels,
                  int factor);

#endif
