/* The settings table and the presets as data (include/dplace/settings_job.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/agent.h"
#include "dplace/settings_job.h"
#include "test_util.h"

/* Every row has a unique name, a help line longer than its name, a group,
 * and its base value within its range. */
static void test_table_rows(void) {
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    CHECK(n > 40);
    dp_settings base;
    dp_settings_base(&base);
    dp_error err;
    CHECK(dp_settings_check_target(DP_SETTING_AGENT, &base.agent, &err) == DP_STATUS_OK);
    CHECK(dp_settings_check_target(DP_SETTING_SEARCH, &base.search, &err) == DP_STATUS_OK);
    for (int32_t k = 0; k < n; k++) {
        TEST_CASE("setting %s", t[k].name);
        CHECK(t[k].help && strlen(t[k].help) > strlen(t[k].name));
        CHECK((unsigned)t[k].group < DP_SETTING_GROUP_COUNT);
        CHECK(dp_settings_find(t[k].name) == &t[k]);
        for (int32_t j = 0; j < k; j++) CHECK(strcmp(t[j].name, t[k].name) != 0);
        if (k > 0) CHECK(t[k].group >= t[k - 1].group); /* printed by group, in the table's order */
    }
    CHECK(dp_settings_find("bogus") == NULL && dp_settings_find(NULL) == NULL);
}

/* Each value formatted and read back gives the same settings. */
static void test_format_round_trip(void) {
    for (const char *const *p = dp_settings_preset_names(); *p; p++) {
        TEST_CASE("preset %s", *p);
        dp_settings s, r;
        CHECK(dp_settings_preset(*p, &s) == 0);
        dp_settings_base(&r);
        int32_t n;
        const dp_setting *t = dp_settings_table(&n);
        dp_error err;
        for (int32_t k = 0; k < n; k++) {
            char v[128];
            dp_setting_format(&t[k], &s, v, sizeof v);
            CHECK(dp_settings_set(&r, t[k].name, v, &err) == DP_STATUS_OK);
        }
        char a[8192], b[8192];
        for (int target = DP_SETTING_AGENT; target <= DP_SETTING_PRETRAINED; target++) {
            if (target == DP_SETTING_RUN) continue;
            const void *ps = target == DP_SETTING_AGENT    ? (const void *)&s.agent
                             : target == DP_SETTING_SEARCH ? (const void *)&s.search
                                                           : (const void *)&s.pretrained;
            const void *pr = target == DP_SETTING_AGENT    ? (const void *)&r.agent
                             : target == DP_SETTING_SEARCH ? (const void *)&r.search
                                                           : (const void *)&r.pretrained;
            CHECK(dp_settings_format_target((dp_setting_target)target, ps, a, sizeof a) < sizeof a);
            dp_settings_format_target((dp_setting_target)target, pr, b, sizeof b);
            CHECK(!strcmp(a, b));
        }
        CHECK(s.search_after_s == r.search_after_s);
    }
}

/* Bad names and values are refused, naming the setting and what it wants;
 * nothing changes then. */
static void test_set_errors(void) {
    dp_settings s, before;
    dp_settings_base(&s);
    before = s;
    dp_error err;
    CHECK(dp_settings_set(&s, "bogus", "1", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "unknown setting \"bogus\"");
    CHECK(dp_settings_set(&s, "grouper", "nonsense", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "learned, colocation, metis");
    CHECK(dp_settings_set(&s, "lr", "-1", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "lr wants a number in [0, 100]");
    CHECK(dp_settings_set(&s, "batch", "2.5", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "whole number");
    CHECK(dp_settings_set(&s, "link", "maybe", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "yes or no");
    CHECK(dp_settings_set(&s, "search-after", "soon", &err) == DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "duration");
    CHECK(dp_settings_set(&s, "moves", "0", &err) == DP_STATUS_INVALID);
    CHECK(memcmp(&s, &before, sizeof s) == 0);
    CHECK(dp_settings_set(&s, "search-after", "2m", &err) == DP_STATUS_OK && s.search_after_s == 120.0);
    CHECK(dp_settings_set(&s, "search-after", "0", &err) == DP_STATUS_OK && s.search_after_s == 0.0);
    CHECK(dp_settings_set(&s, "t0", "0.5", &err) == DP_STATUS_OK && s.search.t0 == 0.5);
    /* the agent's part alone takes the agent's rows only */
    CHECK(dp_agent_config_set(&s.agent, "lr", "0.01", &err) == DP_STATUS_OK);
    CHECK_NEAR(s.agent.train.lr, 0.01, 1e-7);
    CHECK(dp_agent_config_set(&s.agent, "moves", "3", &err) == DP_STATUS_INVALID);
}

/* A renamed setting's old name still sets the new one. */
static void test_renamed(void) {
    dp_settings s;
    dp_settings_base(&s);
    dp_error err;
    CHECK(!strcmp(dp_settings_renamed("samples"), "batch"));
    CHECK(dp_settings_renamed("batch") == NULL && dp_settings_renamed(NULL) == NULL);
    CHECK(dp_settings_find("samples") == dp_settings_find("batch"));
    CHECK(dp_settings_set(&s, "samples", "7", &err) == DP_STATUS_OK && s.agent.train.batch == 7);
}

/* The text of a file of the repository (path from tests/), NUL-ended, or
 * NULL; the caller frees it. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (len + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf) buf[len] = 0;
    return buf;
}

/* No key a preset sets is experimental: every preset line names its
 * source, a paper's sentence or a measured choice of dplace's. */
static void test_preset_keys_not_experimental(void) {
    for (const char *const *p = dp_settings_preset_names(); *p; p++) {
        const dp_preset *pr = dp_settings_preset_find(*p);
        for (int32_t k = 0; k < pr->n_lines; k++) {
            TEST_CASE("preset %s, line %s=%s", *p, pr->lines[k].key, pr->lines[k].value);
            const dp_setting *r = dp_settings_find(pr->lines[k].key);
            CHECK(r && !(r->flags & DP_SETTING_EXPERIMENTAL));
        }
    }
}

/* No key that docs/design/preset-sources.md gives a source for (the first
 * cell of its tables' rows: a paper's value, or dplace's with its reason)
 * is experimental: Mars's gcn-layers and seg-len, the Hierarchical
 * Planner's type-vocab and clip, ... */
static void test_sourced_keys_not_experimental(void) {
    char *doc = read_text("../docs/design/preset-sources.md");
    CHECK(doc != NULL);
    if (!doc) return;
    int sourced = 0;
    for (char *line = doc; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "| ", 2)) continue;
        size_t cell = strcspn(line + 2, "|\n");
        char keys[256];
        snprintf(keys, sizeof keys, "%.*s", (int)(cell < sizeof keys ? cell : sizeof keys - 1), line + 2);
        for (char *save = NULL, *k = strtok_r(keys, " ,;", &save); k; k = strtok_r(NULL, " ,;", &save)) {
            const dp_setting *r = dp_settings_find(k);
            if (!r) continue; /* a header cell, or a word */
            TEST_CASE("setting %s", k);
            CHECK(!(r->flags & DP_SETTING_EXPERIMENTAL));
            sourced++;
        }
    }
    CHECK(sourced > 60);
    free(doc);
}

/* The experimental keys are exactly those docs/agents.md marks with a *
 * (its settings table, `key`*), and the search has none (its values are
 * its own, tuned: docs/search.md). */
static void test_experimental_documented(void) {
    char *doc = read_text("../docs/agents.md");
    CHECK(doc != NULL);
    if (!doc) return;
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    int experimental = 0;
    for (int32_t k = 0; k < n; k++) {
        TEST_CASE("setting %s", t[k].name);
        char marked[80];
        snprintf(marked, sizeof marked, "`%s`*", t[k].name);
        int x = (t[k].flags & DP_SETTING_EXPERIMENTAL) != 0;
        CHECK(x == (strstr(doc, marked) != NULL));
        if (t[k].group == DP_SETTING_GROUP_SEARCH) CHECK(!x);
        experimental += x;
    }
    CHECK(experimental > 0);
    free(doc);
}

/* Each preset's lines name a setting of the table, give a value it takes,
 * and say where it comes from; its base is a preset named before it. */
static void test_preset_lines(void) {
    const char *const *names = dp_settings_preset_names();
    for (const char *const *p = names; *p; p++) {
        const dp_preset *pr = dp_settings_preset_find(*p);
        CHECK(pr && !strcmp(pr->name, *p) && pr->summary && *pr->summary);
        if (pr->base) {
            int before = 0;
            for (const char *const *q = names; q < p; q++) before |= !strcmp(*q, pr->base);
            CHECK(before);
        }
        dp_settings s;
        dp_settings_base(&s);
        dp_error err;
        for (int32_t k = 0; k < pr->n_lines; k++) {
            TEST_CASE("preset %s, line %s=%s", *p, pr->lines[k].key, pr->lines[k].value);
            CHECK(dp_settings_find(pr->lines[k].key) != NULL);
            CHECK(dp_settings_set(&s, pr->lines[k].key, pr->lines[k].value, &err) == DP_STATUS_OK);
            CHECK(pr->lines[k].source && strlen(pr->lines[k].source) > 5);
        }
        TEST_CASE("preset %s", *p);
        CHECK(dp_settings_preset(*p, &s) == 0 && !strcmp(s.agent.preset, *p));
        CHECK(dp_agent_config_check(&s.agent, &err) == DP_STATUS_OK);
    }
    dp_settings s;
    CHECK(dp_settings_preset("nope", &s) == -1 && dp_settings_preset_find("nope") == NULL);
}

/* Every agent setting of each preset, as the C functions the data presets
 * replaced set them (formatted from those functions before they went): a
 * preset changes only with this table. */
static const char *const presets_before[][2] = {
    {"hp",
     "type-ids=rank type-vocab=200 type-dim=20 out-slots=6 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=learned groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=none op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-after hidden=256 attn-dim=256 "
     "dev-emb=256 tanh-c=5 temperature=10 stick=0 noise-amp=0.1 noise-updates=500 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=none warm-steps=200 warm-lr=0.001 train=yes algo=reinforce batch=4 lr=0.001 "
     "entropy=0 entropy-sum=no clip=1 clip-per-network=yes baseline-decay=0.9 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=500 oom-shaped=no greedy-every=0 "
     "ppo-epochs=4 ppo-minibatches=1 ppo-clip=0.3 ppo-ratio=decision ce-every=4 ce-elites=1 ce-steps=2 "
     "elite-moves=100 elite-walks=2 elite-critical=0.9 elite-near=0 elite-chain=4 elite-train=no "
     "elite-keep=no"},
    {"colocrl",
     "type-ids=rank type-vocab=200 type-dim=20 out-slots=6 out-dims=4 adj-per-dir=6 group-types=embedding "
     "grouper=scope groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=none op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-after hidden=256 attn-dim=256 "
     "dev-emb=256 tanh-c=5 temperature=10 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=none warm-steps=200 warm-lr=0.001 train=yes algo=reinforce batch=4 lr=0.001 "
     "entropy=0 entropy-sum=no clip=1 clip-per-network=yes baseline-decay=0 baseline-window=10 "
     "baseline-init-fail=yes fail-reward=0 valid-only-after=500 oom-shaped=no greedy-every=0 ppo-epochs=4 "
     "ppo-minibatches=1 ppo-clip=0.3 ppo-ratio=decision ce-every=4 ce-elites=1 ce-steps=2 elite-moves=100 "
     "elite-walks=2 elite-critical=0.9 elite-near=0 elite-chain=0 elite-train=no elite-keep=no"},
    {"eagle",
     "type-ids=rank type-vocab=200 type-dim=20 out-slots=6 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=learned groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=yes link-hidden=64 encoder=none op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-before hidden=512 attn-dim=512 "
     "dev-emb=256 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=none warm-steps=200 warm-lr=0.001 train=yes algo=ppo batch=10 lr=0.0005 "
     "entropy=0.01 entropy-sum=no clip=1 clip-per-network=yes baseline-decay=0.9 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=500 oom-shaped=no greedy-every=0 "
     "ppo-epochs=4 ppo-minibatches=1 ppo-clip=0.3 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=0 elite-walks=1 elite-critical=0 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"eagle-ppo-ce",
     "type-ids=rank type-vocab=200 type-dim=20 out-slots=6 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=learned groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=yes link-hidden=64 encoder=none op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-before hidden=512 attn-dim=512 "
     "dev-emb=256 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=none warm-steps=200 warm-lr=0.001 train=yes algo=ppo-ce batch=10 lr=0.0005 "
     "entropy=0.01 entropy-sum=no clip=1 clip-per-network=yes baseline-decay=0.9 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=500 oom-shaped=no greedy-every=0 "
     "ppo-epochs=4 ppo-minibatches=1 ppo-clip=0.3 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=100 elite-walks=2 elite-critical=0.9 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"post",
     "type-ids=rank type-vocab=200 type-dim=20 out-slots=6 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=metis groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=none op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=table hidden=512 attn-dim=512 "
     "dev-emb=256 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.02 warm-start=none warm-steps=200 warm-lr=0.001 train=yes algo=ppo-ce batch=10 lr=0.003 "
     "entropy=0 entropy-sum=no clip=1 clip-per-network=yes baseline-decay=0.9 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=500 oom-shaped=no greedy-every=0 "
     "ppo-epochs=4 ppo-minibatches=1 ppo-clip=0.2 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=100 elite-walks=2 elite-critical=0.9 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"dplace",
     "type-ids=rank type-vocab=200 type-dim=20 out-slots=6 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=metis groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=none op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=table hidden=512 attn-dim=512 "
     "dev-emb=256 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.02 warm-start=none warm-steps=200 warm-lr=0.001 train=yes algo=ppo-ce batch=10 lr=0.003 "
     "entropy=0 entropy-sum=no clip=1 clip-per-network=yes baseline-decay=0.9 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=500 oom-shaped=no greedy-every=0 "
     "ppo-epochs=4 ppo-minibatches=1 ppo-clip=0.2 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=100 elite-walks=2 elite-critical=0.9 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"mars",
     "type-ids=fixed type-vocab=200 type-dim=20 out-slots=2 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=none groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=gcn op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=1000 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-seg hidden=512 attn-dim=512 "
     "dev-emb=512 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=best warm-steps=200 warm-lr=0.001 train=yes algo=ppo batch=20 lr=0.0003 "
     "entropy=0.001 entropy-sum=no clip=1 clip-per-network=no baseline-decay=0.99 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=1000000000 oom-shaped=no greedy-every=0 "
     "ppo-epochs=3 ppo-minibatches=4 ppo-clip=0.2 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=0 elite-walks=1 elite-critical=0 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"mars-nopretrain",
     "type-ids=fixed type-vocab=200 type-dim=20 out-slots=2 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=none groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=gcn op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=0 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-seg hidden=512 attn-dim=512 "
     "dev-emb=512 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=best warm-steps=200 warm-lr=0.001 train=yes algo=ppo batch=20 lr=0.0003 "
     "entropy=0.001 entropy-sum=no clip=1 clip-per-network=no baseline-decay=0.99 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=1000000000 oom-shaped=no greedy-every=0 "
     "ppo-epochs=3 ppo-minibatches=4 ppo-clip=0.2 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=0 elite-walks=1 elite-critical=0 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"mars-seq2seq",
     "type-ids=fixed type-vocab=200 type-dim=20 out-slots=2 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=none groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=gcn op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=1000 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-before hidden=512 "
     "attn-dim=512 dev-emb=512 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no "
     "mem-scale=1 seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 "
     "txl-causal=no post-mix=0.1 warm-start=best warm-steps=200 warm-lr=0.001 train=yes algo=ppo batch=20 "
     "lr=0.0003 entropy=0.001 entropy-sum=no clip=1 clip-per-network=no baseline-decay=0.99 "
     "baseline-window=0 baseline-init-fail=no fail-reward=-10 valid-only-after=1000000000 oom-shaped=no "
     "greedy-every=0 ppo-epochs=3 ppo-minibatches=4 ppo-clip=0.2 ppo-ratio=decision ce-every=50 "
     "ce-elites=5 ce-steps=1 elite-moves=0 elite-walks=1 elite-critical=0 elite-near=0 elite-chain=0 "
     "elite-train=no elite-keep=no"},
    {"mars-trfxl",
     "type-ids=fixed type-vocab=200 type-dim=20 out-slots=2 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=none groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=gcn op-order=topo gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=1000 pretrain-lr=0.001 encoder-train=yes placer=trfxl hidden=256 attn-dim=512 "
     "dev-emb=512 tanh-c=0 temperature=1 stick=0 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=best warm-steps=200 warm-lr=0.001 train=yes algo=ppo batch=20 lr=0.0003 "
     "entropy=0.001 entropy-sum=no clip=1 clip-per-network=no baseline-decay=0.99 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=1000000000 oom-shaped=no greedy-every=0 "
     "ppo-epochs=3 ppo-minibatches=4 ppo-clip=0.2 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=0 elite-walks=1 elite-critical=0 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
    {"mars-dplace",
     "type-ids=fixed type-vocab=200 type-dim=20 out-slots=2 out-dims=4 adj-per-dir=6 group-types=counts "
     "grouper=none groups=256 grouper-hidden=64 grouper-prior=metis grouper-prior-mass=0.995 "
     "scope-depth=3 link=no link-hidden=64 encoder=gcn op-order=dfs gcn-hidden=256 gcn-layers=3 "
     "pretrain-iters=1000 pretrain-lr=0.001 encoder-train=yes placer=seq2seq-seg hidden=512 attn-dim=512 "
     "dev-emb=512 tanh-c=0 temperature=1 stick=5 noise-amp=0 noise-updates=0 mem-mask=no mem-scale=1 "
     "seg-len=128 seg-keep=16 txl-layers=2 txl-heads=8 txl-inner=1024 txl-mem=128 txl-causal=no "
     "post-mix=0.1 warm-start=best warm-steps=200 warm-lr=0.001 train=yes algo=ppo batch=20 lr=0.0003 "
     "entropy=0.001 entropy-sum=no clip=1 clip-per-network=no baseline-decay=0.99 baseline-window=0 "
     "baseline-init-fail=no fail-reward=-10 valid-only-after=1000000000 oom-shaped=no greedy-every=0 "
     "ppo-epochs=3 ppo-minibatches=4 ppo-clip=0.2 ppo-ratio=decision ce-every=50 ce-elites=5 ce-steps=1 "
     "elite-moves=0 elite-walks=1 elite-critical=0 elite-near=0 elite-chain=0 elite-train=no "
     "elite-keep=no"},
};

/* Each data preset equals the C function it replaced, key for key. */
static void test_presets_match_functions(void) {
    size_t n = sizeof presets_before / sizeof presets_before[0];
    CHECK(n == 11);
    for (size_t p = 0; p < n; p++) {
        const char *name = presets_before[p][0];
        dp_settings s;
        TEST_CASE("preset %s", name);
        CHECK(dp_settings_preset(name, &s) == 0);
        char now[8192], key[64];
        CHECK(dp_settings_format_target(DP_SETTING_AGENT, &s.agent, now, sizeof now) < sizeof now);
        /* key by key, so that a failure names the setting */
        const char *a = now, *b = presets_before[p][1];
        while (*a || *b) {
            size_t la = strcspn(a, " "), lb = strcspn(b, " ");
            snprintf(key, sizeof key, "%.*s", (int)strcspn(b, "="), b);
            TEST_CASE("preset %s, setting %s", name, key);
            CHECK(la == lb && !strncmp(a, b, la));
            a += la + (a[la] == ' '), b += lb + (b[lb] == ' ');
        }
    }
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_table_rows);
    TEST_RUN(test_format_round_trip);
    TEST_RUN(test_set_errors);
    TEST_RUN(test_renamed);
    TEST_RUN(test_preset_keys_not_experimental);
    TEST_RUN(test_sourced_keys_not_experimental);
    TEST_RUN(test_experimental_documented);
    TEST_RUN(test_preset_lines);
    TEST_RUN(test_presets_match_functions);
    return test_end();
}
