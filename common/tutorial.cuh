// tutorial.cuh: the harness every step shares. Nothing in it is a lesson; read it once.
//   1. errors and exit codes   CUDA_CHECK, die_usage (2), cannot_run (77), xmalloc
//   2. the command line        parse_cli, require_divisor (in common/cli.h)
//   3. the guard               require_hopper, require_host/device_memory
//   4. seeded data and poison  fill_seeded_words/floats, poison_device
//   5. bounded waits           the report a wait that gave up leaves for the host
//   6. checking                check_words, check_device, check_value -> "check" lines
//   7. timing                  Timer: events, warm-up, median -> a PERF line
//   8. the output contract     "==", "check" and note lines, then GPU, PERF, TIME
//                              lines, then "RESULT: PASS|FAIL" (agrees with the exit code)
// Written for CUDA 12.0 or newer (sm_90a, PTX ISA 8.0); tested with CUDA 13.0.
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

#include "common/shadow/hooks.h"  // empty macros, unless built for the protocol checker (-DTUTORIAL_SHADOW)

// ---- 1. Errors and exit codes ----------------------------------------------
enum {
    EXIT_PASS = 0,        // every check passed
    EXIT_WRONG = 1,       // a correctness check failed
    EXIT_USAGE = 2,       // bad arguments, or a CUDA error
    EXIT_CANNOT_RUN = 77  // no GPU / not Hopper / driver too old: never a pass
};

// A CUDA error is exit 2 naming the call and the place: never a check result.
#define CUDA_CHECK(call)                                                                         \
    do {                                                                                         \
        cudaError_t err_ = (call);                                                               \
        if (err_ != cudaSuccess) {                                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s\n  -> %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorName(err_), cudaGetErrorString(err_));                           \
            exit(EXIT_USAGE);                                                                    \
        }                                                                                        \
    } while (0)

// After every <<<...>>>: a bad launch configuration is reported at the launch;
// a fault inside the kernel surfaces at the next synchronizing CUDA_CHECK.
#define CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// One sentence on stderr, printf-style between a prefix and a suffix, and the exit code.
static inline void die_with(int code, const char* prefix, const char* suffix, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputs(suffix, stderr);
    exit(code);
}
#define die_usage(...) die_with(EXIT_USAGE, "error: ", " (see --help)\n", __VA_ARGS__)  // bad input: the rule
#define die_internal(...) die_with(EXIT_USAGE, "internal error: ", "\n", __VA_ARGS__)   // our own assumption
// Every way of "cannot run here" is one sentence and exit 77, so a learner
// without a Hopper GPU gets no crash, and a checker or CI never sees a pass.
#define cannot_run(...) die_with(EXIT_CANNOT_RUN, "", "\n", __VA_ARGS__)

static inline void* xmalloc(size_t bytes, const char* what) {
    void* p = malloc(bytes ? bytes : 1);
    if (!p) die_usage("cannot allocate %zu MiB of host memory for %s", bytes >> 20, what);
    return p;
}

// The protocol checker's hooks (-DTUTORIAL_SHADOW, make shadow-NN): nothing in a normal build.
#include "common/shadow/shadow.cuh"

// ---- 2. The command line: parse_cli, require_divisor (common/cli.h) --------------
#include "cli.h"

// ---- 3. The guard ------------------------------------------------------------
static int g_gpu_in_use = 0;  // set by require_hopper(): before it, no kernel can have run

// Called after the command line is checked and before any other CUDA call.
static inline void require_hopper(void) {
    int count = 0, driver = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver) {
        cudaDriverGetVersion(&driver);  // the CUDA version the driver supports; 0 = no driver
        if (driver == 0) cannot_run("no CUDA device found (no NVIDIA driver is installed)");
        cannot_run(
            "CUDA driver too old: it supports CUDA %d.%d, this program was built with CUDA %d.%d; "
            "update the NVIDIA driver",
            driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    }
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) cannot_run("no CUDA device found");
    if (err != cudaSuccess)
        cannot_run("no usable CUDA device: cudaGetDeviceCount returned %s (%s)", cudaGetErrorName(err),
                   cudaGetErrorString(err));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    // The binaries hold sm_90a machine code and no PTX (setmaxnreg and
    // tensormap.replace have no portable form): nothing to run elsewhere.
    if (prop.major != 9 || prop.minor != 0)
        cannot_run("needs compute capability 9.0 (Hopper), found %d.%d (%s)", prop.major, prop.minor,
                   prop.name);
    CUDA_CHECK(cudaSetDevice(0));
    g_gpu_in_use = 1;
}

// Sizes are checked against the memory there is BEFORE anything is allocated:
// too large is bad input (exit 2 naming `what` asked for it), never a crash.
static const size_t kMemoryMargin = (size_t)256 << 20;  // CUDA context, events, small buffers

static inline void require_host_memory(const char* what, size_t bytes) {
    unsigned long long kib = 0;  // MemAvailable: what the OS could give us now
    char line[128];
    FILE* f = g_help_wanted ? NULL : fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof line, f) && sscanf(line, "MemAvailable: %llu kB", &kib) != 1) continue;
    if (f) fclose(f);
    const size_t avail = (size_t)kib << 10;
    if (avail && bytes + kMemoryMargin > avail)
        die_usage("%s needs %.2f GiB of host memory, only %.2f GiB are available", what, bytes / 1073741824.0,
                  avail / 1073741824.0);
}

static inline void require_device_memory(const char* what, size_t bytes) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes + kMemoryMargin > free_b)
        die_usage("%s needs %.2f GiB of device memory, only %.2f GiB are free", what, bytes / 1073741824.0,
                  free_b / 1073741824.0);
}

// ---- 4. Seeded data and poison -----------------------------------------------
// Outputs are filled with the poison before a kernel runs, so an element it
// never wrote shows: a NaN as float32, and not zero (a TMA's out-of-bounds
// zero fill shows). Inputs are a hash of (seed, position): neighbours differ,
// so a wrong index, a skipped or a doubled element cannot pass. Every input
// word is masked to 31 bits and the poison has bit 31 set: no input word is
// ever the poison (the static_assert is the proof).
#define POISON_BYTE 0xFF
#define POISON_WORD 0xFFFFFFFFu
#define SEEDED_MASK 0x7FFFFFFFu
static_assert((POISON_WORD & SEEDED_MASK) != POISON_WORD, "a masked input word could be the poison");

static inline __host__ __device__ uint32_t seeded_word(uint32_t seed, uint64_t i) {  // (10 hashes on the GPU)
    uint64_t z = i + 0x9E3779B97F4A7C15ull * (seed + 1ull);                          // splitmix64 finalizer
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (uint32_t)(z >> 32) & SEEDED_MASK;
}

static inline void fill_seeded_words(uint32_t* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) p[i] = seeded_word(seed, i);
}

// A seeded word as the float k * 2^-23 - 1 in [-1, 1), k = w >> 7 (24 bits):
// exact, so sums are reproducible, and never NaN (unit_tutorial.cu tries every k).
static inline float seeded_float(uint32_t w) {
    return (float)(w >> 7) * (1.0f / 8388608.0f) - 1.0f;
}
static inline void fill_seeded_floats(float* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) p[i] = seeded_float(seeded_word(seed, i));
}

// ON THE STREAM THAT RUNS THE WORK: a plain cudaMemset goes to the legacy
// default stream, which is not ordered with cudaStreamNonBlocking streams, and
// can land after the kernel and wipe its output (step 01 tells the story).
static inline void poison_device(void* p, size_t bytes, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(p, POISON_BYTE, bytes, stream));
}

// ---- 5. Bounded waits --------------------------------------------------------
// Every spin on a barrier or flag in this tutorial is bounded (the wait is taught in
// 03_tma_load/mbarrier.cuh). A wait that runs longer than MBAR_TIMEOUT_NS of wall-clock time writes who
// waited on what here and GIVES UP; the launch's other waits give up 1 ms later, so the kernel ends (with
// wrong data). The next check prints the report and fails. A trap would lose the report: on the H200 neither
// device printf nor mapped host memory survived one. Under a debugger or a slow sanitizer correct code can
// exceed the bound: `make MBAR_TIMEOUT_NS=...` sets it (0: unbounded).
#ifndef MBAR_TIMEOUT_NS
#define MBAR_TIMEOUT_NS 10000000000ull
#endif

typedef struct {
    unsigned int claimed, reported;  // the first thread to time out writes it; 1 once complete
    unsigned int thread, block[3], line, detail;
    unsigned long long waited_ns;
    char what[40], detail_name[16], file[40];
} WaitReport;

__device__ WaitReport g_wait_report;  // not static: each program is one translation unit

// Host, after the launches that waited: the report of a wait that gave up, as
// one line into `text`, cleared for the next launch. Returns 1 if there was one.
#define REPORT_CAP 1024
static inline int take_wait_report(char* text, size_t cap) {
    if (!g_gpu_in_use) return 0;
    WaitReport r;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpyFromSymbol(&r, g_wait_report, sizeof r));
    if (!r.reported) return 0;
    snprintf(text, cap,
             "hung: block (%u,%u,%u) thread %u gave up after %.1f s waiting on %s (%s:%u), %s %u; the "
             "launch's other waits gave up too",
             r.block[0], r.block[1], r.block[2], r.thread, r.waited_ns * 1e-9, r.what, r.file, r.line,
             r.detail_name, r.detail);
    memset(&r, 0, sizeof r);
    CUDA_CHECK(cudaMemcpyToSymbol(g_wait_report, &r, sizeof r));
    return 1;
}

// ---- 6. Checking -------------------------------------------------------------
static int g_checks_failed = 0;  // finish() turns this into the exit code

// One "check" line (deterministic: it is in expected_output.txt), with a bounded
// wait's report under it: a part that hung fails even if its data came out
// right. Pass the report in `hung`, or NULL to take any since the last check.
// Returns 1 if the check failed.
static inline int report_check_hung(const char* name, size_t wrong, size_t total, const char* hung) {
    char taken[REPORT_CAP];
    if (!hung && take_wait_report(taken, sizeof taken)) hung = taken;
    const int len = (int)strlen(name), ndots = len < 30 ? 30 - len : 3, failed = wrong || hung;
    printf("check  %s %.*s %s  (%zu of %zu wrong)\n", name, ndots, "..............................",
           failed ? "FAIL" : "PASS", wrong, total);
    if (hung) printf("       %s\n", hung);
    g_checks_failed += failed;
    return failed;
}
static inline int report_check(const char* name, size_t wrong, size_t total) {
    return report_check_hung(name, wrong, total, NULL);
}

// How many of n 32-bit words differ, bit for bit (floats too: a copy moves
// bits, and NaN != NaN would hide nothing); the first `cap` positions to first_at.
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

// The comparator: the check line and, on failure, the first wrong elements.
// Returns the count of wrong words, at least 1 if a wait hung: 0 = passed.
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

// n words of device memory, read back after the work on `stream` into one
// pinned buffer (grown on demand).
static uint32_t* g_readback = NULL;
static size_t g_readback_bytes = 0;
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

static inline size_t check_device(const char* name, const void* dev, const uint32_t* want, size_t n,
                                  cudaStream_t stream) {
    return check_words(name, read_back(dev, n, stream), want, n);
}

// A result that is one number (a sum): exact, shown on failure. 1 if it failed.
static inline int check_value(const char* name, unsigned long long got, unsigned long long want) {
    const int failed = report_check(name, got != want, 1);
    if (got != want) printf("       got %llu want %llu\n", got, want);
    return failed;
}

// A part in one statement: run the launch statement(s) once, then `check`, an expression that is 0 when the
// output is right; only then time the launch as PERF line `name` with `bytes` read plus written per run (cli
// NULL: not timed). A failed part is not timed: its time would describe a wrong kernel (and a hung one would
// hang again, once per repetition). CHECK_AND_TIME is the usual case: poison `out`, compare `words` with
// `want`. (timing_wanted is a function because `&cli != NULL` in a macro would warn.)
static inline int timing_wanted(const Cli* cli) {
    return cli != NULL;
}
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
#define CHECK_AND_TIME(name, cli, stream, out, want, words, bytes, ...)                                   \
    do {                                                                                                  \
        poison_device((out), (size_t)(words) * 4, (stream));                                              \
        CHECK_THEN_TIME(name, cli, stream, bytes, check_device((name), (out), (want), (words), (stream)), \
                        __VA_ARGS__);                                                                     \
    } while (0)

// ---- 7. Timing ---------------------------------------------------------------
//     for (Timer t = timer_begin(&cli, s, "copy_float4", 2.0 * bytes); timer_next(&t);)
//         copy_float4<<<grid, threads, 0, s>>>(...);
// runs the body `warmup` times untimed, then `reps` times, each between two events on stream s (the GPU's own
// timeline: host launch cost is not counted), and records the median as the PERF line "copy_float4" with
// `bytes` per run; with name NULL only t.median_ms is set. If a bounded wait gave up in the timed runs, a
// failing check line names this part instead.
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
    Timer t = {};  // no run done, no sample taken
    t.stream = stream, t.name = name, t.bytes = bytes, t.warmup = cli->warmup, t.reps = cli->reps;
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
        char hung[REPORT_CAP], what[64];
        if (take_wait_report(hung, sizeof hung)) {
            snprintf(what, sizeof what, "%s_timed_runs", t->name ? t->name : "untimed_part");
            report_check_hung(what, 1, 1, hung);
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

// ---- 8. The output contract ----------------------------------------------------
static inline void print_header(const char* step, const char* title) {
    printf("== %s: %s\n", step, title);
}

// Machine-dependent lines, kept in order until finish() prints them.
typedef struct {
    char kind;       // 'G' (GPU), 'P' (PERF), 'T' (TIME)
    char text[360];  // GPU and TIME: the text after the prefix; PERF: the name
    float ms;
    double bytes;  // PERF: bytes read plus written by one run of the measured work
} MachineLine;
#define MAX_MACHINE_LINES 96
static MachineLine g_lines[MAX_MACHINE_LINES];
static int g_nlines = 0;

static inline MachineLine* new_line(char kind) {
    if (g_nlines == MAX_MACHINE_LINES) die_internal("more than %d GPU/PERF/TIME lines", MAX_MACHINE_LINES);
    g_lines[g_nlines].kind = kind;
    return &g_lines[g_nlines++];
}
#define RECORD_FUNCTION(name, kind)                                       \
    static inline void name(const char* fmt, ...) {                       \
        va_list ap;                                                       \
        va_start(ap, fmt);                                                \
        vsnprintf(new_line(kind)->text, sizeof g_lines[0].text, fmt, ap); \
        va_end(ap);                                                       \
    }
RECORD_FUNCTION(record_gpu_line, 'G')   // the step's own GPU line (how it launched, occupancy)
RECORD_FUNCTION(record_time_line, 'T')  // a machine-dependent measurement that is not a bandwidth

static inline void record_perf(const char* name, float ms, double bytes) {
    MachineLine* l = new_line('P');
    snprintf(l->text, sizeof l->text, "%s", name);
    l->ms = ms;
    l->bytes = bytes;
}

// The median time of a PERF line, or 0 if that part was not timed (it failed).
static inline float perf_ms(const char* name) {
    for (int i = 0; i < g_nlines; ++i)
        if (g_lines[i].kind == 'P' && !strcmp(g_lines[i].text, name)) return g_lines[i].ms;
    return 0.f;
}

// cudaMemcpy device-to-device of `bytes`: the reference every PERF line is a fraction of, measured on this
// GPU, now, at these sizes (never a datasheet peak). dst and src are distinct and at least `bytes` long.
static inline void measure_memcpy_reference(void* dst, const void* src, size_t bytes, const Cli* cli,
                                            cudaStream_t s) {
    for (Timer t = timer_begin(cli, s, "cudaMemcpy_D2D", 2.0 * bytes); timer_next(&t);)
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
}

static inline void print_gpu(void) {
    int rt = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    // The driver's version ("580.159.04") from the kernel module, when Linux exposes it.
    char line[512], module[64] = "(version unknown)";
    FILE* f = fopen("/proc/driver/nvidia/version", "r");
    unsigned major, minor;
    if (f && fgets(line, sizeof line, f))
        for (char* p = strtok(line, " \t\n"); p; p = strtok(NULL, " \t\n"))
            if (sscanf(p, "%u.%u", &major, &minor) == 2) {
                snprintf(module, sizeof module, "%s", p);
                break;
            }
    if (f) fclose(f);
    printf("GPU    %s (sm_%d%d, %d SMs, %d MiB L2) CUDA %d.%d driver %s\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize >> 20, rt / 1000, rt % 1000 / 10, module);
}

static inline int print_result(void) {
    printf("RESULT: %s\n", g_checks_failed ? "FAIL" : "PASS");
    return g_checks_failed ? EXIT_WRONG : EXIT_PASS;
}

// The machine lines, in order: GPU, TIME and PERF. A PERF line is its work (bytes, or step 09's flops) per
// second in `unit` (1 unit = `scale`), and that as a percent of the same work's reference, whose time in ms
// the step's `reference_ms` returns for the line (0: the reference was not timed, so the line gets no
// percent; that is only allowed when a check failed).
static inline int finish_against(double (*reference_ms)(const MachineLine*), const char* unit, double scale,
                                 const char* of) {
    CUDA_CHECK(cudaDeviceSynchronize());
    char hung[REPORT_CAP];
    if (take_wait_report(hung, sizeof hung))  // a wait gave up after the last check
        report_check_hung("waits_of_the_timed_runs", 1, 1, hung);
    print_gpu();
    for (int i = 0; i < g_nlines; ++i)
        if (g_lines[i].kind == 'G') printf("GPU    %s\n", g_lines[i].text);
    for (int i = 0; i < g_nlines; ++i) {
        const MachineLine* l = &g_lines[i];
        if (l->kind == 'T') printf("TIME   %s\n", l->text);
        if (l->kind != 'P') continue;
        const double ref = reference_ms(l);
        if (ref <= 0.0) {
            if (!g_checks_failed) die_internal("PERF %s recorded without its %s reference", l->text, of);
            printf("note   %s %.3f ms: no %% of %s, its reference was not timed\n", l->text, l->ms, of);
            continue;
        }
        printf("PERF   %-24s %9.3f ms %8.1f %s %6.1f %% of %s\n", l->text, l->ms,
               l->bytes / (l->ms * 1e-3) / scale, unit, 100.0 * ref / l->ms, of);
    }
    if (g_readback) CUDA_CHECK(cudaFreeHost(g_readback));
    return print_result();
}

// Every data-movement step: bandwidth against cudaMemcpy_D2D, whose time is
// scaled to the line's bytes (a part may move more or fewer bytes than it).
static inline double memcpy_reference_ms(const MachineLine* l) {
    for (int i = 0; i < g_nlines; ++i)
        if (g_lines[i].kind == 'P' && !strcmp(g_lines[i].text, "cudaMemcpy_D2D"))
            return g_lines[i].ms * l->bytes / g_lines[i].bytes;
    return 0.0;
}
static inline int finish(void) {
    return finish_against(memcpy_reference_ms, "GB/s", 1e9, "memcpy");
}
