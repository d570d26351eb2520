/* The feature maps phi of linear and decayed attention: phi(q) . phi(k)
 * stands for the similarity of a query and a key.
 *
 *   elu, relu, identity  element-wise, F = D features.
 *   favor                positive random features (FAVOR+, Choromanski et
 *                        al. 2021): phi(x) = exp(W u - |u|^2 / 2) / sqrt(m)
 *                        with u = x D^(-1/4) and W (m x D) orthogonal
 *                        Gaussian rows, so that E[phi(q) . phi(k)] =
 *                        exp(q . k / sqrt(D)), softmax's similarity. F = m.
 *   taylor               the second-order Taylor map of "Based" (Arora et
 *                        al. 2024): phi(x) = [1, u, vec(x x^T) / (sqrt(2)
 *                        sqrt(D))], so phi(q) . phi(k) = 1 + s + s^2 / 2
 *                        with s = q . k / sqrt(D). F = 1 + D + D^2.
 *
 * FAVOR+ stabilisers. exp(w . u - |u|^2 / 2) reaches exp(|w|^2 / 2), past
 * float range for long rows w, so each side gets a shift that cancels
 * between the numerator and the normaliser of a query (exactly but for the
 * eps term) and depends on nothing outside its own row, which keeps the
 * causal, chunked and recurrent forms exact:
 *   queries: every feature of a row is divided by the row's largest, so it
 *            lies in (0, 1/sqrt(m)] and the largest is exactly 1/sqrt(m);
 *            the |u|^2 / 2 term, constant along the row, goes with it.
 *   keys:    one constant of W, max(0, max_r |w_r|^2 / 2 - FAVOR_KEY_EXP_MAX),
 *            is taken off every exponent, so key features stay below
 *            e^FAVOR_KEY_EXP_MAX / sqrt(m) whatever the key. A key-dependent
 *            shift would not cancel (it reweights keys), and a maximum over
 *            keys would look at later positions. */
#include <math.h>
#include <string.h>


#include "attn/attn_internal.h"
#include "core/gemm.h"
#include "core/kernels.h"
#include "core/rng.h"

/* e^60 = 1.1e26: sums of 2^20 keys' features times values up to 1e4 stay
 * near 1e36, below FLT_MAX (3.4e38). The shift it implies is 0 unless some
 * row has |w_r|^2 > 120, which Gaussian rows (|w|^2 ~ chi-square with D
 * degrees of freedom) reach only for D around 100 and above. */
#define FAVOR_KEY_EXP_MAX 60.0

/* Mixed into the seed so FAVOR+'s draws are a stream of their own, apart
 * from any other draw keyed by (seed, layer). */
#define FAVOR_SEED_TAG 0x464156f52b2b0001ull

/* ---- element-wise maps ---- */

/* The maps and their slopes, branch-free (choices on bit patterns, see
 * lt_exp_nonpositive) so that loops over them vectorise. */

/* all ones when x > 0, else 0 */
static inline int32_t positive_mask(float x)
{
    lt_float_bits b = {.value = x};
    return -(b.bits > 0);
}

/* mask ? a : b, with mask all ones or all zeros */
static inline float select_float(int32_t mask, float a, float b)
{
    lt_float_bits fa = {.value = a}, fb = {.value = b}, out;
    out.bits = (fa.bits & mask) | (fb.bits & ~mask);
    return out.value;
}

/* elu(x) + 1 = x + 1 for x > 0, e^x otherwise */
static inline float elu_plus_one(float x)
{
    float e = lt_exp_nonpositive(select_float(positive_mask(x), 0.0f, x));
    return select_float(positive_mask(x), x + 1.0f, e);
}
static inline float relu(float x) { return select_float(positive_mask(x), x, 0.0f); }
static inline float relu_slope(float x) { return select_float(positive_mask(x), 1.0f, 0.0f); }

/* out[i] = phi(x[i]) for n elements; one plain loop per map, so each
 * vectorises (at the kernel set's width: core/kernels.h). */
static inline __attribute__((always_inline)) void
attn_phi_elementwise_body(lt_feature_map map, float *restrict out, const float *restrict x,
                          size_t n)
{
    switch (map) {
    case LT_FEATURE_ELU:
        for (size_t i = 0; i < n; i++)
            out[i] = elu_plus_one(x[i]);
        break;
    case LT_FEATURE_RELU:
        for (size_t i = 0; i < n; i++)
            out[i] = relu(x[i]);
        break;
    case LT_FEATURE_IDENTITY: memcpy(out, x, n * sizeof(float)); break;
    default: LT_ASSERT(!"not an element-wise feature map");
    }
}
LT_PER_KERNEL_SET(, attn_phi_elementwise,
                  (lt_feature_map map, float *restrict out, const float *restrict x, size_t n),
                  (map, out, x, n))

/* dx[i] += dphi[i] * phi'(x[i]), given the features f[i] = phi(x[i]): elu's
 * slope is 1 or e^x = f, so no exponential is taken again. */
static inline __attribute__((always_inline)) void
elementwise_backprop_body(lt_feature_map map, float *restrict dx, const float *restrict dphi,
                          const float *restrict x, const float *restrict f, size_t n)
{
    switch (map) {
    case LT_FEATURE_ELU:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i] * select_float(positive_mask(x[i]), 1.0f, f[i]);
        break;
    case LT_FEATURE_RELU:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i] * relu_slope(x[i]);
        break;
    case LT_FEATURE_IDENTITY:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i];
        break;
    default: LT_ASSERT(!"not an element-wise feature map");
    }
}
LT_PER_KERNEL_SET(static, elementwise_backprop,
                  (lt_feature_map map, float *restrict dx, const float *restrict dphi,
                   const float *restrict x, const float *restrict f, size_t n),
                  (map, dx, dphi, x, f, n))

void attn_phi_elementwise_backprop_rows(lt_feature_map map, float *dx, const float *dphi,
                                        const float *x, const float *phi, int rows, int D)
{
    for (int r = 0; r < rows; r++)
        elementwise_backprop(map, dx + (size_t)r * D, dphi, x + (size_t)r * D,
                             phi + (size_t)r * D, (size_t)D);
}

int attn_features_elementwise(lt_feature_map map)
{
    return map == LT_FEATURE_ELU || map == LT_FEATURE_RELU || map == LT_FEATURE_IDENTITY;
}

int attn_feature_dim(const lt_attn_config *config, int D)
{
    switch (config->feature_map) {
    case LT_FEATURE_FAVOR: return config->random_features;
    case LT_FEATURE_TAYLOR: return 1 + D + D * D;
    default: return D;
    }
}

/* ---- FAVOR+ ---- */

size_t attn_features_floats(const lt_attn_config *config, int D)
{
    if (config->feature_map != LT_FEATURE_FAVOR)
        return 0;
    return (size_t)config->random_features * D + 1; /* W, then the key shift */
}

/* D^(-1/4): u = x D^(-1/4), so u_q . u_k = q . k / sqrt(D). */
static float quarter_scale(int D) { return (float)pow((double)D, -0.25); }

/* Rows [first, first + rows) of W (rows <= D): orthonormal directions from
 * a Gram-Schmidt pass over Gaussian rows (sums in double, in place), each
 * then scaled by the length of another Gaussian D-vector, so a row's
 * length is distributed as a Gaussian row's (the unbiased variant of
 * orthogonal random features). */
static void favor_block(float *W, int first, int rows, int D, lt_rng *rng)
{
    float *block = W + (size_t)first * D;
    for (int r = 0; r < rows; r++) {
        float *row = block + (size_t)r * D;
        for (int d = 0; d < D; d++)
            row[d] = (float)lt_rng_normal(rng);
        for (int pass = 0; pass < 2; pass++) /* twice is enough (Kahan) */
            for (int p = 0; p < r; p++) {
                const float *earlier = block + (size_t)p * D;
                double along = 0;
                for (int d = 0; d < D; d++)
                    along += (double)row[d] * earlier[d];
                for (int d = 0; d < D; d++)
                    row[d] = (float)(row[d] - along * earlier[d]);
            }
        double norm = 0;
        for (int d = 0; d < D; d++)
            norm += (double)row[d] * row[d];
        LT_ASSERT(norm > 0); /* a Gaussian row in the span of the others has probability 0 */
        for (int d = 0; d < D; d++)
            row[d] = (float)(row[d] / sqrt(norm));
    }
    for (int r = 0; r < rows; r++) {
        double length = 0;
        for (int d = 0; d < D; d++) {
            double g = lt_rng_normal(rng);
            length += g * g;
        }
        length = sqrt(length);
        for (int d = 0; d < D; d++)
            block[(size_t)r * D + d] = (float)(block[(size_t)r * D + d] * length);
    }
}

void attn_features_draw(float *block, const lt_attn_config *config, int D, uint64_t seed,
                        int layer)
{
    if (config->feature_map != LT_FEATURE_FAVOR)
        return;
    const int m = config->random_features;
    lt_rng rng;
    lt_rng_seed(&rng, seed ^ FAVOR_SEED_TAG, (uint64_t)(uint32_t)layer);
    for (int first = 0; first < m; first += D)
        favor_block(block, first, m - first < D ? m - first : D, D, &rng);
    double longest = 0;
    for (int r = 0; r < m; r++) {
        double sq = 0;
        for (int d = 0; d < D; d++)
            sq += (double)block[(size_t)r * D + d] * block[(size_t)r * D + d];
        longest = sq > longest ? sq : longest;
    }
    double shift = longest / 2 - FAVOR_KEY_EXP_MAX;
    block[(size_t)m * D] = (float)(shift > 0 ? shift : 0);
}

attn_features attn_features_of(const lt_attn_config *config, int D, const float *block)
{
    attn_features fx = {config->feature_map, D, attn_feature_dim(config, D), NULL};
    if (config->feature_map == LT_FEATURE_FAVOR) {
        LT_ASSERT(block != NULL);
        fx.W = block;
    }
    return fx;
}

static float sum_of_squares(const float *x, int n)
{
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        sum += x[i] * x[i];
    return sum;
}

/* out (rows, m) = phi(x (rows, D)): the projections x W^T D^(-1/4) by one
 * GEMM, then the exponentials in place. */
static void favor_apply(const attn_features *fx, float *out, const float *x, int rows,
                        attn_role role)
{
    const int D = fx->D, m = fx->F;
    const float s = quarter_scale(D), inv_sqrt_m = (float)(1.0 / sqrt((double)m));
    const float key_shift = fx->W[(size_t)m * D];
    lt_sgemm_serial(LT_N, LT_T, rows, m, D, s, x, D, fx->W, D, 0.0f,
                out, m);
    for (int r = 0; r < rows; r++) {
        float *f = out + (size_t)r * m;
        if (role == ATTN_QUERY) {
            float top = f[0];
            for (int i = 1; i < m; i++)
                top = f[i] > top ? f[i] : top;
            for (int i = 0; i < m; i++)
                f[i] = lt_exp_nonpositive(f[i] - top) * inv_sqrt_m;
        } else {
            float half_sq = 0.5f * s * s * sum_of_squares(x + (size_t)r * D, D);
            for (int i = 0; i < m; i++)
                f[i] = expf(f[i] - half_sq - key_shift) * inv_sqrt_m;
        }
    }
}

/* dx += J^T dphi. With g_i = dphi_i f_i: for keys df_i/du = f_i (w_i - u),
 * so du = W^T g - (sum g) u; for queries the row's largest projection w_*
 * . u is subtracted instead of |u|^2 / 2, so du = W^T g - (sum g) w_*. w_*
 * is the first row whose feature is the row's largest (1/sqrt(m) exactly,
 * unless projections tie to the last bit; then any of them is a valid
 * derivative, and the shift's effect on the output is eps-sized anyway). */
static void favor_backprop(const attn_features *fx, float *dx, float *dphi, const float *x,
                           const float *phi, int rows, attn_role role)
{
    const int D = fx->D, m = fx->F;
    const float s = quarter_scale(D);
    for (size_t i = 0; i < (size_t)rows * m; i++)
        dphi[i] *= phi[i]; /* g */
    lt_sgemm_serial(LT_N, LT_N, rows, D, m, s, dphi, m, fx->W, D, 1.0f,
                dx, D);
    for (int r = 0; r < rows; r++) {
        const float *g = dphi + (size_t)r * m, *f = phi + (size_t)r * m;
        float *d = dx + (size_t)r * D;
        float sum = 0.0f;
        for (int i = 0; i < m; i++)
            sum += g[i];
        if (role == ATTN_QUERY) {
            int top = 0;
            for (int i = 1; i < m; i++)
                top = f[i] > f[top] ? i : top;
            const float *w = fx->W + (size_t)top * D;
            for (int i = 0; i < D; i++)
                d[i] -= s * sum * w[i];
        } else {
            const float *xr = x + (size_t)r * D;
            for (int i = 0; i < D; i++)
                d[i] -= s * sum * (s * xr[i]);
        }
    }
}

/* ---- second-order Taylor ---- */

/* phi(x) = [1, a x, b vec(x x^T)] with a = D^(-1/4), b = 1 / sqrt(2 D). */
static float taylor_b(int D) { return (float)(1.0 / sqrt(2.0 * D)); }

static void taylor_apply(const attn_features *fx, float *out, const float *x, int rows)
{
    const int D = fx->D, F = fx->F;
    const float a = quarter_scale(D), b = taylor_b(D);
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * D;
        float *f = out + (size_t)r * F, *outer = f + 1 + D;
        f[0] = 1.0f;
        for (int i = 0; i < D; i++)
            f[1 + i] = a * xr[i];
        for (int i = 0; i < D; i++) {
            float bx = b * xr[i];
            for (int j = 0; j < D; j++)
                outer[(size_t)i * D + j] = bx * xr[j];
        }
    }
}

/* dx_k += a dphi_k + b sum_j (dphi_kj + dphi_jk) x_j */
static void taylor_backprop(const attn_features *fx, float *dx, const float *dphi,
                            const float *x, int rows)
{
    const int D = fx->D, F = fx->F;
    const float a = quarter_scale(D), b = taylor_b(D);
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * D, *g = dphi + (size_t)r * F;
        const float *outer = g + 1 + D;
        float *d = dx + (size_t)r * D;
        for (int k = 0; k < D; k++) {
            float sum = 0.0f;
            for (int j = 0; j < D; j++)
                sum += (outer[(size_t)k * D + j] + outer[(size_t)j * D + k]) * xr[j];
            d[k] += a * g[1 + k] + b * sum;
        }
    }
}

/* ---- any map ---- */

void attn_phi(const attn_features *fx, float *out, const float *x, int rows, attn_role role)
{
    switch (fx->map) {
    case LT_FEATURE_FAVOR: favor_apply(fx, out, x, rows, role); break;
    case LT_FEATURE_TAYLOR: taylor_apply(fx, out, x, rows); break;
    default: attn_phi_elementwise(fx->map, out, x, (size_t)rows * fx->D); break;
    }
}

void attn_phi_backprop(const attn_features *fx, float *dx, float *dphi, const float *x,
                       const float *phi, int rows, attn_role role)
{
    switch (fx->map) {
    case LT_FEATURE_FAVOR: favor_backprop(fx, dx, dphi, x, phi, rows, role); break;
    case LT_FEATURE_TAYLOR: taylor_backprop(fx, dx, dphi, x, rows); break;
    default: elementwise_backprop(fx->map, dx, dphi, x, phi, (size_t)rows * fx->D); break;
    }
}
