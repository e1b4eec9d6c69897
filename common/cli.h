// cli.h: the command line of every step; part of the harness, included by
// tutorial.cuh (it uses die_usage and the exit codes defined there).
//
#pragma once

static int g_help_wanted = 0;  // --help: the arguments' rules are checked, this machine's memory is not

// Every program takes --help and --quick (small sizes, few repetitions: for
// sanitizers and smoke runs), the standard options it declares in `takes`,
// and its own integer options; nothing else. --quick changes defaults only:
// an option given beside it keeps its value (--quick --reps 5 times 5 runs).
// The whole line is validated before anything is done, --help included. Each
// option at most once, as "--opt V" or "--opt=V"; numbers in plain decimal
// digits. The step's own rules (`check`) run right after, also before
// require_hopper().
typedef struct {
    const char *name, *meta, *help;  // "--mib", "N", one line
    long long min, max;              // inclusive range
    long long full, quick;           // default of a normal run, and under --quick
} IntOption;

enum { CLI_REPS = 1, CLI_SEED = 2, CLI_DUMP = 4 };  // --reps N, --seed N, --dump FILE
#define MAX_OPTIONS 12
#define MAX_REPS 1000

typedef struct {
    const char* usage;      // what the program does: --help's first lines
    unsigned takes;         // CLI_REPS | CLI_SEED | CLI_DUMP
    const IntOption* opts;  // the step's own integer options
    int nopts;
    void (*check)(const struct Cli_*);  // the step's own rules (die_usage), or NULL
} CliSpec;

typedef struct Cli_ {
    int quick, reps, warmup;       // --quick; timed runs (median taken); untimed runs first
    unsigned seed;                 // seeds the input data
    const char* dump_path;         // --dump FILE, or NULL
    long long value[MAX_OPTIONS];  // the step's options, in the order declared
} Cli;

// Strict integer parse: [-]digits, no '+', spaces or leading zeros, in range.
static inline long long parse_int_arg(const char* opt, const char* text, long long lo, long long hi) {
    if (text == NULL) die_usage("%s needs a value", opt);
    const char* d = text + (text[0] == '-');
    const size_t n = strspn(d, "0123456789");
    if (n == 0 || d[n] != '\0' || (d[0] == '0' && (n > 1 || d != text)))
        die_usage("%s '%s' is not a whole number: plain decimal digits, no '+', spaces or leading zeros", opt,
                  text);
    errno = 0;
    const long long v = strtoll(text, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        die_usage("%s %s is out of range: it must be %lld..%lld", opt, text, lo, hi);
    return v;
}

// A size that must split `total` pieces evenly: name both and a value that works.
static inline void require_divisor(const char* opt, long long value, size_t total, const char* what) {
    if (value > 0 && total % (size_t)value == 0) return;
    size_t d = value > 0 && (size_t)value < total ? (size_t)value : total;
    while (d > 1 && total % d) --d;
    die_usage("%s %lld does not divide the %zu %s: use a divisor of %zu, such as %zu", opt, value, total,
              what, total, d);
}

static inline void print_option(const char* name, const char* meta, const char* help) {
    char left[40];
    snprintf(left, sizeof left, "%s %s", name, meta);
    printf("  %-22s %s\n", left, help);
}

static inline void print_help(const CliSpec* spec, const char* argv0) {
    printf("%s\nusage: %s [options]\n", spec->usage, argv0);
    print_option("--help", "", "print this and exit");
    print_option("--quick", "", "small sizes and 2 repetitions where not given (sanitizers, smoke runs)");
    if (spec->takes & CLI_REPS)
        print_option("--reps", "N", "timed repetitions, median reported (1..1000, default 20)");
    if (spec->takes & CLI_SEED)
        print_option("--seed", "N", "seed of the input data (0..4294967295, default 1)");
    if (spec->takes & CLI_DUMP) print_option("--dump", "FILE", "also write the recorded data as JSON");
    for (int k = 0; k < spec->nopts; ++k) {
        const IntOption* o = &spec->opts[k];
        char help[240];
        snprintf(help, sizeof help, "%s (%lld..%lld, default %lld, --quick %lld)", o->help, o->min, o->max,
                 o->full, o->quick);
        print_option(o->name, o->meta, help);
    }
    printf(
        "each option at most once; a value as '--opt V' or '--opt=V'; numbers in plain decimal digits "
        "(no '+', spaces or leading zeros)\n"
        "exit codes: 0 pass, 1 a check failed, 2 bad arguments or CUDA error, "
        "77 cannot run here (no Hopper GPU)\n");
}

// The slot of an option name (its first len characters): 0..4 the standard
// options (if the program takes them), 5 + k the step's option k; -1 if none.
static inline int cli_slot(const CliSpec* spec, const char* name, size_t len) {
    static const char* const standard[5] = {"--help", "--quick", "--reps", "--seed", "--dump"};
    const unsigned takes = 3u | spec->takes << 2;  // --help, --quick always; CLI_REPS.. -> slots 2..4
    for (int s = 0; s < 5 + spec->nopts; ++s) {
        const char* n = s < 5 ? standard[s] : spec->opts[s - 5].name;
        if ((s >= 5 || (takes >> s & 1)) && strlen(n) == len && !strncmp(n, name, len)) return s;
    }
    return -1;
}

static inline Cli parse_cli(int argc, char** argv, const CliSpec* spec) {
    Cli cli;
    memset(&cli, 0, sizeof cli);
    cli.reps = 20;
    cli.warmup = 3;
    cli.seed = 1;
    int seen[5 + MAX_OPTIONS] = {0};  // by slot (cli_slot)
    if (spec->nopts > MAX_OPTIONS) die_internal("more than %d options", MAX_OPTIONS);
    for (int i = 1; i < argc; ++i) {
        const char* a = strcmp(argv[i], "-h") ? argv[i] : "--help";
        const char* eq = a[0] == '-' ? strchr(a, '=') : NULL;  // --opt=V
        const int len = eq ? (int)(eq - a) : (int)strlen(a), s = cli_slot(spec, a, (size_t)len);
        if (s < 0) die_usage("unknown option '%.*s'", len, a);
        if (seen[s]++) die_usage("%.*s given twice", len, a);
        if (s < 2 && eq) die_usage("%.*s takes no value", len, a);
        const char* v = s < 2 ? NULL : eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (s == 2) cli.reps = (int)parse_int_arg("--reps", v, 1, MAX_REPS);
        if (s == 3) cli.seed = (unsigned)parse_int_arg("--seed", v, 0, 4294967295LL);
        if (s == 4 && (!v || !v[0] || v[0] == '-')) die_usage("--dump needs a file name");
        if (s == 4) cli.dump_path = v;
        if (s >= 5)
            cli.value[s - 5] =
                parse_int_arg(spec->opts[s - 5].name, v, spec->opts[s - 5].min, spec->opts[s - 5].max);
    }
    cli.quick = seen[1];
    for (int k = 0; k < spec->nopts; ++k)
        if (!seen[5 + k]) cli.value[k] = cli.quick ? spec->opts[k].quick : spec->opts[k].full;
    if (cli.quick && !seen[2]) cli.reps = 2;
    if (cli.quick) cli.warmup = 1;
#ifdef TUTORIAL_SHADOW
    if (!seen[2]) cli.reps = 1;  // the shadow build's timings mean nothing: one run is enough
    cli.warmup = 0;
#endif
    g_help_wanted = seen[0];
    if (spec->check) spec->check(&cli);
    if (seen[0]) {
        print_help(spec, argv[0]);
        exit(EXIT_PASS);
    }
    return cli;
}
