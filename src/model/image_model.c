#include "model/image_model.h"

void lt_image_model_config(lt_model_config *config, lt_loss *loss, int pos_dim, int mixtures)
{
    int width = config->heads * config->head_dim;
    config->vocab = LT_IMAGE_VOCAB;
    config->pos = LT_POS_CONCAT;
    config->pos_dim = pos_dim > 0 ? pos_dim : width / 4;
    *loss = (lt_loss){.kind = LT_LOSS_MOL, .mixtures = mixtures};
    config->classes = lt_loss_outputs(loss);
}
