// tutorial.cuh: the harness every step shares. Nothing in it is a lesson.
//
// Read it once; after that each step's .cu reads on its own.
//   1. exit codes and errors   CUDA_CHECK, CHECK_LAUNCH, die_usage, die_internal, xmalloc
//   2. the GPU guard           require_hopper (exit 77), require_host/device_memory (exit 2)
//   3. the command line        parse_cli, require_divisor
//   4. seeded data and poison  fill_seeded_words/floats, poison_device
//   5. bounded waits           what a wait that gave up leaves for the host
//   6. checking                check_words, check_device, check_value: the "check" lines
//   7. timing                  Timer: events, warm-up, median -> a PERF line
//   8. the output contract     print_header, record_gpu_line, record_time_line, finish
//
// The output contract: deterministic lines first ("==", "problem:", "check",
// notes), then machine-dependent lines that begin with GPU, PERF or TIME, then
// "RESULT: PASS" or "RESULT: FAIL", which always agrees with the exit code.
// PERF and TIME lines are recorded as the parts run and printed by finish(),
// so every part can check and time itself in one place.
//
// Oldest toolkit this code is written for: CUDA 12.0 (sm_90a, PTX ISA 8.0).
// Tested with CUDA 13.0.
#pragma once

#include <cuda_runtime.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(CUDART_VERSION) || CUDART_VERSION < 12000
#error "this tutorial needs CUDA 12.0 or newer (Hopper sm_90a, PTX ISA 8.0)"
#endif

// ---------------------------------------------------------------------------
// 1. Exit codes and errors
// ---------------------------------------------------------------------------
enum {
    EXIT_PASS = 0,        // every check passed
    EXIT_WRONG = 1,       // a correctness check failed
    EXIT_USAGE = 2,       // bad arguments, or a CUDA error
    EXIT_CANNOT_RUN = 77  // no GPU / not Hopper / driver too old: never a pass
};

// One idiom for every runtime call. A CUDA error is exit 2 with the call, the
// place and the error's name; it never reads as a correctness result.
#define CUDA_CHECK(call)                                                                         \
    do {                                                                                         \
        cudaError_t err_ = (call);                                                               \
        if (err_ != cudaSuccess) {                                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s\n  -> %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorName(err_), cudaGetErrorString(err_));                           \
            exit(EXIT_USAGE);                                                                    \
        }                                                                                        \
    } while (0)

// After every <<<...>>>: a bad launch configuration is reported at the launch.
// Faults inside the kernel surface at the next synchronizing CUDA_CHECK.
#define CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// One line on stderr, then exit 2: "<prefix><message><suffix>".
static inline void vdie(const char* prefix, const char* suffix, const char* fmt, va_list ap) {
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputs(suffix, stderr);
    exit(EXIT_USAGE);
}

// Bad input: one line naming the rule that was broken, exit 2.
static inline void die_usage(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdie("error: ", " (see --help)\n", fmt, ap);
}

// A broken assumption of the program itself, not of its input: exit 2 too.
static inline void die_internal(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdie("internal error: ", "\n", fmt, ap);
}

// Host memory, checked: a failed allocation is exit 2 naming what it was for.
static inline void* xmalloc(size_t bytes, const char* what) {
    void* p = malloc(bytes ? bytes : 1);
    if (!p) die_usage("cannot allocate %zu MiB of host memory for %s", bytes >> 20, what);
    return p;
}

// ---------------------------------------------------------------------------
// 2. The GPU guard and memory
// ---------------------------------------------------------------------------
// Every way of "cannot run here" ends in ONE line on stderr and exit 77, so a
// learner without a Hopper GPU gets a sentence, not a crash, and a checker or
// CI never mistakes it for a pass.
static inline void cannot_run(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(EXIT_CANNOT_RUN);
}

static int g_gpu_in_use = 0;  // set by require_hopper(): before it, no kernel can have run

// Called after the command line is parsed and before any other CUDA call.
static inline void require_hopper(void) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver) {
        int driver = 0;  // CUDA version the installed driver supports; 0 = no driver
        cudaDriverGetVersion(&driver);
        if (driver == 0) cannot_run("no CUDA device found (no NVIDIA driver is installed)");
        cannot_run(
            "CUDA driver too old: it supports CUDA %d.%d, this program was built with CUDA %d.%d; update "
            "the NVIDIA driver",
            driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    }
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) cannot_run("no CUDA device found");
    if (err != cudaSuccess)
        cannot_run("no usable CUDA device: cudaGetDeviceCount returned %s (%s)", cudaGetErrorName(err),
                   cudaGetErrorString(err));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    // The binaries hold sm_90a machine code and no PTX (arch-specific features
    // such as setmaxnreg and tensormap.replace have no portable form), so the
    // driver has nothing to run on any other compute capability.
    if (prop.major != 9 || prop.minor != 0)
        cannot_run("needs compute capability 9.0 (Hopper), found %d.%d (%s)", prop.major, prop.minor,
                   prop.name);
    CUDA_CHECK(cudaSetDevice(0));
    g_gpu_in_use = 1;
}

// Host memory the OS could give us now (MemAvailable), or 0 if unknown.
static inline size_t host_bytes_available(void) {
    FILE* f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[128];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    fclose(f);
    return (size_t)kib << 10;
}

// Sizes are checked against the memory there is BEFORE anything is allocated:
// a size too large is bad input (exit 2 with the numbers), never a crash.
// `what` names the options that asked for it. Host memory is checked with the
// other rules, before require_hopper(); device memory right after it.
static const size_t kMemoryMargin = (size_t)256 << 20;  // CUDA context, events, small buffers

static int g_help_wanted = 0;  // --help: the rules of the arguments are checked, this machine's memory is not

static inline void require_host_memory(const char* what, size_t bytes) {
    if (g_help_wanted) return;
    const size_t avail = host_bytes_available();
    if (avail && bytes + kMemoryMargin > avail)
        die_usage("%s needs %.2f GiB of host memory, only %.2f GiB are available", what, bytes / 1073741824.0,
                  avail / 1073741824.0);
}

// A launch of one block per item: at most 2^31 - 1 blocks in a grid.
static inline void require_grid(const char* what, uint64_t blocks, const char* items) {
    if (blocks > 0x7FFFFFFFull)
        die_usage("%s: %llu %s, one block each, but a grid holds at most 2^31 - 1 blocks", what,
                  (unsigned long long)blocks, items);
}

static inline void require_device_memory(const char* what, size_t bytes) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes + kMemoryMargin > free_b)
        die_usage("%s needs %.2f GiB of device memory, only %.2f GiB are free", what, bytes / 1073741824.0,
                  free_b / 1073741824.0);
}

// ---------------------------------------------------------------------------
// 3. The command line
// ---------------------------------------------------------------------------
// Every program takes --help and --quick (small sizes, few repetitions: for
// sanitizers and smoke runs), plus the standard options it declares in
// `takes` and its own integer options. An option the program does not use is
// not accepted. The whole command line is validated before anything is done,
// --help included: a bad argument anywhere exits 2 naming it, and --help
// prints only when all are good. Each option at most once; a value follows
// its option as "--opt V" or "--opt=V"; a number is plain decimal digits, a
// '-' first only where its range has negatives (no '+', spaces or leading
// zeros). A step's own rules (a multiple of a tile, a TMA rule) are checked
// right after parse_cli, also before require_hopper(), with die_usage().
typedef struct {
    const char* name;    // "--mib"
    const char* meta;    // "N" as shown in --help
    const char* help;    // one line
    long long min, max;  // inclusive range, checked here
    long long full;      // default of a normal run
    long long quick;     // default under --quick
} IntOption;

enum {
    CLI_REPS = 1,  // --reps N: timed repetitions, median reported
    CLI_SEED = 2,  // --seed N: seed of the input data
    CLI_DUMP = 4   // --dump FILE: write the recorded data as JSON
};
#define MAX_OPTIONS 12
#define MAX_REPS 1000

typedef struct {
    const char* usage;      // what the program does: --help's first lines
    unsigned takes;         // CLI_REPS | CLI_SEED | CLI_DUMP
    const IntOption* opts;  // the step's own integer options
    int nopts;
    void (*check)(const struct Cli_*);  // the step's own rules (die_usage), run before --help too; or NULL
} CliSpec;

typedef struct Cli_ {
    int quick;                     // --quick given
    int reps;                      // timed repetitions per measurement (median taken)
    int warmup;                    // untimed runs first (clocks up, caches and TLB warm)
    unsigned seed;                 // seeds the input data
    const char* dump_path;         // --dump FILE, or NULL
    long long value[MAX_OPTIONS];  // the step's options, in the order declared
} Cli;

static inline void print_option(const char* name, const char* meta, const char* help) {
    char left[40];
    snprintf(left, sizeof left, "%s %s", name, meta);
    printf("  %-22s %s\n", left, help);
}

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

// A size option that must split `total` pieces evenly (tiles per block, say):
// exit 2 naming both numbers and the nearest value that works.
static inline void require_divisor(const char* opt, long long value, size_t total, const char* what) {
    if (value > 0 && total % (size_t)value == 0) return;
    size_t d = value > 0 && (size_t)value < total ? (size_t)value : total;
    while (d > 1 && total % d) --d;
    die_usage("%s %lld does not divide the %zu %s: use a divisor of %zu, such as %zu", opt, value, total,
              what, total, d);
}

static inline void print_help(const CliSpec* spec, const char* argv0) {
    printf("%s\nusage: %s [options]\n", spec->usage, argv0);
    print_option("--help", "", "print this and exit");
    print_option("--quick", "", "small sizes and 2 repetitions (sanitizers, smoke runs)");
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
        const IntOption* o = s >= 5 ? &spec->opts[s - 5] : NULL;
        if (o) cli.value[s - 5] = parse_int_arg(o->name, v, o->min, o->max);
    }
    cli.quick = seen[1];
    for (int k = 0; k < spec->nopts; ++k)
        if (!seen[5 + k]) cli.value[k] = cli.quick ? spec->opts[k].quick : spec->opts[k].full;
    if (cli.quick && !seen[2]) cli.reps = 2;
    if (cli.quick) cli.warmup = 1;
    g_help_wanted = seen[0];
    if (spec->check) spec->check(&cli);
    if (seen[0]) {
        print_help(spec, argv[0]);
        exit(EXIT_PASS);
    }
    return cli;
}

// ---------------------------------------------------------------------------
// 4. Seeded data and poison
// ---------------------------------------------------------------------------
// Inputs are a hash of (seed, position): neighbours differ, so a kernel that
// reads the wrong index, skips an element or writes one twice cannot pass.
// Bit 31 is cleared, so no input word ever equals the poison word below.
static inline uint32_t seeded_word(uint32_t seed, uint64_t i) {
    uint64_t z = i + 0x9E3779B97F4A7C15ull * (seed + 1ull);  // splitmix64 finalizer
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (uint32_t)(z >> 32) & 0x7FFFFFFFu;
}

static inline void fill_seeded_words(uint32_t* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) p[i] = seeded_word(seed, i);
}

// Floats in [-1, 1) with 24 significant bits: k * 2^-23 - 1 for a seeded k,
// exact in float32, so arithmetic on them is reproducible bit for bit.
static inline void fill_seeded_floats(float* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) p[i] = (float)(seeded_word(seed, i) >> 7) * (1.0f / 8388608.0f) - 1.0f;
}

// Outputs (and shared buffers, where a step can) are filled with this before a
// kernel runs, so an element the kernel never wrote is a visible mismatch.
// 0xFFFFFFFF is a NaN as float32 and never an input word (bit 31 is clear),
// and it is not zero: a zero-filled element (TMA out-of-bounds fill) that
// should have been data still shows.
#define POISON_BYTE 0xFF
#define POISON_WORD 0xFFFFFFFFu

// Poison device memory ON THE STREAM THAT RUNS THE WORK. A plain cudaMemset
// goes to the legacy default stream, which is not ordered with streams made
// cudaStreamNonBlocking: the memset can land after the kernel and wipe its
// output (step 01's lesson tells how its check caught exactly that).
static inline void poison_device(void* p, size_t bytes, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(p, POISON_BYTE, bytes, stream));
}

// ---------------------------------------------------------------------------
// 5. Bounded waits
// ---------------------------------------------------------------------------
// A kernel that spins on a barrier or a flag hangs forever when its lesson's
// bug is switched on. In this tutorial every such wait is bounded (the wait
// itself is taught with the mbarrier: 03_tma_load/mbarrier.cuh). A wait that
// runs longer than MBAR_TIMEOUT_NS of wall-clock time records who waited on
// what in g_wait_report and GIVES UP; the other waits of the launch give up
// 1 ms later, so the kernel ends (with wrong data, but ends). The check that
// follows prints the report and fails. A trap would lose the report: on the
// H200 neither device printf nor mapped host memory survived one.
//
// The bound is wall-clock time: under a debugger or a slow sanitizer correct
// code can exceed it. `make MBAR_TIMEOUT_NS=...` sets it (0: unbounded, as
// production code would be); this is its one default.
#ifndef MBAR_TIMEOUT_NS
#define MBAR_TIMEOUT_NS 10000000000ull
#endif

typedef struct {
    unsigned int claimed;   // the first thread to time out writes the report
    unsigned int reported;  // 0 until the report is complete, then 1
    unsigned int thread, block[3], line, detail;
    unsigned long long waited_ns;
    char what[40], detail_name[16], file[40];
} WaitReport;

// Not `static`: each program is one translation unit, and the host reads it.
__device__ WaitReport g_wait_report;

// Host: after the launches that waited have finished, take the report of a
// wait that gave up, if any, as one line into `text`, and clear it for the
// next launch. Returns 1 if there was one.
static inline int take_wait_report(char* text, size_t cap) {
    if (!g_gpu_in_use) return 0;
    WaitReport r;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpyFromSymbol(&r, g_wait_report, sizeof r));
    if (!r.reported) return 0;
    snprintf(
        text, cap,
        "hung: block (%u,%u,%u) thread %u gave up after %.1f s waiting on %s (%s:%u), %s %u; the launch's "
        "other waits gave up too",
        r.block[0], r.block[1], r.block[2], r.thread, r.waited_ns * 1e-9, r.what, r.file, r.line,
        r.detail_name, r.detail);
    memset(&r, 0, sizeof r);
    CUDA_CHECK(cudaMemcpyToSymbol(g_wait_report, &r, sizeof r));
    return 1;
}

// ---------------------------------------------------------------------------
// 6. Checking
// ---------------------------------------------------------------------------
static int g_checks_failed = 0;  // finish() turns this into the exit code

// Prints one "check" line (deterministic: it goes into expected_output.txt);
// `hung`, if not NULL, is a bounded wait's report, printed under it.
// Returns 1 if the check failed.
static inline int print_check_line(const char* name, size_t wrong, size_t total, const char* hung) {
    char dots[40];
    const int len = (int)strlen(name), ndots = len < 30 ? 30 - len : 3;
    memset(dots, '.', (size_t)ndots);
    dots[ndots] = '\0';
    const int failed = wrong || hung;
    printf("check  %s %s %s  (%zu of %zu wrong)\n", name, dots, failed ? "FAIL" : "PASS", wrong, total);
    if (hung) printf("       %s\n", hung);
    if (failed) g_checks_failed++;
    return failed;
}

// The check line of a part, with the report of any bounded wait that gave up
// since the last check: a part that hung fails even if its data came out right.
// Returns 1 if the check failed.
static inline int report_check(const char* name, size_t wrong, size_t total) {
    char hung[320];
    const int did_hang = take_wait_report(hung, sizeof hung);
    return print_check_line(name, wrong, total, did_hang ? hung : NULL);
}

// How many of n 32-bit words differ, bit for bit (float data is compared as
// its bits: a copy must move bits, and NaN != NaN would hide nothing); the
// first `cap` positions go to first_at.
static inline size_t count_wrong(const uint32_t* got, const uint32_t* want, size_t n, size_t* first_at,
                                 size_t cap) {
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i]) {
            if (wrong < cap) first_at[wrong] = i;
            ++wrong;
        }
    return wrong;
}

// The comparator: prints the check line and, on failure, the first few wrong
// elements. Returns the count of wrong words, at least 1 if a wait hung: 0
// means the check passed (and the part may be timed).
static inline size_t check_words(const char* name, const uint32_t* got, const uint32_t* want, size_t n) {
    enum { SHOW = 5 };
    size_t shown_at[SHOW];
    const size_t wrong = count_wrong(got, want, n, shown_at, SHOW);
    const int failed = report_check(name, wrong, n);
    for (size_t k = 0; k < wrong && k < SHOW; ++k) {
        const size_t i = shown_at[k];
        printf("       [%zu] got 0x%08x want 0x%08x%s\n", i, got[i], want[i],
               got[i] == POISON_WORD ? "  (poison: never written)" : "");
    }
    return failed && !wrong ? 1 : wrong;
}

// One pinned buffer, grown on demand, for reading outputs back.
static uint32_t* g_readback = NULL;
static size_t g_readback_bytes = 0;

// Reads n words of device memory back (after the work on `stream`) into the
// shared readback buffer and returns it.
static inline const uint32_t* read_back(const void* dev, size_t n, cudaStream_t stream) {
    if (n * 4 > g_readback_bytes) {
        if (g_readback) CUDA_CHECK(cudaFreeHost(g_readback));
        CUDA_CHECK(cudaMallocHost((void**)&g_readback, n * 4));
        g_readback_bytes = n * 4;
    }
    memset(g_readback, POISON_BYTE, n * 4);
    CUDA_CHECK(cudaMemcpyAsync(g_readback, dev, n * 4, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return g_readback;
}

// The usual check: read n words back and compare them with `want` (check_words).
static inline size_t check_device(const char* name, const void* dev, const uint32_t* want, size_t n,
                                  cudaStream_t stream) {
    return check_words(name, read_back(dev, n, stream), want, n);
}

// The usual part, in one statement: poison `out`, run `launch` once and check
// its `words` words against `want`, then time `launch` as the PERF line `name`
// with `bytes` read plus written per run. `launch` is the kernel launch (or
// any statement that enqueues the work on `stream`). A part whose check failed
// is not timed: its time would describe a wrong kernel (and a hung one would
// hang again, once per repetition).
#define CHECK_AND_TIME(name, cli, stream, out, want, words, bytes, ...)                                   \
    do {                                                                                                  \
        poison_device((out), (size_t)(words) * 4, (stream));                                              \
        CHECK_THEN_TIME(name, cli, stream, bytes, check_device((name), (out), (want), (words), (stream)), \
                        __VA_ARGS__);                                                                     \
    } while (0)

static inline int timing_wanted(const Cli* cli) {  // a function: `&cli != NULL` would warn
    return cli != NULL;
}

// The same with a check of the step's own: `check` is an expression that
// returns 0 when the output is right (it runs after the first launch). With
// cli NULL the part is checked and not timed.
#define CHECK_THEN_TIME(name, cli, stream, bytes, check, ...)                                  \
    do {                                                                                       \
        __VA_ARGS__;                                                                           \
        CHECK_LAUNCH();                                                                        \
        if ((check) == 0 && timing_wanted(cli))                                                \
            for (Timer t_ = timer_begin((cli), (stream), (name), (bytes)); timer_next(&t_);) { \
                __VA_ARGS__;                                                                   \
                CHECK_LAUNCH();                                                                \
            }                                                                                  \
    } while (0)

// A result that is one number (a sum): exact comparison, shown on failure.
// Returns 1 if the check failed.
static inline int check_value(const char* name, unsigned long long got, unsigned long long want) {
    const int failed = report_check(name, got != want, 1);
    if (got != want) printf("       got %llu want %llu\n", got, want);
    return failed;
}

// ---------------------------------------------------------------------------
// 7. Timing: CUDA events, warm-up, median -> a PERF line
// ---------------------------------------------------------------------------
//     for (Timer t = timer_begin(&cli, s, "copy_float4", 2.0 * bytes); timer_next(&t);)
//         copy_float4<<<grid, threads, 0, s>>>(...);
// runs the body `warmup` times untimed, then `reps` times between two events
// on stream s, and records the median as the PERF line "copy_float4" with
// `bytes` (read plus written) per run. Events time the GPU's own timeline, so
// host-side launch cost between repetitions is not counted. With name NULL
// nothing is recorded: the median is left in t.median_ms. Time only what was
// checked and passed (CHECK_AND_TIME does). If a bounded wait gave up during
// the timed runs, the timer prints a failing check line for them instead of
// a PERF line, so the hang is blamed on this part, not on the next check.
typedef struct {
    cudaStream_t stream;
    const char* name;
    double bytes;
    int i, warmup, reps;
    cudaEvent_t start, stop;
    float samples[MAX_REPS];
    float median_ms;
} Timer;

static inline int compare_floats(const void* a, const void* b) {
    const float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

static inline float median_of(float* v, int n) {
    qsort(v, (size_t)n, sizeof v[0], compare_floats);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

static inline void record_perf(const char* name, float ms, double bytes);

static inline Timer timer_begin(const Cli* cli, cudaStream_t stream, const char* name, double bytes) {
    Timer t;
    t.stream = stream;
    t.name = name;
    t.bytes = bytes;
    t.i = 0;
    t.warmup = cli->warmup;
    t.reps = cli->reps;
    t.median_ms = 0.f;
    CUDA_CHECK(cudaEventCreate(&t.start));
    CUDA_CHECK(cudaEventCreate(&t.stop));
    return t;
}

// Before each run: closes the previous timed run and opens the next one.
// Returns 0 when every run is done, after recording the median.
static inline int timer_next(Timer* t) {
    if (t->i > t->warmup) {  // timed run number i - warmup - 1 just ended
        CUDA_CHECK(cudaEventRecord(t->stop, t->stream));
        CUDA_CHECK(cudaEventSynchronize(t->stop));
        CUDA_CHECK(cudaEventElapsedTime(&t->samples[t->i - t->warmup - 1], t->start, t->stop));
    } else if (t->i == t->warmup) {  // the warm-up runs are done
        CUDA_CHECK(cudaStreamSynchronize(t->stream));
    }
    if (t->i == t->warmup + t->reps) {
        CUDA_CHECK(cudaEventDestroy(t->start));
        CUDA_CHECK(cudaEventDestroy(t->stop));
        t->median_ms = median_of(t->samples, t->reps);
        char hung[320], what[64];
        if (take_wait_report(hung, sizeof hung)) {
            snprintf(what, sizeof what, "%s_timed_runs", t->name ? t->name : "untimed_part");
            print_check_line(what, 1, 1, hung);
            t->median_ms = 0.f;
        } else if (t->name) {
            record_perf(t->name, t->median_ms, t->bytes);
        }
        return 0;
    }
    if (t->i >= t->warmup) CUDA_CHECK(cudaEventRecord(t->start, t->stream));
    ++t->i;
    return 1;
}

// ---------------------------------------------------------------------------
// 8. The output contract
// ---------------------------------------------------------------------------
static inline void print_header(const char* step, const char* title) {
    printf("== %s: %s\n", step, title);
}

// Machine-dependent lines, kept in order until finish() prints them.
enum { LINE_GPU, LINE_PERF, LINE_TIME };
typedef struct {
    int kind;
    char text[360];  // GPU and TIME lines: the text after the prefix; PERF: the name
    float ms;
    double bytes;
} MachineLine;
#define MAX_MACHINE_LINES 96
static MachineLine g_lines[MAX_MACHINE_LINES];
static int g_nlines = 0;

static inline MachineLine* new_machine_line(int kind) {
    if (g_nlines == MAX_MACHINE_LINES) die_internal("more than %d GPU/PERF/TIME lines", MAX_MACHINE_LINES);
    MachineLine* l = &g_lines[g_nlines++];
    l->kind = kind;
    return l;
}

// bytes: bytes read plus bytes written by one run of the measured work.
static inline void record_perf(const char* name, float ms, double bytes) {
    MachineLine* l = new_machine_line(LINE_PERF);
    snprintf(l->text, sizeof l->text, "%s", name);
    l->ms = ms;
    l->bytes = bytes;
}

// The median time recorded for a PERF line (parts that build on another's),
// or 0 if that part was not timed (its check failed).
static inline float perf_ms(const char* name) {
    for (int i = 0; i < g_nlines; ++i)
        if (g_lines[i].kind == LINE_PERF && !strcmp(g_lines[i].text, name)) return g_lines[i].ms;
    return 0.f;
}

static inline void vrecord_line(int kind, const char* fmt, va_list ap) {
    MachineLine* l = new_machine_line(kind);
    vsnprintf(l->text, sizeof l->text, fmt, ap);
}

// A GPU line of the step's own (how it launched, what the occupancy API said).
static inline void record_gpu_line(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vrecord_line(LINE_GPU, fmt, ap);
    va_end(ap);
}

// A TIME line: a machine-dependent measurement that is not a bandwidth.
static inline void record_time_line(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vrecord_line(LINE_TIME, fmt, ap);
    va_end(ap);
}

// cudaMemcpy device-to-device of `bytes`, the reference every PERF line is a
// fraction of: a ratio against this GPU, today, at these sizes, never against
// a datasheet peak. dst and src are distinct and at least `bytes` long.
static inline void measure_memcpy_reference(void* dst, const void* src, size_t bytes, const Cli* cli,
                                            cudaStream_t s) {
    for (Timer t = timer_begin(cli, s, "cudaMemcpy_D2D", 2.0 * bytes); timer_next(&t);)
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
}

// "580.159.04" from the kernel module, when Linux exposes it; else empty.
static inline void nvidia_driver_version(char* out, size_t cap) {
    out[0] = '\0';
    FILE* f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512];
    if (fgets(line, sizeof line, f)) {
        for (char* p = strtok(line, " \t\n"); p; p = strtok(NULL, " \t\n")) {
            unsigned major = 0, minor = 0;
            if (sscanf(p, "%u.%u", &major, &minor) == 2) {
                snprintf(out, cap, "%s", p);
                break;
            }
        }
    }
    fclose(f);
}

static inline void print_gpu(void) {
    int dev = 0, rt = 0, sms = 0, l2 = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    char module[64];
    nvidia_driver_version(module, sizeof module);
    printf("GPU    %s (sm_%d%d, %d SMs, %d MiB L2) CUDA %d.%d driver %s\n", prop.name, prop.major, prop.minor,
           sms, l2 >> 20, rt / 1000, rt % 1000 / 10, module[0] ? module : "(version unknown)");
}

// The last line, and the exit code it agrees with.
static inline int print_result(void) {
    printf("RESULT: %s\n", g_checks_failed ? "FAIL" : "PASS");
    return g_checks_failed ? EXIT_WRONG : EXIT_PASS;
}

// The machine-dependent lines, then the last line. Its verdict and the exit
// code always agree.
static inline int finish(void) {
    CUDA_CHECK(cudaDeviceSynchronize());
    char hung[320];
    if (take_wait_report(hung, sizeof hung))  // a wait gave up after the last check
        print_check_line("waits_of_the_timed_runs", 1, 1, hung);
    double memcpy_gbps = 0.0;
    for (int i = 0; i < g_nlines; ++i)
        if (g_lines[i].kind == LINE_PERF && !strcmp(g_lines[i].text, "cudaMemcpy_D2D"))
            memcpy_gbps = g_lines[i].bytes / (g_lines[i].ms * 1e-3) / 1e9;
    print_gpu();
    for (int i = 0; i < g_nlines; ++i)
        if (g_lines[i].kind == LINE_GPU) printf("GPU    %s\n", g_lines[i].text);
    for (int i = 0; i < g_nlines; ++i) {
        const MachineLine* l = &g_lines[i];
        if (l->kind == LINE_TIME) printf("TIME   %s\n", l->text);
        if (l->kind != LINE_PERF) continue;
        if (memcpy_gbps <= 0.0) {
            if (!g_checks_failed)
                die_internal("PERF %s recorded without the cudaMemcpy_D2D reference", l->text);
            // The reference's own check failed, so it was not timed: no fraction to print.
            printf("note   %s %.3f ms: no %% of memcpy, the cudaMemcpy_D2D reference was not timed\n",
                   l->text, l->ms);
            continue;
        }
        const double gbps = l->bytes / (l->ms * 1e-3) / 1e9;
        printf("PERF   %-24s %9.3f ms %8.1f GB/s %6.1f %% of memcpy\n", l->text, l->ms, gbps,
               100.0 * gbps / memcpy_gbps);
    }
    if (g_readback) CUDA_CHECK(cudaFreeHost(g_readback));
    return print_result();
}
