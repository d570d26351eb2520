#include "experiment/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/attn.h"
#include "core/dist.h"
#include "core/kernels.h"
#include "core/mem.h"
#include "core/provenance.h"
#include "core/runtime.h"
#include "core/signals.h"
#include "core/threads.h"
#include "experiment/flags.h"

void lt_common_defaults(lt_common *common)
{
    common->threads = 0;
    common->mem_budget = lt_mem_physical() / 10 * 6;
    common->seed = 1;
    common->quiet = 0;
    common->no_blas = 0;
}

void lt_common_flags(lt_flag *flags, lt_common *common)
{
    flags[0] = (lt_flag){"--threads", LT_FLAG_INT, &common->threads, "T",
                         "OpenMP and BLAS threads; 0 = one per core", 0, 4096, NULL, 0};
    flags[1] = (lt_flag){"--mem-budget", LT_FLAG_BYTES, &common->mem_budget, "BYTES",
                         "refuse work whose planned memory exceeds this (e.g. 8G; 0 = no limit)",
                         0, 0, NULL, 0};
    flags[2] = (lt_flag){"--seed", LT_FLAG_INT, &common->seed, "S",
                         "random seed: same seed and threads give the same numbers", 0,
                         2147483647.0, NULL, 0};
    flags[3] = (lt_flag){"--quiet", LT_FLAG_BOOL, &common->quiet, NULL,
                         "no progress on stderr", 0, 0, NULL, 0};
}

/* ---- presets ---- */

int lt_preset_index(const lt_presets *p, const char *name)
{
    for (int i = 0; i < LT_PRESETS; i++)
        if (name != NULL && p->names[i] != NULL && strcmp(p->names[i], name) == 0)
            return i;
    return -1;
}

static lt_status presets_apply(lt_cli *cli, const lt_presets *p, const char *name)
{
    int which = lt_preset_index(p, name);
    if (which < 0)
        return lt_fail(LT_E_USAGE, "--preset: unknown preset '%s'", name ? name : "(none)");
    for (int i = 0; i < p->count; i++) {
        lt_flag *flag = lt_cli_flag(cli, p->values[i].flag);
        LT_ASSERT(flag != NULL); /* the table names flags of this program */
        const char *value = p->values[i].values[which];
        if (flag->seen || value == NULL)
            continue;
        lt_status status = lt_cli_set(flag, value);
        if (status != LT_OK)
            return lt_fail(LT_E_INTERNAL, "preset %s: %s", p->names[which], lt_last_error());
    }
    return LT_OK;
}

void lt_presets_help(const lt_presets *p, char *buf, size_t size)
{
    size_t at = 0;
#define PUT(...)                                                                   \
    do {                                                                           \
        int n_ = snprintf(buf + at, at < size ? size - at : 0, __VA_ARGS__);       \
        if (n_ > 0)                                                                \
            at += (size_t)n_;                                                      \
    } while (0)
    PUT("Presets (a flag given on the command line overrides its preset value):\n");
    PUT("  %-18s", "");
    for (int i = 0; i < LT_PRESETS && p->names[i] != NULL; i++)
        PUT(" %-12s", p->names[i]);
    PUT("\n");
    for (int v = 0; v < p->count; v++) {
        PUT("  %-18s", p->values[v].flag);
        for (int i = 0; i < LT_PRESETS && p->names[i] != NULL; i++)
            PUT(" %-12s", p->values[v].values[i] ? p->values[v].values[i] : "-");
        PUT("\n");
    }
    for (int i = 0; i < LT_PRESETS && p->names[i] != NULL; i++)
        if (p->about[i] != NULL)
            PUT("  %s: %s\n", p->names[i], p->about[i]);
#undef PUT
    if (at >= size && size > 0)
        buf[size - 1] = '\0';
}

const char *lt_presets_details(const lt_presets *p, const char *details)
{
    static char text[8192], table[4096];
    lt_presets_help(p, table, sizeof table);
    snprintf(text, sizeof text, "%s\n%s", table, details);
    return text;
}

const char *lt_preset_choices(const lt_presets *p)
{
    static char choices[128];
    choices[0] = '\0';
    for (int i = 0; i < LT_PRESETS; i++)
        if (p->names[i] != NULL)
            snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s",
                     choices[0] ? "|" : "", p->names[i]);
    return choices;
}

/* ---- parsing ---- */

/* Under mpirun: MPI starts here (after the restart above, which must come
 * first); only rank 0 prints results and progress, the others keep stderr
 * for errors. */
static lt_status start_ranks(int *argc, char ***argv, lt_common *common)
{
    LT_TRY(lt_dist_init(argc, argv));
    atexit(lt_dist_finalize);
    if (!lt_dist_is_root()) {
        common->quiet = 1;
        if (freopen("/dev/null", "w", stdout) == NULL)
            return lt_fail(LT_E_IO, "rank %d: cannot silence stdout", lt_dist_rank());
    }
    return LT_OK;
}

int lt_program_parse(lt_cli *cli, const lt_presets *presets, const char *const *preset,
                lt_common *common, int argc, char **argv, int *exit_now)
{
    if (presets != NULL) {
        /* the vocabulary's presets, as --preset offers them */
        LT_ASSERT(strcmp(lt_preset_choices(presets), LT_PRESET_CHOICES) == 0);
        lt_status filled = presets_apply(cli, presets, *preset);
        LT_ASSERT(filled == LT_OK); /* the program's own table */
    }
    if (cli->retired == NULL)
        cli->retired = lt_retired_flags;
    lt_runtime_prepare(argv);
    int code = lt_cli_parse_tool(cli, NULL, argc, argv, exit_now);
    if (*exit_now)
        return code;
    *exit_now = 1;
    lt_status status = presets != NULL ? presets_apply(cli, presets, *preset) : LT_OK;
    if (status == LT_OK)
        status = lt_kernels_check_env();
    if (status == LT_OK && !common->no_blas)
        status = lt_openblas_check_env();
    if (status == LT_OK)
        status = start_ranks(&argc, &argv, common);
    if (status == LT_OK) {
        status = lt_threads_set((int)common->threads);
        lt_mem_set_budget(common->mem_budget);
    }
    if (status != LT_OK)
        return lt_cli_report(cli->program, status);
    *exit_now = 0;
    return 0;
}

/* ---- errors ---- */

int lt_program_report(const char *program, lt_status status, const lt_field_flag *map)
{
    /* every rank agreed on this failure: rank 0 says it for all */
    if (!lt_dist_is_root())
        return lt_exit_code(status);
    const char *message = lt_last_error();
    /* "rank N: field: ..." from lt_dist_agree keeps its prefix */
    int prefix = 0;
    if (strncmp(message, "rank ", 5) == 0 && strstr(message, ": ") != NULL)
        prefix = (int)(strstr(message, ": ") - message) + 2;
    for (int i = 0; map != NULL && map[i].field != NULL; i++) {
        size_t len = strlen(map[i].field);
        if (strncmp(message + prefix, map[i].field, len) == 0 && message[prefix + len] == ':') {
            char rewritten[1200];
            snprintf(rewritten, sizeof rewritten, "%.*s%s%s", prefix, message, map[i].flag,
                     message + prefix + len);
            lt_fail(status, "%s", rewritten);
            break;
        }
    }
    return lt_cli_report(program, status);
}

lt_status lt_program_open_csvs(lt_outdir *dir, const char *folder, const char *const *names,
                               int count, int overwrite, char (*paths)[4400])
{
    char contents[256] = "";
    for (int i = 0; i < count; i++)
        snprintf(contents + strlen(contents), sizeof contents - strlen(contents), "%s%s",
                 i == 0 ? "" : " and ", names[i]);
    LT_TRY(lt_flag_check_out(folder, contents));
    LT_TRY(lt_outdir_open(dir, folder, 0, 0, overwrite, names, count, NULL, 0));
    for (int i = 0; i < count; i++)
        lt_outdir_path(dir, names[i], paths[i], sizeof paths[i]);
    return LT_OK;
}

int lt_program_end_tables(const char *program, lt_status status, lt_table *const *tables,
                          const char *const *paths, int count, const lt_field_flag *map)
{
    for (int i = 0; i < count && status == LT_OK; i++)
        status = lt_table_commit(tables[i], paths[i]);
    if (status != LT_OK) {
        for (int i = 0; i < count; i++)
            lt_table_detach(tables[i]);
        return lt_program_report(program, status, map);
    }
    printf("\n");
    for (int i = 0; i < count; i++) {
        printf("wrote %s (%ld rows, %d threads)\n", paths[i], tables[i]->rows,
               lt_threads_get());
        lt_table_free(tables[i]);
    }
    if (!lt_interrupted())
        return 0;
    fprintf(stderr, "%s: interrupted; the rows measured so far are in", program);
    for (int i = 0; i < count; i++)
        fprintf(stderr, "%s %s", i == 0 ? "" : i + 1 < count ? "," : " and", paths[i]);
    fprintf(stderr, "\n");
    return lt_interrupt_exit_code();
}

lt_status lt_program_variant(const char *item, const lt_attn_config *base, lt_variant_spec *out,
                             const char *flag)
{
    out->config = *base;
    if (lt_attn_parse_variant(item, &out->config) != LT_OK)
        return lt_fail(LT_E_USAGE, "%s: expected items from %s (lsh-R: R hashing rounds), got "
                                   "'%s'",
                       flag, lt_attn_variant_names(), item);
    lt_attn_variant_label(&out->config, out->label, sizeof out->label);
    return LT_OK;
}

lt_status lt_program_parse_variants(char *text, const lt_attn_config *base,
                                    lt_variant_spec *out, int capacity, int *count,
                                    const char *flag)
{
    const char *items[64];
    LT_ASSERT(capacity <= 64);
    LT_TRY(lt_cli_split_unique(text, items, capacity, count, flag));
    for (int i = 0; i < *count; i++) {
        LT_TRY(lt_program_variant(items[i], base, &out[i], flag));
        for (int j = 0; j < i; j++)
            if (strcmp(out[i].label, out[j].label) == 0)
                return lt_fail(LT_E_USAGE, "%s: '%s' and '%s' are both %s", flag, items[j],
                               items[i], out[i].label);
    }
    return LT_OK;
}
