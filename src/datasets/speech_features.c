/* Log-mel filterbank features, the recipe of Kaldi's fbank at espeak-ng's
 * 22050 Hz:
 *   frames     a 25 ms window (551 samples) every 10 ms; frame t starts at
 *              sample floor(t * 220.5), so the hop is exactly 10 ms on
 *              average although 220.5 samples is not whole
 *   per frame  DC removal, pre-emphasis 0.97, Hamming window, zero padding to
 *              1024, power spectrum (FFTW, single precision)
 *   filters    40 triangles equally spaced on the mel scale (1127 ln(1 + f/700))
 *              from 20 Hz to the Nyquist frequency 11025 Hz
 *   log        of the energy floored at 1e-6 (samples scaled to [-1, 1)),
 *              about the level of 16-bit quantisation noise in a filter, so
 *              espeak's exact digital silence gets a finite value
 *   normalise  per utterance, each coefficient to zero mean and unit variance
 * Single-threaded: an utterance takes about a millisecond, far less than
 * synthesising it, and a fixed order of sums keeps the bytes reproducible. */
#include <fftw3.h>
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "datasets/speech_internal.h"

#define BINS (LT_SPEECH_FFT / 2 + 1)
#define LOW_HZ 20.0
#define PREEMPH 0.97f
#define ENERGY_FLOOR 1e-6

struct lt_speech_fbank {
    fftwf_plan plan;
    float *frame;         /* (LT_SPEECH_FFT) */
    fftwf_complex *spec;  /* (BINS) */
    float *power;         /* (BINS) */
    float *window;        /* (LT_SPEECH_WINDOW) */
    float *weights;       /* (LT_SPEECH_MELS, BINS), zero outside [lo, hi) */
    int lo[LT_SPEECH_MELS];
    int hi[LT_SPEECH_MELS];
    double *mean;         /* (LT_SPEECH_MELS) per-coefficient mean */
    double *inv_std;      /* (LT_SPEECH_MELS) spread, then 1 / std */
};

static double mel_of(double hz)
{
    return 1127.0 * log(1.0 + hz / 700.0);
}

static void design_filters(lt_speech_fbank *fb)
{
    const double lo_mel = mel_of(LOW_HZ);
    const double hi_mel = mel_of(LT_SPEECH_SAMPLE_RATE / 2.0);
    const double step = (hi_mel - lo_mel) / (LT_SPEECH_MELS + 1);
    memset(fb->weights, 0, sizeof(float) * LT_SPEECH_MELS * BINS);
    for (int m = 0; m < LT_SPEECH_MELS; m++) {
        double left = lo_mel + m * step, center = left + step, right = center + step;
        fb->lo[m] = BINS;
        fb->hi[m] = 0;
        for (int k = 0; k < BINS; k++) {
            double mel = mel_of((double)k * LT_SPEECH_SAMPLE_RATE / LT_SPEECH_FFT);
            double w = 0;
            if (mel > left && mel <= center)
                w = (mel - left) / (center - left);
            else if (mel > center && mel < right)
                w = (right - mel) / (right - center);
            if (w > 0) {
                fb->weights[m * BINS + k] = (float)w;
                if (k < fb->lo[m])
                    fb->lo[m] = k;
                fb->hi[m] = k + 1;
            }
        }
        /* 1024 points give 21.5 Hz bins; the narrowest filter spans ~100 Hz. */
        LT_ASSERT(fb->hi[m] > fb->lo[m]);
    }
}

lt_status lt_speech_fbank_create(lt_speech_fbank **out)
{
    *out = NULL;
    lt_speech_fbank *fb;
    LT_TRY(lt_mem_calloc((void **)&fb, sizeof *fb, "speech filterbank"));
    lt_status st = lt_mem_calloc((void **)&fb->frame, sizeof(float) * LT_SPEECH_FFT, "fft frame");
    if (st == LT_OK)
        st = lt_mem_calloc((void **)&fb->spec, sizeof(fftwf_complex) * BINS, "fft spectrum");
    if (st == LT_OK)
        st = lt_mem_alloc((void **)&fb->power, sizeof(float) * BINS, "power spectrum");
    if (st == LT_OK)
        st = lt_mem_alloc((void **)&fb->window, sizeof(float) * LT_SPEECH_WINDOW, "window");
    if (st == LT_OK)
        st = lt_mem_alloc((void **)&fb->weights, sizeof(float) * LT_SPEECH_MELS * BINS,
                          "mel weights");
    if (st == LT_OK)
        st = lt_mem_alloc((void **)&fb->mean, sizeof(double) * LT_SPEECH_MELS, "mel sums");
    if (st == LT_OK)
        st = lt_mem_alloc((void **)&fb->inv_std, sizeof(double) * LT_SPEECH_MELS, "mel sums");
    if (st != LT_OK) {
        lt_speech_fbank_free(fb);
        return st;
    }
    /* FFTW_ESTIMATE: MEASURE would time candidate algorithms and could pick
     * a different one per run, changing the last bits of the features. The
     * plan's arrays are 64-byte aligned like every tracked block, so
     * executing it on them again is valid. */
    fb->plan = fftwf_plan_dft_r2c_1d(LT_SPEECH_FFT, fb->frame, fb->spec, FFTW_ESTIMATE);
    if (fb->plan == NULL) {
        lt_speech_fbank_free(fb);
        return lt_fail(LT_E_INTERNAL, "FFTW could not plan a %d-point real transform",
                       LT_SPEECH_FFT);
    }
    for (int i = 0; i < LT_SPEECH_WINDOW; i++)
        fb->window[i] = (float)(0.54 - 0.46 * cos(2.0 * M_PI * i / (LT_SPEECH_WINDOW - 1)));
    design_filters(fb);
    *out = fb;
    return LT_OK;
}

void lt_speech_fbank_free(lt_speech_fbank *fb)
{
    if (fb == NULL)
        return;
    if (fb->plan != NULL)
        fftwf_destroy_plan(fb->plan);
    lt_mem_free(fb->frame);
    lt_mem_free(fb->spec);
    lt_mem_free(fb->power);
    lt_mem_free(fb->window);
    lt_mem_free(fb->weights);
    lt_mem_free(fb->mean);
    lt_mem_free(fb->inv_std);
    lt_mem_free(fb);
}

/* Frame t starts at floor(441 t / 2): 10 ms of 22050 Hz samples. */
static long frame_start(long t)
{
    return t * (LT_SPEECH_SAMPLE_RATE / 50) / 2;
}

long lt_speech_frame_count(long n)
{
    /* The last t with floor(441 t / 2) + WINDOW <= n, that is
     * 441 t < 2 (n - WINDOW + 1), plus one. */
    if (n < LT_SPEECH_WINDOW)
        return 0;
    return (2 * (n - LT_SPEECH_WINDOW + 1) - 1) / (LT_SPEECH_SAMPLE_RATE / 50) + 1;
}

void lt_speech_fbank_log_mel(lt_speech_fbank *fb, float *out, const int16_t *x)
{
    float *f = fb->frame;
    double mean = 0;
    for (int i = 0; i < LT_SPEECH_WINDOW; i++) {
        f[i] = (float)x[i] / 32768.0f;
        mean += f[i];
    }
    mean /= LT_SPEECH_WINDOW;
    for (int i = 0; i < LT_SPEECH_WINDOW; i++)
        f[i] -= (float)mean;
    for (int i = LT_SPEECH_WINDOW - 1; i > 0; i--)
        f[i] -= PREEMPH * f[i - 1];
    f[0] -= PREEMPH * f[0];
    for (int i = 0; i < LT_SPEECH_WINDOW; i++)
        f[i] *= fb->window[i];
    memset(f + LT_SPEECH_WINDOW, 0, sizeof(float) * (LT_SPEECH_FFT - LT_SPEECH_WINDOW));
    fftwf_execute_dft_r2c(fb->plan, f, fb->spec);
    for (int k = 0; k < BINS; k++)
        fb->power[k] = fb->spec[k][0] * fb->spec[k][0] + fb->spec[k][1] * fb->spec[k][1];
    for (int m = 0; m < LT_SPEECH_MELS; m++) {
        const float *w = fb->weights + m * BINS;
        double e = 0;
        for (int k = fb->lo[m]; k < fb->hi[m]; k++)
            e += (double)w[k] * fb->power[k];
        out[m] = (float)log(e > ENERGY_FLOOR ? e : ENERGY_FLOOR);
    }
}

void lt_speech_fbank_compute(lt_speech_fbank *fb, float *out, const int16_t *samples, long n)
{
    const long frames = lt_speech_frame_count(n);
    for (long t = 0; t < frames; t++)
        lt_speech_fbank_log_mel(fb, out + t * LT_SPEECH_MELS, samples + frame_start(t));
    /* Two passes (mean, then spread) to keep the variance exact enough to
     * tell a coefficient stuck at the floor from a varying one. */
    double *mean = fb->mean, *inv_std = fb->inv_std;
    memset(mean, 0, sizeof(double) * LT_SPEECH_MELS);
    memset(inv_std, 0, sizeof(double) * LT_SPEECH_MELS);
    if (frames == 0)
        return;
    for (long t = 0; t < frames; t++)
        for (int m = 0; m < LT_SPEECH_MELS; m++)
            mean[m] += out[t * LT_SPEECH_MELS + m];
    for (int m = 0; m < LT_SPEECH_MELS; m++)
        mean[m] /= frames;
    for (long t = 0; t < frames; t++)
        for (int m = 0; m < LT_SPEECH_MELS; m++) {
            double d = out[t * LT_SPEECH_MELS + m] - mean[m];
            inv_std[m] += d * d;
        }
    for (int m = 0; m < LT_SPEECH_MELS; m++) {
        double var = inv_std[m] / frames;
        /* A coefficient with no spread (all at the floor) becomes 0. */
        inv_std[m] = var > 1e-12 ? 1.0 / sqrt(var) : 0.0;
    }
    for (long t = 0; t < frames; t++)
        for (int m = 0; m < LT_SPEECH_MELS; m++) {
            float *v = out + t * LT_SPEECH_MELS + m;
            *v = (float)((*v - mean[m]) * inv_std[m]);
        }
}
