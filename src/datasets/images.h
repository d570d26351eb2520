/* The image datasets of the paper's image generation experiments (sec.
 * 4.2), held in memory as uint8 pixels: MNIST (28x28 gray, N = 784) and
 * CIFAR-10 (32x32 RGB, N = 3072), read from the files of their original
 * distributions.
 *
 * Pixels are (count, height, width, channels): an image read in memory
 * order is the byte sequence the paper models, r g b of the first pixel,
 * then of the second, ... for CIFAR-10.
 *
 * A set's name says honestly what the data is. "mnist" and "cifar10" are
 * given only to the original files, checked by their official MD5s (for
 * CIFAR-10, of the archive the batches are read from);
 * a converted subset such as the cats-and-dogs images of data/README.md
 * carries its own name ("cifar10-catdog") from its manifest, and is never
 * reported as CIFAR-10. */
#ifndef LT_DATASETS_IMAGES_H
#define LT_DATASETS_IMAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LT_IMAGES_NAME_MAX 32
#define LT_IMAGES_CLASSES 10

/* Default folders, relative to the working directory (the repository root
 * for the programs), and the scripts that fill them. */
#define LT_MNIST_DIR "data/mnist"
#define LT_MNIST_FETCH "data/fetch-mnist.sh"
#define LT_CIFAR10_DIR "data/cifar10"
/* The authors' binary distribution, its MD5 as they publish it, and the
 * folder inside it that holds the six batches. */
#define LT_CIFAR10_ARCHIVE "cifar-10-binary.tar.gz"
#define LT_CIFAR10_ARCHIVE_MD5 "c32a1d4ab5d03f1284b67883e8d87530"
#define LT_CIFAR10_ARCHIVE_DIR "cifar-10-batches-bin"
#define LT_CIFAR10_URL "https://www.cs.toronto.edu/~kriz/cifar.html"
#define LT_CIFAR10_CATDOG_DIR "data/cifar10-catdog"
#define LT_CIFAR10_CATDOG_FETCH "data/fetch-cifar10-catdog.sh"

/* The manifest file that marks a folder as a converted CIFAR-10 subset (its
 * format is described in data/README.md). */
#define LT_CIFAR_SUBSET_MANIFEST "SUBSET"

typedef struct lt_image_set {
    char name[LT_IMAGES_NAME_MAX]; /* "mnist", "cifar10", "cifar10-catdog", ... */
    char split[8];                 /* "train" or "test" */
    int count;                     /* images held */
    int full_count;                /* images in the split they were taken from */
    int height, width, channels;
    uint8_t *pixels;               /* (count, height, width, channels), lt_mem_alloc'd */
    uint8_t *labels;               /* (count) class ids 0..9, lt_mem_alloc'd */
} lt_image_set;

/* MNIST from `dir` (NULL: LT_MNIST_DIR): the four original files
 * train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
 * and t10k-labels-idx1-ubyte, each plain or gzip-compressed with a .gz
 * suffix (plain is used when both exist). Each must have the original
 * dimensions (60,000 and 10,000 images of 28x28) and the MD5 of the original
 * uncompressed contents. Missing files: LT_E_INPUT naming the folder, the
 * files and the command that fetches them. Other failures as lt_idx_read,
 * or LT_E_INPUT for a size or checksum that is not the original's. Named
 * "mnist", splits 60,000 "train" and 10,000 "test". On failure both sets
 * are zeroed and nothing is left allocated. */
lt_status lt_images_load_mnist(lt_image_set *train, lt_image_set *test, const char *dir);

/* CIFAR-10 from `dir` (NULL: LT_CIFAR10_DIR). Without a manifest: the
 * official archive LT_CIFAR10_ARCHIVE in that folder, as below (batches
 * unpacked without it are refused: they have no official checksum). With
 * a LT_CIFAR_SUBSET_MANIFEST file: the subset it describes (its files,
 * record counts, MD5s and classes are all checked), named as the manifest
 * says - always "cifar10-" and a suffix. Missing files: LT_E_INPUT naming
 * the folder and the fetch script. On failure both sets are zeroed and
 * nothing is left allocated. */
lt_status lt_images_load_cifar10(lt_image_set *train, lt_image_set *test, const char *dir);

/* The archive at `path`, whose MD5 must be `md5` (LT_CIFAR10_ARCHIVE_MD5 for
 * the official one; tests give their own): the six batches data_batch_1.bin
 * .. data_batch_5.bin and test_batch.bin under LT_CIFAR10_ARCHIVE_DIR/, each
 * exactly LT_CIFAR_BATCH_BYTES, other members ignored; named "cifar10" with
 * 50,000 "train" and 10,000 "test" images. LT_E_INPUT for another MD5, a
 * damaged archive, or a batch missing, repeated or of another size. */
lt_status lt_images_load_cifar10_archive(lt_image_set *train, lt_image_set *test,
                                         const char *path, const char *md5);

/* Where a data set's files are by default: MNIST in LT_MNIST_DIR; CIFAR-10
 * in LT_CIFAR10_DIR, else the converted subset in LT_CIFAR10_CATDOG_DIR
 * (which then names itself, never CIFAR-10). *dir is NULL when neither is
 * there, and *fetch the script that fetches it; *fallback says the subset
 * stands in for the official files. `dataset` is "mnist" or "cifar10". */
void lt_images_locate(const char *dataset, const char **dir, const char **fetch,
                      int *fallback);

/* Loads "mnist" or "cifar10" from `dir`, or where lt_images_locate finds
 * it when dir is NULL, writing into `note` (size bytes; "" if none) that
 * the subset stands in for CIFAR-10 when it does. As the loaders above
 * otherwise. */
lt_status lt_images_load(lt_image_set *train, lt_image_set *test, const char *dataset,
                         const char *dir, char *note, size_t size);

/* The name `dataset` ("mnist" or "cifar10") will be loaded under from
 * `dir` (NULL: where lt_images_locate finds it), without loading it: a
 * converted subset's manifest name, else `dataset`. Outputs are named by
 * it before any work starts. LT_E_INPUT for a manifest that is not one. */
lt_status lt_images_data_name(char name[LT_IMAGES_NAME_MAX], const char *dataset,
                              const char *dir);

/* Any pair of IDX files (uint8 images and their labels), without the checks
 * that make them MNIST: LT_E_INPUT if the counts differ or a label is above
 * 9, otherwise as lt_idx_read. `name` and `split` are copied (truncated to
 * fit). */
lt_status lt_images_load_idx(lt_image_set *out, const char *images_path,
                             const char *labels_path, const char *name, const char *split);

/* The first n images of src, as a new set (same name, split and
 * full_count). LT_E_USAGE unless 1 <= n <= src->count. */
lt_status lt_images_first(lt_image_set *out, const lt_image_set *src, int n);

/* n distinct images of src chosen by `seed` alone, kept in their original
 * order. LT_E_USAGE unless 1 <= n <= src->count. */
lt_status lt_images_sample(lt_image_set *out, const lt_image_set *src, int n, uint64_t seed);

/* Sequence length of one image: height * width * channels. */
long lt_images_seq_len(const lt_image_set *set);

/* The context-free baseline: bits/dim of `test` under a per-channel
 * histogram of the byte values in `train` (add-one smoothed, so a value
 * the training pixels never show still has a probability). A model that
 * has learned anything beyond pixel statistics is below it. The channels
 * must agree; returns NAN for an empty set. */
double lt_images_histogram_bits(const lt_image_set *train, const lt_image_set *test);

/* "cifar10-catdog train: 1800 of 1800 images, 32x32x3" into buf. */
const char *lt_images_describe(char *buf, size_t size, const lt_image_set *set);

/* Releases the pixels and labels and zeroes the set; a zeroed set is
 * ignored. */
void lt_images_free(lt_image_set *set);

#endif
