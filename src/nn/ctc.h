/* Connectionist temporal classification (Graves et al. 2006): the loss,
 * best-path decoding, and the edit distance for error rates.
 *
 * Class 0 is the blank. Logits are (B, T_max, C) row-major and unnormalised:
 * the loss takes the log-softmax of each frame itself. Utterance b uses its
 * first input_lengths[b] frames; the label sequences are concatenated in
 * `labels`, utterance b's being label_lengths[b] long, every label in
 * [1, C). The forward-backward recursions run in log space over the
 * blank-augmented sequence (2L + 1 states), in double.
 *
 * Memory is planned by the caller: lt_ctc_workspace_bytes before any timed
 * loop; the loss never allocates. */
#ifndef LT_NN_CTC_H
#define LT_NN_CTC_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Workspace bytes for a batch of B utterances of at most T_max frames and
 * L_max labels over C classes, run on `threads` OpenMP threads (threads < 1:
 * lt_threads_get()). lt_ctc_loss runs on lt_threads_get() threads, so plan
 * for at least that many. */
size_t lt_ctc_workspace_bytes(int B, int T_max, int L_max, int C, int threads);

/* loss_sum = sum_b -log p(labels_b | logits_b) in nats; per_utt (may be
 * NULL) receives each term. When d_logits is not NULL:
 * d_logits += scale * d loss_sum / d logits, and frames t >= input_lengths[b]
 * get nothing. Fails before writing anything with LT_E_INPUT naming the
 * utterance for a length outside 0..T_max or 0..L_max, a label outside
 * [1, C), or an impossible alignment (input_lengths[b] < label_lengths[b] +
 * the number of adjacent repeated labels, which need a blank between them);
 * with LT_E_NUMERIC naming utterance and frame for a non-finite logit among
 * the used frames. The results do not depend on the thread count. */
lt_status lt_ctc_loss(double *loss_sum,              /* scalar */
                      double *per_utt,               /* (B) or NULL */
                      float *d_logits,               /* (B, T_max, C) or NULL */
                      float scale,
                      void *workspace,               /* lt_ctc_workspace_bytes */
                      const float *logits,           /* (B, T_max, C) */
                      const int32_t *input_lengths,  /* (B) */
                      const int32_t *labels,         /* (sum of label_lengths) */
                      const int32_t *label_lengths,  /* (B) */
                      int B, int T_max, int C, int L_max);

/* Best path: the argmax of each frame (the first on ties), repeats merged,
 * blanks dropped. Returns the output length (<= T). */
int lt_ctc_greedy_decode(int32_t *out,         /* (T) */
                         const float *logits,  /* (T, C) */
                         int T, int C);

/* Levenshtein distance between two sequences: substitution, insertion and
 * deletion each cost 1. Either may be empty. */
long lt_edit_distance(const int32_t *ref,  /* (n_ref) */
                      int n_ref,
                      const int32_t *hyp,  /* (n_hyp) */
                      int n_hyp,
                      int32_t *work);      /* (2 * (n_hyp + 1)) */

#endif
