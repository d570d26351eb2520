/* The phone set of the speech corpus and the fold from espeak-ng's English
 * phoneme mnemonics to it.
 *
 * The set is the 39 phonemes of the CMU pronouncing dictionary (the TIMIT
 * 39-phone folding of Lee & Hon without its silence class), written in
 * TIMIT's lower case. espeak-ng's eight English voices use about 80
 * mnemonics (phsource/ph_english and its accent tables); each maps to one
 * phone by its sound in the CMU (US) dictionary:
 *   reduced vowels (schwas @ @2 @5 @# @- a# a#2 0# and V) -> ah,
 *   r-coloured vowels (3 3: IR VR) -> er, centring diphthongs keep their
 *   first part (i@ -> iy, e@ -> eh, U@ -> uh, aI@ -> ay, aU@ -> aw),
 *   rhotic-context vowels (A@ O@ o@) -> aa/ao, the bath vowel aa -> ae,
 *   syllabic consonants (@L n-) -> l n, allophones of t d z l r w (t# t2 t[
 *   d# z# z/2 l/2 r- w#) -> t d z l r w, Scottish x -> k, the nasal
 *   loan-word vowels A~ O~ -> aa ao.
 * Dropped (no phone): pauses (every name starting with '_'), the glottal
 * stop '?' (TIMIT's q is dropped too) and the linking marker ';'. Stress and
 * length are already absent from phoneme events ("i:" is one mnemonic). */
#include <string.h>

#include "datasets/speech.h"

static const char *const phone_names[LT_SPEECH_PHONES] = {
    "aa", "ae", "ah", "ao", "aw", "ay", "b",  "ch", "d",  "dh", "eh", "er", "ey",
    "f",  "g",  "hh", "ih", "iy", "jh", "k",  "l",  "m",  "n",  "ng", "ow", "oy",
    "p",  "r",  "s",  "sh", "t",  "th", "uh", "uw", "v",  "w",  "y",  "z",  "zh",
};

typedef struct fold_entry {
    const char *espeak;
    const char *phone;
} fold_entry;

static const fold_entry fold_table[] = {
    /* consonants */
    {"p", "p"}, {"b", "b"}, {"t", "t"}, {"t#", "t"}, {"t2", "t"}, {"t[", "t"},
    {"d", "d"}, {"d#", "d"}, {"d[", "d"}, {"k", "k"}, {"x", "k"}, {"g", "g"},
    {"f", "f"}, {"v", "v"}, {"T", "th"}, {"D", "dh"}, {"s", "s"}, {"z", "z"},
    {"z#", "z"}, {"z/2", "z"}, {"S", "sh"}, {"Z", "zh"}, {"h", "hh"}, {"tS", "ch"},
    {"dZ", "jh"}, {"m", "m"}, {"n", "n"}, {"n-", "n"}, {"N", "ng"}, {"l", "l"},
    {"l/2", "l"}, {"@L", "l"}, {"r", "r"}, {"r-", "r"}, {"w", "w"}, {"w#", "w"},
    {"j", "y"},
    /* vowels */
    {"@", "ah"}, {"@2", "ah"}, {"@5", "ah"}, {"@#", "ah"}, {"@-", "ah"},
    {"a#", "ah"}, {"a#2", "ah"}, {"0#", "ah"}, {"V", "ah"},
    {"3", "er"}, {"3:", "er"}, {"IR", "er"}, {"VR", "er"},
    {"a", "ae"}, {"a2", "ae"}, {"aa", "ae"}, {"a/", "ae"},
    {"A:", "aa"}, {"A@", "aa"}, {"A#", "aa"}, {"A~", "aa"}, {"0", "aa"}, {"02", "aa"},
    {"O:", "ao"}, {"O", "ao"}, {"O2", "ao"}, {"O@", "ao"}, {"o@", "ao"}, {"O~", "ao"},
    {"E", "eh"}, {"E#", "eh"}, {"E2", "eh"}, {"e#", "eh"}, {"e@", "eh"},
    {"I", "ih"}, {"I2", "ih"}, {"I#", "ih"}, {"I2#", "ih"},
    {"i", "iy"}, {"i:", "iy"}, {"i@", "iy"}, {"i@3", "iy"},
    {"U", "uh"}, {"U@", "uh"}, {"u:", "uw"}, {"u", "uw"},
    {"eI", "ey"}, {"e:", "ey"}, {"aI", "ay"}, {"aI2", "ay"}, {"aI3", "ay"}, {"aI@", "ay"},
    {"aU", "aw"}, {"aU@", "aw"}, {"oU", "ow"}, {"oU#", "ow"}, {"o:", "ow"}, {"OI", "oy"},
};

int lt_speech_phone_count(void)
{
    return LT_SPEECH_PHONES;
}

const char *lt_speech_phone_name(int id)
{
    return id >= 0 && id < LT_SPEECH_PHONES ? phone_names[id] : NULL;
}

static int phone_id(const char *name)
{
    for (int i = 0; i < LT_SPEECH_PHONES; i++)
        if (strcmp(phone_names[i], name) == 0)
            return i;
    return LT_SPEECH_PHONE_UNKNOWN;
}

int lt_speech_phone_fold(const char *espeak_name)
{
    if (espeak_name[0] == '_' || strcmp(espeak_name, "?") == 0 || strcmp(espeak_name, ";") == 0)
        return LT_SPEECH_PHONE_DROP;
    for (size_t i = 0; i < sizeof fold_table / sizeof fold_table[0]; i++)
        if (strcmp(fold_table[i].espeak, espeak_name) == 0) {
            int id = phone_id(fold_table[i].phone);
            LT_ASSERT(id >= 0); /* every target is in phone_names */
            return id;
        }
    return LT_SPEECH_PHONE_UNKNOWN;
}

void lt_speech_phone_histogram(long *counts, const lt_speech_split *s)
{
    memset(counts, 0, sizeof(long) * LT_SPEECH_PHONES);
    for (int u = 0; u < s->count; u++)
        for (int i = 0; i < s->utts[u].n_phones; i++)
            counts[s->utts[u].phones[i]]++;
}
