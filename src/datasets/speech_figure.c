#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/process.h"
#include "datasets/speech.h"
#include "io/atomic.h"
#include "io/png.h"

lt_status lt_speech_figure(const char *dir, const char *name, const lt_utterance *u,
                           const char *model, const int32_t *decoded, int n_decoded)
{
    char ref[4096] = "", hyp[4096] = "", path[4400], dat[4500], gp[4500];
    for (int i = 0; i < u->n_phones; i++)
        snprintf(ref + strlen(ref), sizeof ref - strlen(ref), "%s%s", i ? " " : "",
                 lt_speech_phone_name(u->phones[i]));
    for (int i = 0; i < n_decoded; i++)
        snprintf(hyp + strlen(hyp), sizeof hyp - strlen(hyp), "%s%s", i ? " " : "",
                 lt_speech_phone_name(decoded[i]));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(dat, sizeof dat, "%s.dat", path);
    snprintf(gp, sizeof gp, "%s.gp", path);
    lt_atomic_file f;
    LT_TRY(lt_atomic_open(&f, dat));
    for (int m = 0; m < LT_SPEECH_MELS; m++) {
        for (int t = 0; t < u->frames; t++)
            fprintf(f.f, "%s%.4g", t ? " " : "",
                    (double)u->features[(size_t)t * LT_SPEECH_MELS + m]);
        fputc('\n', f.f);
    }
    LT_TRY(lt_atomic_commit(&f));
    LT_TRY(lt_atomic_open(&f, gp));
    fprintf(f.f,
            "# ltbench speech: test utterance 0, %d frames of %d log-mel energies\n"
            "set terminal pngcairo size 1200,420 font ',10'\n"
            "set output '%s.png'\n"
            "set title \"\\\"%s\\\"\\nreference: %s\\n%s: %s\" noenhanced\n"
            "set xlabel 'frame (10 ms)'\nset ylabel 'mel bin'\nunset key\n"
            "set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\n"
            "plot '%s' matrix with image\n",
            u->frames, LT_SPEECH_MELS, name, u->text, ref, model, hyp, u->frames - 1,
            LT_SPEECH_MELS - 1, strrchr(dat, '/') ? strrchr(dat, '/') + 1 : dat);
    LT_TRY(lt_atomic_commit(&f));
    char gnuplot[4096], script[160];
    snprintf(script, sizeof script, "%s.gp", name);
    const char *argv[] = {gnuplot, script, NULL};
    if (lt_process_find("gnuplot", gnuplot, sizeof gnuplot) &&
        lt_process_run(argv, dir) == 0)
        return LT_OK;
    /* no gnuplot: the features as gray levels, the phones as text */
    uint8_t *img;
    LT_TRY(lt_mem_alloc((void **)&img, (size_t)u->frames * LT_SPEECH_MELS, "utterance image"));
    for (int m = 0; m < LT_SPEECH_MELS; m++)
        for (int t = 0; t < u->frames; t++) {
            double x = u->features[(size_t)t * LT_SPEECH_MELS + m];
            double g = 128 + 40 * x;
            img[(size_t)(LT_SPEECH_MELS - 1 - m) * u->frames + t] =
                (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
        }
    char png[4500];
    snprintf(png, sizeof png, "%s.png", path);
    lt_status status = lt_png_write(png, img, u->frames, LT_SPEECH_MELS, 1);
    lt_mem_free(img);
    LT_TRY(status);
    snprintf(dat, sizeof dat, "%s.txt", path);
    LT_TRY(lt_atomic_open(&f, dat));
    fprintf(f.f, "text: %s\nreference: %s\n%s: %s\n", u->text, ref, model, hyp);
    fprintf(stderr, "note: gnuplot is not installed (Debian: gnuplot-nox); %s.png has no "
                    "labels, the phones are in %s\n",
            name, dat);
    return lt_atomic_commit(&f);
}

