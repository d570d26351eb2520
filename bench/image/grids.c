/* The image grids: how the image program draws its samples and
 * completions, and how the report shows grids older revisions drew. */
#include "image/image.h"

#include <string.h>

#include "core/mem.h"
#include "io/png.h"

/* In a completion grid (originals above, completions below), white ticks
 * in the padding either side of each completion at the row where its
 * prompt ends: above them the test image was given, below generated. */
static void mark_prompt_end(uint8_t *grid, int grid_width, int channels, int count,
                            int tile_width, int tile_height)
{
    int boundary = GRID_PAD + (tile_height + GRID_PAD) + tile_height / 2; /* second row */
    for (int i = 0; i <= count; i++) {
        int x0 = i * (tile_width + GRID_PAD); /* the padding left of tile i */
        for (int y = boundary * GRID_SCALE - 2; y <= boundary * GRID_SCALE + 1; y++)
            for (int x = x0 * GRID_SCALE; x < (x0 + GRID_PAD) * GRID_SCALE; x++)
                memset(grid + ((size_t)y * (size_t)grid_width + (size_t)x) * (size_t)channels,
                       GRID_MARK, (size_t)channels);
    }
}

lt_status bench_image_enlarge_grid(uint8_t **out, const uint8_t *grid, int width, int height,
                                   int channels, int tile, int cols, int mark)
{
    size_t bytes = (size_t)width * height * channels * GRID_SCALE * GRID_SCALE;
    LT_TRY(lt_mem_alloc((void **)out, bytes, "image grid, enlarged"));
    lt_png_scale(*out, grid, width, height, channels, GRID_SCALE);
    if (mark)
        mark_prompt_end(*out, width * GRID_SCALE, channels, cols, tile, tile);
    return LT_OK;
}

/* Whether a grid of tiles `tile` pixels square is drawn at actual size:
 * every pixel of the padding between and around its tiles is background.
 * An enlarged grid fails it (its padding lies elsewhere, and the prompt
 * marks of its completions are white). */
static int actual_size(const uint8_t *pixels, int width, int height, int channels, int tile)
{
    if (tile < 1 || (width - GRID_PAD) % (tile + GRID_PAD) != 0 ||
        (height - GRID_PAD) % (tile + GRID_PAD) != 0)
        return 0;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int pad = y % (tile + GRID_PAD) < GRID_PAD || x % (tile + GRID_PAD) < GRID_PAD;
            for (int k = 0; pad && k < channels; k++)
                if (pixels[((size_t)y * width + x) * channels + k] != GRID_BACKGROUND)
                    return 0;
        }
    return 1;
}

int bench_image_grid_view(const char *grid, const char *completions, const char *view, int mark)
{
    /* the completions grid has two rows of tiles: its height gives the
     * tile if it was drawn at actual size */
    uint8_t *pixels = NULL, *scaled = NULL;
    int width, height, channels;
    if (lt_png_read(&pixels, &width, &height, &channels, completions) != LT_OK)
        return -1;
    int tile = (height - 3 * GRID_PAD) / 2;
    int small = actual_size(pixels, width, height, channels, tile);
    lt_mem_free(pixels);
    if (!small)
        return 0; /* enlarged and marked by the run itself */
    if (lt_png_read(&pixels, &width, &height, &channels, grid) != LT_OK)
        return -1;
    lt_status status = bench_image_enlarge_grid(&scaled, pixels, width, height, channels, tile,
                                                (width - GRID_PAD) / (tile + GRID_PAD), mark);
    if (status == LT_OK)
        status = lt_png_write(view, scaled, width * GRID_SCALE, height * GRID_SCALE, channels);
    lt_mem_free(scaled);
    lt_mem_free(pixels);
    return status == LT_OK ? 1 : -1;
}
