/* Option tables: one declarative table per command drives both the parsing
 * of argv and the --help text (cli.h describes the table). */
#include <assert.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"

#define HELP_WIDTH 80  /* help lines stay shorter than this */
#define LABEL_MAX 22   /* wider option labels put their help on the next line */
#define TABLE_MAX 64   /* options in one table (cli_parse's required check) */
#define MSG_MAX 512

/* Whether o ends its table. */
static int is_end(const cli_option *o) {
    return !o->name && !o->alias && o->kind != CLI_SECTION;
}

/* Checks (asserts) that o is well formed: a name, and the one target of its
 * kind. A table is code, so a malformed one is a programming error. */
static void check_option(const cli_option *o) {
    assert(o->name || o->alias);
    int targets = !!o->flag + !!o->str + !!o->num + !!o->real + !!o->index + !!o->list + !!o->data;
    switch (o->kind) {
    case CLI_FLAG: assert(o->flag && targets == 1 && !o->arg); break;
    case CLI_STRING: assert(o->str && targets == 1 && o->arg); break;
    case CLI_LONG: assert(o->num && targets == 1 && o->arg && o->min <= o->max); break;
    case CLI_DOUBLE: assert(o->real && targets == 1 && o->arg && o->min <= o->max); break;
    case CLI_DURATION: assert(o->real && targets == 1 && o->arg); break;
    case CLI_CHOICE: assert(o->index && targets == 1 && o->arg && o->choices && o->choices[0]); break;
    case CLI_LIST: assert(o->list && targets == 1 && o->arg); break;
    case CLI_CUSTOM: assert(o->parse && targets <= 1 && o->arg); break;
    case CLI_SECTION: assert(0); break;
    }
}

/* Checks every option of the table (asserts) and returns their count. */
static int check_table(const cli_option *table) {
    int n = 0;
    for (; !is_end(&table[n]); n++)
        if (table[n].kind != CLI_SECTION) check_option(&table[n]);
    return n;
}

/* Whether arg spells the option name ("--name" or "--name=VALUE"); *value
 * is then the text after '=' or NULL when there is none. */
static int spells(const char *name, const char *arg, const char **value) {
    if (!name) return 0;
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '=')) return 0;
    *value = arg[n] == '=' ? arg + n + 1 : NULL;
    return 1;
}

/* The table's option spelled by arg (its index in *which), or NULL. */
static const cli_option *find_option(const cli_option *table, const char *arg, const char **value, int *which) {
    for (int k = 0; !is_end(&table[k]); k++) {
        const cli_option *o = &table[k];
        if (o->kind == CLI_SECTION) continue;
        if (spells(o->name, arg, value) || spells(o->alias, arg, value)) {
            *which = k;
            return o;
        }
    }
    return NULL;
}

/* "a, b or c" from a NULL-terminated list of names. */
static void format_choices(const char *const *choices, char *buf, size_t size) {
    buf[0] = '\0';
    for (int k = 0; choices[k]; k++) {
        size_t len = strlen(buf);
        const char *sep = k == 0 ? "" : choices[k + 1] ? ", " : " or ";
        snprintf(buf + len, size - len, "%s%s", sep, choices[k]);
    }
}

/* Stores value (not NULL) through o, spelled `as` on the command line:
 * 0, or -1 with the usage message in msg. */
static int store_value(const cli_option *o, const char *as, const char *value, char *msg, size_t size) {
    char range[128];
    switch (o->kind) {
    case CLI_STRING:
        if (!*value) break; /* "" is no value: the message at the end */
        *o->str = value;
        return 0;
    case CLI_LONG:
        if (!cli_parse_long(value, (long)o->min, (long)o->max, o->num)) return 0;
        if (!o->range) snprintf(range, sizeof range, "in %ld..%ld", (long)o->min, (long)o->max);
        snprintf(msg, size, "%s must be %s, not \"%s\"", as, o->range ? o->range : range, value);
        return -1;
    case CLI_DOUBLE:
        if (!cli_parse_double(value, o->min, o->max, o->real)) return 0;
        if (!o->range) snprintf(range, sizeof range, "in %g..%g", o->min, o->max);
        snprintf(msg, size, "%s must be %s, not \"%s\"", as, o->range ? o->range : range, value);
        return -1;
    case CLI_DURATION: {
        double s = dp_parse_duration(value);
        if (s > 0) {
            *o->real = s;
            return 0;
        }
        snprintf(msg, size, "%s wants a duration such as 90s, 10m or 2h, not \"%s\"", as, value);
        return -1;
    }
    case CLI_CHOICE:
        for (int k = 0; o->choices[k]; k++)
            if (!strcmp(value, o->choices[k])) {
                *o->index = k;
                return 0;
            }
        format_choices(o->choices, range, sizeof range);
        snprintf(msg, size, "%s must be %s, not \"%s\"", as, range, value);
        return -1;
    case CLI_LIST:
        if (o->list->n == CLI_LIST_MAX) {
            snprintf(msg, size, "%s: more than %d values in all", as, CLI_LIST_MAX);
            return -1;
        }
        o->list->item[o->list->n++] = (cli_list_item){o->key, value};
        return 0;
    case CLI_CUSTOM:
        msg[0] = '\0';
        if (!o->parse(o, value, o->data, msg, size)) return 0;
        if (!msg[0]) snprintf(msg, size, "%s: bad value \"%s\"", as, value);
        return -1;
    case CLI_FLAG:
    case CLI_SECTION: assert(0);
    }
    snprintf(msg, size, "%s needs a value (%s)", as, o->arg);
    return -1;
}

/* Parses the one option at argv[*i] if the table holds it, advancing *i
 * past its value, and tells which it was (*which): 1 when it did, 0 when
 * the table does not hold argv[*i], -1 after printing a usage error. */
static int parse_at(const char *cmd, const cli_option *table, int argc, char **argv, int *i, int *which) {
    const char *value = NULL, *arg = argv[*i];
    const cli_option *o = find_option(table, arg, &value, which);
    if (!o) return 0;
    char as[64], msg[MSG_MAX];
    snprintf(as, sizeof as, "%.*s", (int)(value ? (size_t)(value - 1 - arg) : strlen(arg)), arg);
    if (o->kind == CLI_FLAG) {
        if (value) {
            cli_usage_error(cmd, "%s takes no value, not \"%s\"", as, value);
            return -1;
        }
        *o->flag = 1;
        return 1;
    }
    if (!value) {
        if (*i + 1 >= argc) {
            cli_usage_error(cmd, "%s needs a value (%s)", as, o->arg);
            return -1;
        }
        value = argv[++*i];
    }
    if (store_value(o, as, value, msg, sizeof msg)) {
        cli_usage_error(cmd, "%s", msg);
        return -1;
    }
    return 1;
}

/* The first required option of the table that was not seen: prints the
 * usage error and returns 2; 0 when every one was given. */
static int check_required(const char *cmd, const cli_option *table, const unsigned char *seen) {
    for (int k = 0; !is_end(&table[k]); k++) {
        const cli_option *o = &table[k];
        if (o->kind != CLI_SECTION && o->required && !seen[k])
            return cli_usage_error(cmd, "%s %s is required", o->name ? o->name : o->alias, o->arg ? o->arg : "");
    }
    return 0;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *args) {
    unsigned char seen[TABLE_MAX] = {0};
    int n_options = check_table(cmd->options);
    assert(n_options <= TABLE_MAX);
    if (args) args->n = 0;
    int positional_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (positional_only || a[0] != '-' || a[1] == '\0') {
            if (!args || args->n == CLI_ARGS_MAX) return cli_usage_error(cmd->name, "unexpected argument \"%s\"", a);
            args->v[args->n++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            positional_only = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print_help(cmd, stdout);
            return CLI_EXIT_OK;
        }
        int which = -1, r = parse_at(cmd->name, cmd->options, argc, argv, &i, &which);
        if (r < 0) return CLI_EXIT_INPUT;
        if (r == 0) return cli_usage_error(cmd->name, "unknown option \"%s\"", a);
        if (cmd->options[which].renamed)
            fprintf(stderr, "dplace %s: %s is now %s (the old spelling goes in the next release)\n", cmd->name,
                    cmd->options[which].name, cmd->options[which].renamed);
        seen[which] = 1;
    }
    return check_required(cmd->name, cmd->options, seen) ? CLI_EXIT_INPUT : CLI_PARSED;
}

/* ---- the shared option groups ---------------------------------------------- */

int cli_protocol_check(const char *cmd, const cli_protocol *p) {
    dp_sim_options so = dp_sim_options_default();
    so.noise_sigma = p->noise, so.mean = p->mean;
    so.steps = p->steps < INT32_MIN ? INT32_MIN : p->steps > INT32_MAX ? INT32_MAX : (int32_t)p->steps;
    so.warmup = p->warmup < INT32_MIN ? INT32_MIN : p->warmup > INT32_MAX ? INT32_MAX : (int32_t)p->warmup;
    dp_error err;
    dp_error_clear(&err);
    if (!dp_sim_options_check(&so, &err)) return 0;
    return cli_usage_error(cmd, "%s", err.msg);
}

/* ---- help ------------------------------------------------------------------ */

/* "-o, --out FILE" */
static void format_label(const cli_option *o, char *buf, size_t size) {
    snprintf(buf, size, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias && o->name ? ", " : "",
             o->name ? o->name : "", o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Writes text wrapped to HELP_WIDTH, its first line from column col (where
 * the caller left the cursor), the others from column indent; "\n" in text
 * starts a new line, keeping the spaces that begin it. */
static void write_wrapped(FILE *f, const char *text, int indent, int col) {
    const char *line = text;
    for (;;) {
        const char *end = line + strcspn(line, "\n");
        const char *p = line + strspn(line, " ");
        int first = 1;
        fprintf(f, "%*s", (int)(p - line), "");
        col += (int)(p - line);
        while (p < end) {
            int len = (int)strcspn(p, " \n");
            if (!first && col + 1 + len >= HELP_WIDTH) {
                fprintf(f, "\n%*s", indent, "");
                col = indent, first = 1;
            }
            fprintf(f, "%s%.*s", first ? "" : " ", len, p);
            col += len + !first;
            first = 0;
            p += len;
            p += strspn(p, " ");
        }
        if (!*end) break;
        fprintf(f, "\n%*s", indent, "");
        col = indent;
        line = end + 1;
    }
    fputc('\n', f);
}

void cli_print_labelled(FILE *f, const char *label, const char *help, int col) {
    int width = fprintf(f, "  %s", label);
    if (width + 2 > col) {
        fprintf(f, "\n%*s", col, "");
    } else {
        fprintf(f, "%*s", col - width, "");
    }
    write_wrapped(f, help ? help : "", col, col);
}

void cli_print_help(const cli_command *cmd, FILE *f) {
    char label[128];
    int widest = 0;
    check_table(cmd->options);
    for (const cli_option *o = cmd->options; !is_end(o); o++) {
        if (o->kind == CLI_SECTION || o->renamed) continue;
        format_label(o, label, sizeof label);
        int w = (int)strlen(label);
        if (w <= LABEL_MAX && w > widest) widest = w;
    }
    if (widest < 10) widest = 10; /* "-h, --help" */
    int col = 2 + widest + 2;
    fprintf(f, "usage: %s\n\n", cmd->synopsis);
    if (cmd->description) fprintf(f, "%s\n", cmd->description);
    for (const cli_option *o = cmd->options; !is_end(o); o++) {
        if (o->kind == CLI_SECTION) {
            fprintf(f, "%s\n", o->help);
            continue;
        }
        if (o->renamed) continue;
        format_label(o, label, sizeof label);
        cli_print_labelled(f, label, o->help, col);
    }
    cli_print_labelled(f, "-h, --help", "this text", col);
    if (cmd->epilogue) fprintf(f, "\n%s", cmd->epilogue);
}
