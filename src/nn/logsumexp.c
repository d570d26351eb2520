#include "nn/logsumexp.h"

#include <math.h>

double lt_logsumexp(const float *z, int n)
{
    float m = z[0];
    for (int i = 1; i < n; i++)
        if (z[i] > m)
            m = z[i];
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += exp((double)z[i] - m);
    return m + log(sum);
}
