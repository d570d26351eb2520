#include "nn/lstm.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/gemm.h"
#include "core/rng.h"
#include "core/vexp.h"
#include "nn/linear.h"

/* Below this many state elements a step's gate loop stays on one thread:
 * a parallel region per step would cost more than the loop. */
#define LSTM_PARALLEL_MIN 4096

size_t lt_lstm_param_count(int In, int H) { return (size_t)4 * H * ((size_t)In + H + 1); }

void lt_lstm_init_params(float *params, int In, int H, uint64_t seed)
{
    LT_ASSERT(In > 0 && H > 0);
    float bound = 1.0f / sqrtf((float)H);
    lt_rng rng;
    lt_rng_seed(&rng, seed, 0);
    lt_rng_fill_uniform(&rng, params, (long)lt_lstm_param_count(In, H), -bound, bound);
}

size_t lt_lstm_saved_floats(int B, int T, int H) { return (size_t)6 * B * T * H; }

/* Workspace sections start on cache lines (16 floats). */
static size_t round_floats(size_t n) { return (n + 15) / 16 * 16; }

size_t lt_lstm_workspace_bytes(int B, int T, int In, int H)
{
    (void)In; /* the input projection is 4H wide whatever In is */
    size_t G = (size_t)4 * H;
    size_t floats = round_floats((size_t)B * T * G) + round_floats((size_t)B * G) +
                    2 * round_floats((size_t)B * H);
    return floats * sizeof(float);
}

/* The workspace: `rows` holds one 4H row per (b, t) (forward: the input
 * projection; backward: the pre-activation gradients), `step` one 4H row
 * per sequence for the current step, `h` and `c` the running state
 * (backward: its gradients). */
typedef struct lstm_workspace {
    float *rows; /* (B, T, 4H) */
    float *step; /* (B, 4H) */
    float *h;    /* (B, H) */
    float *c;    /* (B, H) */
} lstm_workspace;

static lstm_workspace split_workspace(void *workspace, int B, int T, int H)
{
    size_t G = (size_t)4 * H;
    lstm_workspace ws;
    ws.rows = workspace;
    ws.step = ws.rows + round_floats((size_t)B * T * G);
    ws.h = ws.step + round_floats((size_t)B * G);
    ws.c = ws.h + round_floats((size_t)B * H);
    return ws;
}

/* The saved buffer, rows indexed by (b, t) like the input. */
typedef struct lstm_saved {
    float *gates; /* (B, T, 4H) activations i, f, g, o */
    float *cell;  /* (B, T, H) c_t */
    float *hprev; /* (B, T, H) the h this step started from */
} lstm_saved;

static lstm_saved split_saved(const float *saved, int B, int T, int H)
{
    size_t rows = (size_t)B * T;
    lstm_saved s = {0};
    if (saved == NULL) /* inference */
        return s;
    s.gates = (float *)saved; /* backward only reads through it */
    s.cell = s.gates + rows * 4 * H;
    s.hprev = s.cell + rows * H;
    return s;
}

static int length_of(const int32_t *lengths, int b, int T) { return lengths ? lengths[b] : T; }

/* The row (b, t) sequence b visits at recurrent step s; 0 when the
 * sequence has no step s. */
static int step_row(size_t *row, const int32_t *lengths, int b, int s, int T, int reverse)
{
    int len = length_of(lengths, b, T);
    if (s >= len)
        return 0;
    *row = (size_t)b * T + (reverse ? len - 1 - s : s);
    return 1;
}

/* Everything forward and backward check alike; *steps receives the longest
 * length, the number of recurrent steps to run. */
static lt_status check_call(const char *what, const float *out, const void *workspace,
                            const float *in, const float *params, const int32_t *lengths,
                            int ld_out, int col0, int B, int T, int In, int H, int reverse,
                            int *steps)
{
    if (B < 0 || T < 0 || In < 1 || H < 1)
        return lt_fail(LT_E_USAGE, "%s: sizes B = %d, T = %d, In = %d, H = %d (need B, T >= 0, "
                       "In, H >= 1)", what, B, T, In, H);
    if ((long long)B * T > INT_MAX)
        return lt_fail(LT_E_USAGE, "%s: B * T = %lld rows exceed %d", what, (long long)B * T,
                       INT_MAX);
    if (col0 < 0 || (long long)col0 + H > ld_out)
        return lt_fail(LT_E_USAGE, "%s: columns [%d, %lld) do not fit output rows of %d floats",
                       what, col0, (long long)col0 + H, ld_out);
    if (reverse != 0 && reverse != 1)
        return lt_fail(LT_E_USAGE, "%s: reverse is %d, expected 0 or 1", what, reverse);
    if (out == NULL || workspace == NULL || in == NULL || params == NULL)
        return lt_fail(LT_E_USAGE, "%s: %s is NULL", what,
                       out == NULL ? "the output (gradient)" : workspace == NULL ? "workspace"
                       : in == NULL ? "in" : "params");
    *steps = 0;
    for (int b = 0; b < B; b++) {
        int len = length_of(lengths, b, T);
        if (len < 0 || len > T)
            return lt_fail(LT_E_INPUT, "%s: lengths[%d] = %d is outside [0, T = %d]", what, b,
                           len, T);
        if (len > *steps)
            *steps = len;
    }
    return LT_OK;
}


lt_status lt_lstm_forward(float *out, int ld_out, int col0, float *saved, void *workspace,
                          const float *in, const int32_t *lengths, const float *params, int B,
                          int T, int In, int H, int reverse)
{
    int steps;
    LT_TRY(check_call("lstm forward", out, workspace, in, params, lengths, ld_out, col0, B, T, In,
                      H, reverse, &steps));
    const int G = 4 * H;
    const float *w_ih = params, *w_hh = params + (size_t)G * In, *bias = w_hh + (size_t)G * H;
    lstm_workspace ws = split_workspace(workspace, B, T, H);
    lstm_saved sv = split_saved(saved, B, T, H);

    /* The input part of every step at once, padded rows included: one GEMM
     * instead of one per step. */
    lt_linear_forward(ws.rows, in, w_ih, bias, B * T, In, G);
    memset(ws.h, 0, sizeof(float) * B * H);
    memset(ws.c, 0, sizeof(float) * B * H);

    for (int s = 0; s < steps; s++) {
        /* Rows of sequences already finished are computed and ignored: one
         * GEMM over the whole batch beats gathering the live rows. */
        if (s == 0)
            memset(ws.step, 0, sizeof(float) * B * G); /* h_{-1} = 0 */
        else
            lt_sgemm(LT_N, LT_T, B, G, H, 1.0f, ws.h, H, w_hh, H, 0.0f, ws.step, G);
#pragma omp parallel for schedule(static) if ((long)B * H >= LSTM_PARALLEL_MIN)
        for (int b = 0; b < B; b++) {
            size_t row;
            if (!step_row(&row, lengths, b, s, T, reverse))
                continue;
            float *z = ws.step + (size_t)b * G, *h = ws.h + (size_t)b * H;
            float *c = ws.c + (size_t)b * H;
            const float *x = ws.rows + row * G;
            for (int k = 0; k < 2 * H; k++) /* i, f */
                z[k] = lt_sigmoid(z[k] + x[k]);
            for (int k = 2 * H; k < 3 * H; k++) /* g */
                z[k] = lt_tanh(z[k] + x[k]);
            for (int k = 3 * H; k < G; k++) /* o */
                z[k] = lt_sigmoid(z[k] + x[k]);
            if (saved)
                memcpy(sv.hprev + row * H, h, sizeof(float) * H);
            float *y = out + row * ld_out + col0;
            for (int j = 0; j < H; j++)
                c[j] = z[H + j] * c[j] + z[j] * z[2 * H + j];
            for (int j = 0; j < H; j++) /* apart, so that it vectorises */
                h[j] = z[3 * H + j] * lt_tanh(c[j]);
            memcpy(y, h, sizeof(float) * H);
            if (saved) {
                memcpy(sv.gates + row * G, z, sizeof(float) * G);
                memcpy(sv.cell + row * H, c, sizeof(float) * H);
            }
        }
    }

    /* Padded rows: zero output, and a defined saved state (backward's final
     * GEMMs multiply these rows by zero gradients, and 0 * NaN is NaN). */
#pragma omp parallel for schedule(static) if ((long)B * T * H >= LSTM_PARALLEL_MIN)
    for (int b = 0; b < B; b++) {
        int len = length_of(lengths, b, T);
        for (int t = len; t < T; t++) {
            size_t row = (size_t)b * T + t;
            memset(out + row * ld_out + col0, 0, sizeof(float) * H);
            if (saved) {
                memset(sv.gates + row * G, 0, sizeof(float) * G);
                memset(sv.cell + row * H, 0, sizeof(float) * H);
                memset(sv.hprev + row * H, 0, sizeof(float) * H);
            }
        }
    }
    return LT_OK;
}

lt_status lt_lstm_backward(float *d_in, float *d_params, void *workspace, const float *d_out,
                           int ld_out, int col0, const float *saved, const float *in,
                           const int32_t *lengths, const float *params, int B, int T, int In,
                           int H, int reverse)
{
    int steps;
    LT_TRY(check_call("lstm backward", d_out, workspace, in, params, lengths, ld_out, col0, B, T,
                      In, H, reverse, &steps));
    if (saved == NULL || d_params == NULL)
        return lt_fail(LT_E_USAGE, "lstm backward: %s is NULL", saved ? "d_params" : "saved");
    const int G = 4 * H;
    const float *w_ih = params, *w_hh = params + (size_t)G * In;
    float *d_w_ih = d_params, *d_w_hh = d_params + (size_t)G * In;
    float *d_bias = d_w_hh + (size_t)G * H;
    lstm_workspace ws = split_workspace(workspace, B, T, H);
    lstm_saved sv = split_saved(saved, B, T, H);
    float *dz_rows = ws.rows; /* (B, T, 4H) gradients of the pre-activations */

    /* Padded rows take no gradient; a finished sequence's rows of the step
     * buffer and state gradients stay zero until its last step comes up. */
    for (int b = 0; b < B; b++) {
        int len = length_of(lengths, b, T);
        memset(dz_rows + ((size_t)b * T + len) * G, 0, sizeof(float) * (T - len) * G);
    }
    memset(ws.step, 0, sizeof(float) * B * G);
    memset(ws.h, 0, sizeof(float) * B * H);
    memset(ws.c, 0, sizeof(float) * B * H);

    for (int s = steps - 1; s >= 0; s--) {
        /* dh_{t} from the later step: dz_{t+1} W_hh (zero at the last). */
        if (s < steps - 1)
            lt_sgemm(LT_N, LT_N, B, H, G, 1.0f, ws.step, G, w_hh, H, 0.0f, ws.h, H);
#pragma omp parallel for schedule(static) if ((long)B * H >= LSTM_PARALLEL_MIN)
        for (int b = 0; b < B; b++) {
            size_t row;
            if (!step_row(&row, lengths, b, s, T, reverse))
                continue;
            const float *a = sv.gates + row * G, *c = sv.cell + row * H;
            /* c_{t-1}: the neighbour in visiting order, zero on the first step. */
            const float *c_prev = s == 0 ? NULL : sv.cell + (reverse ? row + 1 : row - 1) * H;
            const float *dy = d_out + row * ld_out + col0;
            float *dz = ws.step + (size_t)b * G, *dh = ws.h + (size_t)b * H;
            float *dc = ws.c + (size_t)b * H;
            /* tanh(c), the same value forward computed, parked where dz's o
             * part goes last: apart, the loops vectorise */
            for (int j = 0; j < H; j++)
                dz[3 * H + j] = lt_tanh(c[j]);
            for (int j = 0; j < H; j++) {
                float i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j];
                float tc = dz[3 * H + j];
                float dh_t = dh[j] + dy[j];
                float dc_t = dc[j] + dh_t * o * (1.0f - tc * tc);
                float cp = c_prev ? c_prev[j] : 0.0f;
                dz[j] = dc_t * g * i * (1.0f - i);
                dz[H + j] = dc_t * cp * f * (1.0f - f);
                dz[2 * H + j] = dc_t * i * (1.0f - g * g);
                dz[3 * H + j] = dh_t * tc * o * (1.0f - o);
                dc[j] = dc_t * f;
            }
            memcpy(dz_rows + row * G, dz, sizeof(float) * G);
        }
    }

    /* Parameter and input gradients of all steps at once: d_bias, d_W_ih
     * and d_in from z = W_ih x + bias, d_W_hh from z = W_hh h_prev. */
    lt_linear_backward(d_in, d_w_ih, d_bias, dz_rows, in, w_ih, B * T, In, G);
    lt_linear_backward(NULL, d_w_hh, NULL, dz_rows, sv.hprev, w_hh, B * T, H, G);
    return LT_OK;
}
