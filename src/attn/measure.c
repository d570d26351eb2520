#include "attn/measure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"

/* Buffers of one case, all from the tracked allocator; the gates (and
 * their gradients) only for a variant that reads them. */
typedef struct case_buffers {
    float *q, *k, *v, *out, *d_out, *dq, *dk, *dv, *params, *d_params;
    float *beta, *log_alpha, *d_beta, *d_log_alpha;
    void *saved, *workspace;
} case_buffers;

typedef struct timed_case {
    const lt_attn *attn;
    lt_attn_shape shape;
    case_buffers *buf;
    lt_attn_gates gates;
    size_t q_count, v_count, param_count, beta_count, alpha_count;
} timed_case;

/* Floats of beta and of log_alpha for this shape (0: not read). */
static void gate_counts(const lt_attn *attn, lt_attn_shape s, size_t *beta, size_t *alpha)
{
    int wb, wa;
    lt_attn_gate_widths(attn, s.D, &wb, &wa);
    *beta = (size_t)s.B * s.H * s.N * wb;
    *alpha = (size_t)s.B * s.H * s.N * wa;
}

size_t lt_attn_case_bytes(const lt_attn *attn, lt_attn_shape s, int threads)
{
    size_t qk = (size_t)s.B * s.H * s.N * s.D * sizeof(float);
    size_t vo = (size_t)s.B * s.H * s.N * s.M * sizeof(float);
    size_t params = lt_attn_param_count(attn) * sizeof(float), beta, alpha;
    gate_counts(attn, s, &beta, &alpha);
    return 4 * lt_mem_rounded(qk) + 5 * lt_mem_rounded(vo) + 2 * lt_mem_rounded(params) +
           2 * lt_mem_rounded(beta * sizeof(float)) + 2 * lt_mem_rounded(alpha * sizeof(float)) +
           lt_mem_rounded(lt_attn_saved_bytes(attn, s)) +
           lt_mem_rounded(lt_attn_workspace_bytes(attn, s, threads));
}

/* The gates a variant reads and their gradients (none for the others). */
static lt_status gates_alloc(case_buffers *b, const lt_attn *attn, lt_attn_shape s)
{
    size_t beta, alpha;
    gate_counts(attn, s, &beta, &alpha);
    if (beta > 0) {
        LT_TRY(lt_mem_alloc((void **)&b->beta, beta * sizeof(float), "gates beta"));
        LT_TRY(lt_mem_alloc((void **)&b->d_beta, beta * sizeof(float), "gate gradients beta"));
    }
    if (alpha > 0) {
        LT_TRY(lt_mem_alloc((void **)&b->log_alpha, alpha * sizeof(float), "gates log_alpha"));
        LT_TRY(lt_mem_alloc((void **)&b->d_log_alpha, alpha * sizeof(float),
                            "gate gradients log_alpha"));
    }
    return LT_OK;
}

static lt_status case_alloc(case_buffers *b, const lt_attn *attn, lt_attn_shape s, int threads)
{
    size_t qk = (size_t)s.B * s.H * s.N * s.D * sizeof(float);
    size_t vo = (size_t)s.B * s.H * s.N * s.M * sizeof(float);
    size_t params = lt_attn_param_count(attn) * sizeof(float);
    memset(b, 0, sizeof *b);
    LT_TRY(gates_alloc(b, attn, s));
    LT_TRY(lt_mem_alloc((void **)&b->q, qk, "queries"));
    LT_TRY(lt_mem_alloc((void **)&b->k, qk, "keys"));
    LT_TRY(lt_mem_alloc((void **)&b->v, vo, "values"));
    LT_TRY(lt_mem_alloc((void **)&b->out, vo, "outputs"));
    LT_TRY(lt_mem_alloc((void **)&b->d_out, vo, "output gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->dq, qk, "query gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->dk, qk, "key gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->dv, vo, "value gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->params, params, "attention parameters"));
    LT_TRY(lt_mem_alloc((void **)&b->d_params, params, "attention parameter gradients"));
    LT_TRY(lt_mem_alloc(&b->saved, lt_attn_saved_bytes(attn, s), "saved activations"));
    LT_TRY(lt_mem_alloc(&b->workspace, lt_attn_workspace_bytes(attn, s, threads), "workspace"));
    return LT_OK;
}

static void case_free(case_buffers *b)
{
    void *all[] = {b->q,    b->k,        b->v,      b->out,   b->d_out,
                   b->dq,   b->dk,       b->dv,     b->params, b->d_params,
                   b->beta, b->log_alpha, b->d_beta, b->d_log_alpha, b->saved,
                   b->workspace};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        lt_mem_free(all[i]);
    memset(b, 0, sizeof *b);
}

static lt_status forward(const timed_case *c)
{
    return lt_attn_forward_gated(c->attn, c->shape, &c->gates, c->buf->out, c->buf->saved,
                                 c->buf->workspace, c->buf->q, c->buf->k, c->buf->v,
                                 c->buf->params);
}

/* The timed calls, each entered once per call and kept whole (noipa: not
 * merged, inlined or cloned), so a profiler counts each by its name:
 * `ltbench ab --measure instructions` counts run_forward_only and
 * run_forward_backward under callgrind (whose name patterns take a name
 * as a prefix of longer ones: neither name begins the other). */
__attribute__((noipa)) static lt_status run_forward_only(void *ctx) { return forward(ctx); }

__attribute__((noipa)) static lt_status run_forward_backward(void *ctx)
{
    timed_case *c = ctx;
    case_buffers *b = c->buf;
    LT_TRY(forward(c));
    /* A training step zeroes the gradients once, then backward adds. */
    lt_zero_floats(b->dq, c->q_count);
    lt_zero_floats(b->dk, c->q_count);
    lt_zero_floats(b->dv, c->v_count);
    lt_zero_floats(b->d_params, c->param_count);
    if (b->d_beta != NULL) /* only a variant that reads the gate has its gradient */
        lt_zero_floats(b->d_beta, c->beta_count);
    if (b->d_log_alpha != NULL)
        lt_zero_floats(b->d_log_alpha, c->alpha_count);
    return lt_attn_backward_gated(c->attn, c->shape, &c->gates, b->dq, b->dk, b->dv,
                                  b->d_params, b->workspace, b->d_out, b->saved, b->q, b->k,
                                  b->v, b->params);
}

/* Gates a trained model could give, drawn after the other inputs (so
 * those stay what they were before gated variants): beta uniform in [0.1,
 * 0.9], alpha uniform in [0.9, 1), a decay that keeps some hundred
 * positions, given as its logarithm. */
static void fill_gates(lt_rng *rng, timed_case *c)
{
    case_buffers *b = c->buf;
    if (b->beta != NULL)
        lt_rng_fill_uniform(rng, b->beta, (long)c->beta_count, 0.1f, 0.9f);
    if (b->log_alpha != NULL) {
        lt_rng_fill_uniform(rng, b->log_alpha, (long)c->alpha_count, 0.9f, 1.0f);
        for (size_t i = 0; i < c->alpha_count; i++)
            b->log_alpha[i] = logf(b->log_alpha[i]);
    }
    c->gates = (lt_attn_gates){b->beta, b->log_alpha, b->d_beta, b->d_log_alpha};
}

lt_status lt_attn_time_case(const lt_attn *attn, lt_attn_shape shape, uint64_t seed,
                            uint64_t stream, int warmup, int repeats, double *samples,
                            lt_attn_timing *out)
{
    double start = lt_time_now();
    int threads = lt_threads_get();
    memset(out, 0, sizeof *out);
    out->planned_bytes = lt_attn_case_bytes(attn, shape, threads);
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    case_buffers buf;
    lt_status status = case_alloc(&buf, attn, shape, threads);
    if (status == LT_OK) {
        timed_case c = {attn, shape, &buf, {0}, (size_t)shape.B * shape.H * shape.N * shape.D,
                        (size_t)shape.B * shape.H * shape.N * shape.M, lt_attn_param_count(attn),
                        0, 0};
        gate_counts(attn, shape, &c.beta_count, &c.alpha_count);
        lt_rng rng;
        lt_rng_seed(&rng, seed, stream);
        lt_rng_fill_normal(&rng, buf.q, (long)c.q_count, 1.0f);
        lt_rng_fill_normal(&rng, buf.k, (long)c.q_count, 1.0f);
        lt_rng_fill_normal(&rng, buf.v, (long)c.v_count, 1.0f);
        lt_rng_fill_normal(&rng, buf.d_out, (long)c.v_count, 1.0f);
        lt_attn_init_params(attn, buf.params, (unsigned long long)seed);
        fill_gates(&rng, &c);
        out->fwd_samples = samples;
        out->fwd_bwd_samples = samples + repeats;
        status = lt_time_repeat(&out->fwd, samples, run_forward_only, &c, warmup, repeats);
        if (status == LT_OK)
            status = lt_time_repeat(&out->fwd_bwd, samples + repeats, run_forward_backward, &c,
                                    warmup, repeats);
    }
    out->peak_bytes = lt_mem_peak() - base;
    case_free(&buf);
    out->case_seconds = lt_time_now() - start;
    return status;
}

const char lt_attn_max_case_seconds_help[] =
    "skip a case whose wall time (its buffers allocated and filled, then --warmup and "
    "--repeats runs of the forward and of forward+backward), extrapolated by the FLOP model "
    "from the same kernel's last case run, would exceed S seconds (a kernel's first case "
    "is never skipped for time)";

lt_attn_last_case lt_attn_no_case_yet(void) { return (lt_attn_last_case){NAN, NAN}; }

void lt_attn_admit_case(const lt_attn_last_case *last, size_t planned_bytes, double flops,
                        double max_case_seconds, lt_attn_admission *out)
{
    out->status = "ok";
    out->why[0] = '\0';
    /* NaN unless a case with positive time and FLOPs ran before */
    out->estimate_seconds = last->seconds > 0 && last->flops > 0
                                ? last->seconds * flops / last->flops
                                : NAN;
    char need[32], have[32];
    if (lt_mem_plan(planned_bytes, "this case") != LT_OK) {
        out->status = "skipped-budget";
        snprintf(out->why, sizeof out->why, "needs %s, budget %s",
                 lt_mem_format(need, sizeof need, planned_bytes),
                 lt_mem_format(have, sizeof have, lt_mem_budget()));
    } else if (out->estimate_seconds > max_case_seconds) {
        out->status = "skipped-time";
        snprintf(out->why, sizeof out->why,
                 "estimated %.3g s (last case %.3g s, x%.3g FLOPs) > --max-case-seconds %g",
                 out->estimate_seconds, last->seconds, flops / last->flops, max_case_seconds);
    }
}

void lt_attn_case_ran(lt_attn_last_case *last, const lt_attn_timing *timing, double flops)
{
    last->seconds = timing->case_seconds;
    last->flops = flops;
}
