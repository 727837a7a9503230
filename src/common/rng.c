#include "dplace/common.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void dp_rng_seed(dp_rng *rng, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
}

uint64_t dp_rng_next_u64(dp_rng *rng) {
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double dp_rng_uniform(dp_rng *rng) {
    return (double)(dp_rng_next_u64(rng) >> 11) * 0x1.0p-53;
}

uint64_t dp_rng_below(dp_rng *rng, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* reject the biased tail */
    uint64_t x;
    do {
        x = dp_rng_next_u64(rng);
    } while (x >= limit);
    return x % n;
}

double dp_rng_normal_of(double u1, double u2) {
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double dp_rng_normal(dp_rng *rng) {
    double u1 = dp_rng_uniform(rng);
    double u2 = dp_rng_uniform(rng);
    return dp_rng_normal_of(u1, u2);
}
