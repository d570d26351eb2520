/* The vocabulary of flags the ltbench programs share, declared once: each
 * flag here has one name, one kind of value, one value name and one help
 * wording in every program that takes it (a program may add what is its
 * own to the help, after the shared part), and the names retired from the
 * vocabulary say what replaced them. tests/test_programs.c checks every
 * program's --help against it. */
#ifndef LT_EXPERIMENT_FLAGS_H
#define LT_EXPERIMENT_FLAGS_H

#include "core/cli.h"
#include "core/status.h"

/* The presets of every program that has --preset. */
#define LT_PRESET_CHOICES "quick|small|medium|paper"

/* --preset quick|small|medium|paper */
lt_flag lt_flag_preset(const char **preset);

/* --out DIR, the folder a program writes in; `contents` names what it
 * writes there ("scaling.csv"). */
lt_flag lt_flag_out(const char **dir, const char *contents);

/* LT_E_USAGE when --out names a file (ends in .csv or .npy): a folder now,
 * `contents` being what goes in it. */
lt_status lt_flag_check_out(const char *dir, const char *contents);

/* --overwrite, --resume, --mixed-revisions: what a run does with an
 * earlier run's results in OUT. */
lt_flag lt_flag_overwrite(int *overwrite);
lt_flag lt_flag_resume(int *resume);
lt_flag lt_flag_mixed_revisions(int *mixed);

/* --variants LIST; `note` (may be NULL): what the program adds about them. */
lt_flag lt_flag_variants(const char **list, const char *note);

/* --causal causal|noncausal|both */
lt_flag lt_flag_causal(const char **mode);

/* The masking modes a --causal value measures, non-causal (0) first:
 * their count. */
int lt_flag_causal_modes(const char *mode, int modes[2]);

/* --kernel NAME (one kernel, for the variant that has it) and --kernels
 * LIST (default, all, or kernel names; `note`: what default is here). */
lt_flag lt_flag_kernel(const char **name);
lt_flag lt_flag_kernels(const char **list, const char *note);

/* --feature-map elu|relu|favor|taylor and --feature-maps LIST. */
lt_flag lt_flag_feature_map(const char **map);
lt_flag lt_flag_feature_maps(const char **list);

/* The attention settings: --eps, --random-features, --proj-k and lsh's
 * --lsh-rounds, --lsh-buckets, --lsh-chunk. */
lt_flag lt_flag_eps(double *eps);
lt_flag lt_flag_random_features(long *count);
lt_flag lt_flag_proj_k(long *k);
lt_flag lt_flag_lsh_rounds(long *rounds);
lt_flag lt_flag_lsh_buckets(long *buckets);
lt_flag lt_flag_lsh_chunk(long *chunk);

/* The model's sizes: --layers, --heads, --head-dim, --value-dim, --ffn,
 * and the image model's --pos-dim and --mixtures. */
lt_flag lt_flag_layers(long *layers);
lt_flag lt_flag_heads(long *heads);
lt_flag lt_flag_head_dim(long *dim);
lt_flag lt_flag_value_dim(long *dim);
lt_flag lt_flag_ffn(long *width);
lt_flag lt_flag_pos_dim(long *dim);
lt_flag lt_flag_mixtures(long *count);

/* Timing a case: --tokens, --warmup, --repeats (at most `max_repeats`). */
lt_flag lt_flag_tokens(long *tokens);
lt_flag lt_flag_warmup(long *warmup);
lt_flag lt_flag_repeats(long *repeats, long max_repeats);

/* --gen-modes LIST: generation modes, or the sets default, all, fast;
 * `items`: the modes of this program. */
lt_flag lt_flag_gen_modes(const char **list, const char *items);

/* Every name retired from the vocabulary (ended by a NULL name): what
 * lt_program_parse gives every program's lt_cli. */
extern const lt_retired_flag lt_retired_flags[];

#endif
