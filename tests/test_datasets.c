#include <criterion/criterion.h>

#include "datasets/copy.h"

Test(copy_task, layout_and_mask)
{
    lt_copy_task task;
    cr_assert_eq(lt_copy_task_init(&task, 128), LT_OK);
    cr_assert_eq(task.n_lo, 32);
    cr_assert_eq(task.n_hi, 63);
    enum { B = 64, N = 128 };
    static int32_t x[B * N], y[B * N];
    static float m[B * N];
    lt_copy_batch(&task, 5, 0, B, x, y, m);
    int seen_lengths[64] = {0};
    for (int b = 0; b < B; b++) {
        const int32_t *s = x + b * N;
        int n = 0;
        while (s[n] != LT_COPY_SEPARATOR)
            n++;
        cr_assert(n >= 32 && n < 63, "prefix length %d", n);
        seen_lengths[n] = 1;
        for (int i = 0; i < n; i++) {
            cr_assert(s[i] >= 1 && s[i] <= 10);
            cr_assert_eq(s[n + 1 + i], s[i], "copy differs at %d", i);
        }
        for (int i = 2 * n + 1; i < N; i++)
            cr_assert_eq(s[i], LT_COPY_PAD);
        int masked = 0;
        for (int i = 0; i < N; i++) {
            cr_assert_eq(y[b * N + i], i + 1 < N ? s[i + 1] : LT_COPY_PAD);
            if (m[b * N + i] != 0) {
                masked++;
                cr_assert(i + 1 >= n + 1 && i + 1 <= 2 * n, "mask outside the copy at %d", i);
            }
        }
        cr_assert_eq(masked, n, "the loss covers exactly the n copied symbols");
    }
    int distinct = 0;
    for (int n = 0; n < 64; n++)
        distinct += seen_lengths[n];
    cr_assert_gt(distinct, 10, "prefix lengths vary");
}

Test(copy_task, batches_depend_only_on_seed_and_stream)
{
    lt_copy_task task;
    cr_assert_eq(lt_copy_task_init(&task, 40), LT_OK);
    int32_t x1[3 * 40], y1[3 * 40], x2[40], y2[40];
    float m1[3 * 40], m2[40];
    lt_copy_batch(&task, 9, 100, 3, x1, y1, m1);
    lt_copy_batch(&task, 9, 102, 1, x2, y2, m2); /* the third sequence alone */
    for (int i = 0; i < 40; i++)
        cr_assert_eq(x1[2 * 40 + i], x2[i]);
    lt_copy_batch(&task, 10, 100, 1, x2, y2, m2);
    int differs = 0;
    for (int i = 0; i < 40; i++)
        differs |= x1[i] != x2[i];
    cr_assert(differs, "another seed gives other data");
}

Test(copy_task, rejects_short_sequences)
{
    lt_copy_task task;
    cr_assert_eq(lt_copy_task_init(&task, 7), LT_E_USAGE);
    cr_assert_eq(lt_copy_task_init(&task, 8), LT_OK);
    cr_assert_lt(task.n_lo, task.n_hi);
}
