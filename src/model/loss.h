/* The losses the trainer calls through one interface: a loss reads the
 * model's logits and a batch's targets (per-position targets and mask, or
 * per-sequence label sequences) and returns the value minimised and,
 * when asked, its gradient with respect to the logits.
 *
 *   xent  softmax cross-entropy over `classes`, per position, weighted by
 *         the mask; value = weighted sum / counted positions (copy task)
 *   mol   discretized mixture of `mixtures` logistics over byte values,
 *         3 * mixtures logits per position; value = mean negative
 *         log-likelihood in nats per counted position, so bits/dim =
 *         value / ln 2 (images)
 *   ctc   connectionist temporal classification over `classes` (blank 0),
 *         per sequence over its first lengths[b] positions against its
 *         label sequence; value = mean over the batch of -log p (speech)
 *
 * A new loss adds a kind here and a case in loss.c; the trainer does not
 * change. */
#ifndef LT_MODEL_LOSS_H
#define LT_MODEL_LOSS_H

#include <stddef.h>

#include "core/status.h"
#include "model/model.h"

typedef enum lt_loss_kind { LT_LOSS_XENT, LT_LOSS_MOL, LT_LOSS_CTC } lt_loss_kind;

typedef struct lt_loss {
    lt_loss_kind kind;
    int classes;    /* xent, ctc: classes (ctc's include the blank) */
    int mixtures;   /* mol: components */
    int max_labels; /* ctc: longest label sequence a batch may carry */
} lt_loss;

typedef struct lt_loss_result {
    double loss;  /* the minimised value: sum / counted */
    double sum;   /* total over the batch (nats) */
    long counted; /* positions (xent, mol) or sequences (ctc) counted */
    long correct; /* xent: counted positions whose argmax is the target; else 0 */
} lt_loss_result;

/* "xent", "mol" or "ctc". */
const char *lt_loss_name(lt_loss_kind kind);

/* LT_E_USAGE naming the field (loss.classes, loss.mixtures,
 * loss.max_labels) for sizes that do not fit the kind. */
lt_status lt_loss_check(const lt_loss *loss);

/* Logits per position the loss reads: the model's `classes`. */
int lt_loss_outputs(const lt_loss *loss);

/* Scratch bytes for batches up to batch x n positions on `threads`
 * threads, planned with the model. */
size_t lt_loss_workspace_bytes(const lt_loss *loss, int batch, int n, int threads);

/* Value of the loss on `logits` (batch->batch * batch->n rows of
 * lt_loss_outputs) and, when d_logits is not NULL, d_logits += d value /
 * d logits. LT_E_INPUT naming the position or sequence for targets or
 * labels that do not fit; LT_E_NUMERIC for non-finite logits. */
lt_status lt_loss_eval(const lt_loss *loss, lt_loss_result *result, float *d_logits,
                       void *workspace, const float *logits, const lt_batch *batch);

#endif
