/* The byte-image model of ltbench image and decode: an image's bytes
 * (CIFAR: r, g, b interleaved) behind a start token, embedded from a
 * vocabulary of the 256 byte values and that token; a sinusoidal position
 * encoding concatenated in pos_dim columns of the width (as the paper
 * does for images); a discretized mixture of logistics predicting each
 * byte (PixelCNN++). The body is the caller's. */
#ifndef LT_MODEL_IMAGE_MODEL_H
#define LT_MODEL_IMAGE_MODEL_H

#include "model/loss.h"
#include "model/model.h"

/* The token before an image's first byte, and the vocabulary with it. */
#define LT_IMAGE_START_TOKEN 256
#define LT_IMAGE_VOCAB (LT_IMAGE_START_TOKEN + 1)

/* Sets config's inputs and head (vocab, pos, pos_dim, classes) and *loss
 * to the byte-image model's: pos_dim columns of positions (0: a quarter of
 * the width heads x head_dim, which must be set), `mixtures` logistics. */
void lt_image_model_config(lt_model_config *config, lt_loss *loss, int pos_dim, int mixtures);

#endif
