/* The model list of a bench that reproduces a paper's tables: every model
 * of the paper, or those named on the command line (argv[2..]). One reader
 * for bench_eagle and bench_mars_tables. */
#ifndef DPLACE_BENCH_MODELS_H
#define DPLACE_BENCH_MODELS_H

#include <stdio.h>
#include <string.h>

/* Sets use[m] for each of the n names asked for (all of them when argv
 * names none); returns 0, or 2 after saying on stderr that `prog` knows no
 * such model (its paper's models: `known`). */
static inline int bench_models_pick(const char *prog, const char *known, const char *const *names, int n, int argc,
                                    char **argv, int *use) {
    for (int m = 0; m < n; m++) use[m] = argc <= 2;
    for (int i = 2; i < argc; i++) {
        int found = 0;
        for (int m = 0; m < n; m++)
            if (strcmp(argv[i], names[m]) == 0) use[m] = found = 1;
        if (!found) {
            fprintf(stderr, "%s: model %s is not one of %s\n", prog, argv[i], known);
            return 2;
        }
    }
    return 0;
}

#endif
