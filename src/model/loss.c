#include "model/loss.h"

#include <string.h>

#include "nn/ctc.h"
#include "nn/mol.h"
#include "nn/xent.h"

const char *lt_loss_name(lt_loss_kind kind)
{
    switch (kind) {
    case LT_LOSS_XENT: return "xent";
    case LT_LOSS_MOL: return "mol";
    case LT_LOSS_CTC: return "ctc";
    }
    return "unknown";
}

lt_status lt_loss_check(const lt_loss *loss)
{
    switch (loss->kind) {
    case LT_LOSS_XENT:
        if (loss->classes < 1)
            return lt_fail(LT_E_USAGE, "loss.classes: expected >= 1, got %d", loss->classes);
        return LT_OK;
    case LT_LOSS_MOL:
        if (loss->mixtures < 1)
            return lt_fail(LT_E_USAGE, "loss.mixtures: expected >= 1, got %d", loss->mixtures);
        return LT_OK;
    case LT_LOSS_CTC:
        if (loss->classes < 2)
            return lt_fail(LT_E_USAGE, "loss.classes: CTC needs the blank and >= 1 label, got %d",
                           loss->classes);
        if (loss->max_labels < 0)
            return lt_fail(LT_E_USAGE, "loss.max_labels: expected >= 0, got %d",
                           loss->max_labels);
        return LT_OK;
    }
    return lt_fail(LT_E_USAGE, "loss.kind: expected xent, mol or ctc, got %d", (int)loss->kind);
}

int lt_loss_outputs(const lt_loss *loss)
{
    return loss->kind == LT_LOSS_MOL ? LT_MOL_PARAMS(loss->mixtures) : loss->classes;
}

size_t lt_loss_workspace_bytes(const lt_loss *loss, int batch, int n, int threads)
{
    if (loss->kind != LT_LOSS_CTC)
        return 0;
    return lt_ctc_workspace_bytes(batch, n, loss->max_labels, loss->classes, threads);
}

lt_status lt_loss_eval(const lt_loss *loss, lt_loss_result *r, float *d_logits, void *workspace,
                       const float *logits, const lt_batch *b)
{
    const int R = b->batch * b->n;
    memset(r, 0, sizeof *r);
    switch (loss->kind) {
    case LT_LOSS_XENT:
        LT_TRY(lt_xent_forward(&r->loss, &r->correct, &r->counted, logits, b->targets, b->mask, R,
                               loss->classes));
        r->sum = r->loss * (double)r->counted;
        if (d_logits != NULL)
            LT_TRY(lt_xent_backward(d_logits, logits, b->targets, b->mask, R, loss->classes));
        return LT_OK;
    case LT_LOSS_MOL:
        LT_TRY(lt_mol_forward(&r->sum, &r->counted, logits, b->targets, b->mask, R,
                              loss->mixtures));
        r->loss = r->counted ? r->sum / (double)r->counted : 0.0;
        if (d_logits != NULL && r->counted > 0)
            LT_TRY(lt_mol_backward(d_logits, logits, b->targets, b->mask, R, loss->mixtures,
                                   (float)(1.0 / (double)r->counted)));
        return LT_OK;
    case LT_LOSS_CTC: {
        if (b->labels == NULL || b->label_lengths == NULL || b->lengths == NULL)
            return lt_fail(LT_E_INPUT, "ctc loss: the batch needs lengths, labels and "
                                       "label_lengths");
        for (int i = 0; i < b->batch; i++)
            if (b->label_lengths[i] > loss->max_labels)
                return lt_fail(LT_E_INPUT,
                               "ctc loss: sequence %d has %d labels, more than the planned %d",
                               i, (int)b->label_lengths[i], loss->max_labels);
        r->counted = b->batch;
        float scale = (float)(1.0 / (double)b->batch);
        LT_TRY(lt_ctc_loss(&r->sum, NULL, d_logits, scale, workspace, logits, b->lengths,
                           b->labels, b->label_lengths, b->batch, b->n, loss->classes,
                           loss->max_labels));
        r->loss = r->sum / (double)b->batch;
        return LT_OK;
    }
    }
    return lt_fail(LT_E_USAGE, "loss.kind: unknown loss %d", (int)loss->kind);
}
