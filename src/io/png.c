#include "io/png.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <string.h>

#include <png.h>

#include "core/mem.h"
#include "io/atomic.h"
#include "io/read.h"

/* libpng reports errors by calling back and never returning; the callback
 * keeps the message here and jumps back to the setjmp in the caller. Thread
 * local, not on the caller's stack, so it is not clobbered by the jump. */
static _Thread_local char png_message[256];

static void on_png_error(png_structp png, png_const_charp message)
{
    snprintf(png_message, sizeof png_message, "%s", message);
    png_longjmp(png, 1);
}

/* The errno of the write that failed, which libpng's own writer loses, and
 * the status of an allocation it could not get. */
static _Thread_local int png_write_errno;
static _Thread_local lt_status png_alloc_status;

static void png_write_to_file(png_structp png, png_bytep data, size_t bytes)
{
    if (fwrite(data, 1, bytes, png_get_io_ptr(png)) != bytes) {
        png_write_errno = errno != 0 ? errno : EIO;
        png_error(png, "Write Error");
    }
}

static void png_flush_file(png_structp png)
{
    if (fflush(png_get_io_ptr(png)) != 0) {
        png_write_errno = errno != 0 ? errno : EIO;
        png_error(png, "Write Error");
    }
}

static void on_png_warning(png_structp png, png_const_charp message)
{
    (void)png; /* nothing in src/ prints; warnings change nothing we write */
    (void)message;
}

/* libpng's own buffers go through the tracked allocator, so peak bytes stay
 * exact. NULL makes libpng raise "Out of memory" through on_png_error. */
static png_voidp png_alloc(png_structp png, png_alloc_size_t bytes)
{
    (void)png;
    void *block;
    lt_status status = lt_mem_alloc(&block, bytes, "libpng");
    if (status == LT_OK)
        return block;
    png_alloc_status = status;
    return NULL;
}

static void png_release(png_structp png, png_voidp block)
{
    (void)png;
    lt_mem_free(block);
}

lt_status lt_png_write(const char *path, const uint8_t *pixels, int width, int height,
                       int channels)
{
    if (width < 1 || height < 1 || (channels != 1 && channels != 3))
        return lt_fail(LT_E_INPUT, "%s: PNG of %d x %d with %d channels, expected sizes >= 1 and "
                                   "1 (gray) or 3 (RGB) channels", path, width, height, channels);
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    png_structp png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, NULL, on_png_error,
                                                on_png_warning, NULL, png_alloc, png_release);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        lt_atomic_abort(&af);
        return lt_fail(LT_E_NOMEM, "cannot write %s: libpng could not start", path);
    }
    png_write_errno = 0;
    png_alloc_status = LT_OK;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        lt_atomic_abort(&af);
        if (png_write_errno != 0)
            return lt_fail_write(path, png_write_errno);
        return lt_fail(png_alloc_status != LT_OK ? png_alloc_status : LT_E_IO,
                       "cannot write %s: libpng: %s", path, png_message);
    }
    png_set_write_fn(png, af.f, png_write_to_file, png_flush_file);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t stride = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++)
        png_write_row(png, pixels + (size_t)y * stride);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return lt_atomic_commit(&af);
}

static const char *color_type_name(int color_type)
{
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return "gray";
    case PNG_COLOR_TYPE_RGB: return "RGB";
    case PNG_COLOR_TYPE_PALETTE: return "palette";
    case PNG_COLOR_TYPE_GRAY_ALPHA: return "gray+alpha";
    case PNG_COLOR_TYPE_RGB_ALPHA: return "RGBA";
    }
    return "unknown";
}

/* The body of lt_png_read once the file is open and its signature checked. */
static lt_status read_png_file(uint8_t **pixels, int *width, int *height, int *channels, FILE *f,
                               const char *path)
{
    png_structp png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, NULL, on_png_error,
                                               on_png_warning, NULL, png_alloc, png_release);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return lt_fail(LT_E_NOMEM, "cannot read %s: libpng could not start", path);
    }
    /* Assigned after setjmp and needed after the jump: volatile. */
    uint8_t *volatile image = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        lt_mem_free(image);
        return lt_fail(LT_E_INPUT, "%s: damaged PNG: %s", path, png_message);
    }
    png_init_io(png, f);
    png_set_sig_bytes(png, 8);
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, color_type;
    png_get_IHDR(png, info, &w, &h, &depth, &color_type, NULL, NULL, NULL);
    int c = color_type == PNG_COLOR_TYPE_RGB ? 3 : 1;
    lt_status status = LT_OK;
    if (depth != 8 || (color_type != PNG_COLOR_TYPE_GRAY && color_type != PNG_COLOR_TYPE_RGB))
        status = lt_fail(LT_E_INPUT, "%s: %d-bit %s PNG, expected 8-bit gray or RGB", path, depth,
                         color_type_name(color_type));
    else if (w > INT_MAX || h > INT_MAX)
        status = lt_fail(LT_E_INPUT, "%s: PNG of %u x %u is too large", path, (unsigned)w,
                         (unsigned)h);
    size_t stride = (size_t)w * (size_t)c;
    void *block = NULL;
    if (status == LT_OK)
        status = lt_mem_alloc(&block, stride * h, path);
    if (status != LT_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        return status;
    }
    image = block;
    int passes = png_set_interlace_handling(png); /* Adam7 files fill the rows in passes */
    png_read_update_info(png, info);
    for (int pass = 0; pass < passes; pass++)
        for (png_uint_32 y = 0; y < h; y++)
            png_read_row(png, image + (size_t)y * stride, NULL);
    png_read_end(png, NULL); /* checks the chunks after the pixels too */
    png_destroy_read_struct(&png, &info, NULL);
    *pixels = image;
    *width = (int)w;
    *height = (int)h;
    *channels = c;
    return LT_OK;
}

lt_status lt_png_read(uint8_t **pixels, int *width, int *height, int *channels, const char *path)
{
    *pixels = NULL;
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    unsigned char signature[8];
    lt_status status;
    if (fread(signature, 1, sizeof signature, f) != sizeof signature ||
        png_sig_cmp(signature, 0, sizeof signature) != 0)
        status = lt_fail(LT_E_INPUT, "%s: not a PNG file, expected the PNG signature", path);
    else
        status = read_png_file(pixels, width, height, channels, f, path);
    fclose(f);
    return status;
}

lt_status lt_png_grid_size(int *grid_width, int *grid_height, int count, int tile_width,
                           int tile_height, int cols, int pad)
{
    if (count < 1 || tile_width < 1 || tile_height < 1 || cols < 1 || pad < 0)
        return lt_fail(LT_E_INPUT, "image grid of %d tiles of %d x %d in %d columns with pad %d, "
                                   "expected counts and sizes >= 1 and pad >= 0",
                       count, tile_width, tile_height, cols, pad);
    long long across = cols < count ? cols : count;
    long long down = ((long long)count + cols - 1) / cols;
    long long w = across * tile_width + (across + 1) * pad;
    long long h = down * tile_height + (down + 1) * pad;
    if (w > INT_MAX || h > INT_MAX)
        return lt_fail(LT_E_INPUT, "image grid of %lld x %lld pixels is too large", w, h);
    *grid_width = (int)w;
    *grid_height = (int)h;
    return LT_OK;
}

lt_status lt_png_grid(uint8_t *out, const uint8_t *tiles, int count, int tile_width,
                      int tile_height, int channels, int cols, int pad, uint8_t background)
{
    int grid_width, grid_height;
    LT_TRY(lt_png_grid_size(&grid_width, &grid_height, count, tile_width, tile_height, cols, pad));
    if (channels < 1)
        return lt_fail(LT_E_INPUT, "image grid with %d channels, expected >= 1", channels);
    size_t c = (size_t)channels;
    size_t out_stride = (size_t)grid_width * c;
    size_t tile_stride = (size_t)tile_width * c;
    memset(out, background, out_stride * (size_t)grid_height);
    for (int i = 0; i < count; i++) {
        size_t x0 = (size_t)pad + (size_t)(i % cols) * (size_t)(tile_width + pad);
        size_t y0 = (size_t)pad + (size_t)(i / cols) * (size_t)(tile_height + pad);
        const uint8_t *tile = tiles + (size_t)i * (size_t)tile_height * tile_stride;
        for (int y = 0; y < tile_height; y++)
            memcpy(out + (y0 + (size_t)y) * out_stride + x0 * c, tile + (size_t)y * tile_stride,
                   tile_stride);
    }
    return LT_OK;
}

void lt_png_scale(uint8_t *out, const uint8_t *in, int width, int height, int channels,
                  int factor)
{
    size_t c = (size_t)channels, out_width = (size_t)width * (size_t)factor;
    for (size_t y = 0; y < (size_t)height * (size_t)factor; y++)
        for (size_t x = 0; x < out_width; x++)
            memcpy(out + (y * out_width + x) * c,
                   in + ((y / (size_t)factor) * (size_t)width + x / (size_t)factor) * c, c);
}
