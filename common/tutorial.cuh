// tutorial.cuh: the plumbing every step shares, and nothing else.
//
// Read it once; after that each step's .cu reads on its own. What is here:
//   1. exit codes and error checks      CUDA_CHECK, CHECK_LAUNCH, die_usage
//   2. the GPU guard                    require_hopper(): exit 77 before any GPU work
//   3. the command line                 --help --quick --reps --seed, step sizes, require_divisor
//   4. seeded data and poison           fill_seeded_words/floats, poison_device
//   5. the comparator                   check_words(), print_check_line(): the "check" lines
//   6. timing and launch shapes         events, warm-up, median; persistent_grid,
//                                       smem_for_one_block_per_sm; smem_u32, gmem_u64
//   7. the output contract              print_header, print_gpu, PERF lines, finish
//
// The output contract (DESIGN.md): deterministic lines first ("==", "problem:",
// "check"), then machine-dependent lines that begin with GPU, PERF or TIME,
// then "RESULT: PASS" or "RESULT: FAIL". tools/checker.py parses exactly this.
//
// Oldest toolkit this code is written for: CUDA 12.0 (first with sm_90a and
// PTX ISA 8.0). Tested with CUDA 13.0. Calls that need a newer toolkit are
// guarded with CUDART_VERSION where a step uses them.
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
// 1. Exit codes and error checks
// ---------------------------------------------------------------------------
enum {
    EXIT_PASS = 0,        // every check passed
    EXIT_WRONG = 1,       // a correctness check failed
    EXIT_USAGE = 2,       // bad arguments, or a CUDA error
    EXIT_CANNOT_RUN = 77  // no GPU / not Hopper / driver too old: never a pass
};

// One idiom for every runtime call. A CUDA error is exit 2 with the call, the
// place and the error's name; it never reads as a correctness result.
#define CUDA_CHECK(call)                                                          \
    do {                                                                          \
        cudaError_t err_ = (call);                                                \
        if (err_ != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error at %s:%d: %s\n  -> %s: %s\n", __FILE__,   \
                    __LINE__, #call, cudaGetErrorName(err_),                      \
                    cudaGetErrorString(err_));                                    \
            exit(EXIT_USAGE);                                                     \
        }                                                                         \
    } while (0)

// After every <<<...>>>: a bad launch configuration is reported here, at the
// launch, not at some later unrelated call. Faults inside the kernel surface at
// the next synchronizing CUDA_CHECK.
#define CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// Bad input: one line naming the rule that was broken, exit 2.
static inline void die_usage(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    exit(EXIT_USAGE);
}

// ---------------------------------------------------------------------------
// 2. The GPU guard
// ---------------------------------------------------------------------------
// Called after the command line is parsed and before any other CUDA call.
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

static inline void require_hopper(void) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver) {
        int driver = 0;  // CUDA version the installed driver supports; 0 = no driver
        cudaDriverGetVersion(&driver);
        if (driver == 0)
            cannot_run("no CUDA device found (no NVIDIA driver is installed)");
        cannot_run("CUDA driver too old: it supports CUDA %d.%d, this program was built "
                   "with CUDA %d.%d; update the NVIDIA driver",
                   driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000,
                   CUDART_VERSION % 1000 / 10);
    }
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
        cannot_run("no CUDA device found");
    if (err != cudaSuccess)
        cannot_run("no usable CUDA device: cudaGetDeviceCount returned %s (%s)",
                   cudaGetErrorName(err), cudaGetErrorString(err));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    // The binaries hold sm_90a machine code only (arch-specific features such as
    // setmaxnreg and tensormap.replace have no portable PTX), so 9.0 exactly.
    if (prop.major != 9 || prop.minor != 0)
        cannot_run("needs compute capability 9.0 (Hopper), found %d.%d (%s)", prop.major,
                   prop.minor, prop.name);
    CUDA_CHECK(cudaSetDevice(0));
}

// ---------------------------------------------------------------------------
// 3. The command line
// ---------------------------------------------------------------------------
// Every program takes --help, --quick, --reps N, --seed N, plus the integer
// size options its step declares. All of it is validated before the GPU is
// touched; a bad value exits 2 with the rule it breaks. A step's own rules
// (a multiple of a tile, say) are checked by the step right after parse_cli,
// also before require_hopper(), with die_usage().
typedef struct {
    const char* name;     // "--mib"
    const char* meta;     // "N" as shown in --help
    const char* help;     // one line
    long long min, max;   // inclusive range, checked here
    long long full;       // default of a normal run
    long long quick;      // default under --quick (sanitizers, smoke tests)
} IntOption;

#define MAX_OPTIONS 8

typedef struct {
    int quick;            // --quick: small sizes, few repetitions
    int reps;             // timed repetitions per measurement (median taken)
    int warmup;           // untimed runs first (clocks up, caches and TLB warm)
    unsigned seed;        // seeds the input data
    long long value[MAX_OPTIONS];  // the step's options, in the order declared
} Cli;

static inline void print_option(const char* name, const char* meta, const char* help) {
    char left[40];
    snprintf(left, sizeof left, "%s %s", name, meta);
    printf("  %-22s %s\n", left, help);
}

// Strict integer parse: the whole string, base 10, in range.
static inline long long parse_int_arg(const char* opt, const char* text, long long lo, long long hi) {
    if (text == NULL) die_usage("%s needs a value", opt);
    char* end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
        die_usage("%s '%s' is not a whole number", opt, text);
    if (v < lo || v > hi) die_usage("%s %lld is out of range: it must be %lld..%lld", opt, v, lo, hi);
    return v;
}

// A size option that must split `total` pieces evenly (tiles per block, say):
// exit 2 naming both numbers. `what` says what the pieces are.
static inline void require_divisor(const char* opt, long long value, size_t total, const char* what) {
    if (value <= 0 || total % (size_t)value != 0)
        die_usage("%s %lld does not divide the %zu %s: use a power of two", opt, value, total, what);
}

// usage: the lines --help prints before the option list (what the program does).
static inline Cli parse_cli(int argc, char** argv, const char* usage, const IntOption* opts, int nopts) {
    Cli cli;
    memset(&cli, 0, sizeof cli);
    cli.reps = 20;
    cli.warmup = 3;
    cli.seed = 1;
    int reps_given = 0, given[MAX_OPTIONS] = {0};
    if (nopts > MAX_OPTIONS) die_usage("internal: more than %d options", MAX_OPTIONS);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s\nusage: %s [options]\n", usage, argv[0]);
            print_option("--help", "", "print this and exit");
            print_option("--quick", "", "small sizes and 2 repetitions (sanitizers, smoke runs)");
            print_option("--reps", "N", "timed repetitions, median reported (1..1000, default 20)");
            print_option("--seed", "N", "seed of the input data (0..4294967295, default 1)");
            for (int k = 0; k < nopts; ++k) {
                char help[200];
                snprintf(help, sizeof help, "%s (%lld..%lld, default %lld, --quick %lld)",
                         opts[k].help, opts[k].min, opts[k].max, opts[k].full, opts[k].quick);
                print_option(opts[k].name, opts[k].meta, help);
            }
            printf("exit codes: 0 pass, 1 a check failed, 2 bad arguments or CUDA error, "
                   "77 cannot run here (no Hopper GPU)\n");
            exit(EXIT_PASS);
        } else if (!strcmp(a, "--quick")) {
            cli.quick = 1;
        } else if (!strcmp(a, "--reps")) {
            cli.reps = (int)parse_int_arg(a, next, 1, 1000);
            reps_given = 1;
            ++i;
        } else if (!strcmp(a, "--seed")) {
            cli.seed = (unsigned)parse_int_arg(a, next, 0, 4294967295LL);
            ++i;
        } else {
            int k = 0;
            while (k < nopts && strcmp(a, opts[k].name) != 0) ++k;
            if (k == nopts) die_usage("unknown option '%s'", a);
            cli.value[k] = parse_int_arg(a, next, opts[k].min, opts[k].max);
            given[k] = 1;
            ++i;
        }
    }
    for (int k = 0; k < nopts; ++k)
        if (!given[k]) cli.value[k] = cli.quick ? opts[k].quick : opts[k].full;
    if (cli.quick && !reps_given) cli.reps = 2;
    if (cli.quick) cli.warmup = 1;
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
// 0xFFFFFFFF is a NaN as float32 and can never be an input word (bit 31).
#define POISON_BYTE 0xFF
#define POISON_WORD 0xFFFFFFFFu

// Poison device memory ON THE STREAM THAT RUNS THE WORK. A plain cudaMemset
// goes to the legacy default stream, which is not ordered with streams made
// cudaStreamNonBlocking: the memset can land after the kernel and wipe its
// output (step 01's first H200 run did exactly that, and its check caught it).
static inline void poison_device(void* p, size_t bytes, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(p, POISON_BYTE, bytes, stream));
}

// ---------------------------------------------------------------------------
// 5. The comparator
// ---------------------------------------------------------------------------
static int g_checks_failed = 0;  // finish() turns this into the exit code

// Prints one "check" line (deterministic: it goes into expected_output.txt).
static inline void print_check_line(const char* name, size_t wrong, size_t total) {
    char dots[40];
    int len = (int)strlen(name);
    int ndots = len < 30 ? 30 - len : 3;
    memset(dots, '.', (size_t)ndots);
    dots[ndots] = '\0';
    printf("check  %s %s %s  (%zu of %zu wrong)\n", name, dots, wrong ? "FAIL" : "PASS",
           wrong, total);
    if (wrong) g_checks_failed++;
}

// Compares n 32-bit words bit for bit (float data is compared as its bits:
// a copy must move bits, and NaN != NaN would hide nothing here). Prints the
// check line and, on failure, the first few wrong elements. Returns the count.
static inline size_t check_words(const char* name, const uint32_t* got, const uint32_t* want, size_t n) {
    enum { SHOW = 5 };
    size_t wrong = 0, shown_at[SHOW];
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i]) {
            if (wrong < SHOW) shown_at[wrong] = i;
            ++wrong;
        }
    print_check_line(name, wrong, n);
    for (size_t k = 0; k < wrong && k < SHOW; ++k) {
        size_t i = shown_at[k];
        printf("       [%zu] got 0x%08x want 0x%08x%s\n", i, got[i], want[i],
               got[i] == POISON_WORD ? "  (poison: never written)" : "");
    }
    return wrong;
}

// ---------------------------------------------------------------------------
// 6. Timing: CUDA events, warm-up, median
// ---------------------------------------------------------------------------
// A measurement is a function that enqueues the work once on a stream.
typedef void (*EnqueueFn)(void* ctx, cudaStream_t stream);

static inline int compare_floats(const void* a, const void* b) {
    float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

static inline float median_of(float* v, int n) {
    qsort(v, (size_t)n, sizeof v[0], compare_floats);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

// Runs fn `warmup` times untimed, then `reps` times, each between two events on
// `stream`, and returns the median in milliseconds. Events time the GPU's own
// timeline, so host-side launch cost between repetitions is not counted.
static inline float time_median_ms(EnqueueFn fn, void* ctx, cudaStream_t stream, const Cli* cli) {
    float samples[1000];
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < cli->warmup; ++i) fn(ctx, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < cli->reps; ++i) {
        CUDA_CHECK(cudaEventRecord(start, stream));
        fn(ctx, stream);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&samples[i], start, stop));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return median_of(samples, cli->reps);
}

// Dynamic shared memory that makes `kernel` fit only ONCE per SM: more than
// half of an SM's shared memory (the kernel need not use it). Launching one
// block per SM then really puts one block on every SM, the regime of a tiled
// kernel whose big tiles leave room for one block. Raises the kernel's
// dynamic-shared-memory limit (needed above 48 KiB) and checks the result
// with the occupancy API.
static inline size_t smem_for_one_block_per_sm(const void* kernel, int threads, size_t needed) {
    int dev = 0, per_sm_bytes = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&per_sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    size_t bytes = (size_t)per_sm_bytes / 2 + 1024;
    if (bytes < needed) bytes = needed;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
    if (per_sm != 1) {
        fprintf(stderr, "internal error: %zu B of shared memory leaves %d blocks per SM, not 1\n", bytes, per_sm);
        exit(EXIT_USAGE);
    }
    return bytes;
}

// Resident blocks per SM for a launch configuration (printed on GPU lines).
static inline int blocks_per_sm(const void* kernel, int threads, size_t smem_bytes) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
    return per_sm;
}

// A grid that fills the GPU exactly once: every SM gets as many resident
// blocks as fit. Grid-stride ("persistent") kernels use it.
static inline int persistent_grid(const void* kernel, int threads, size_t smem_bytes) {
    int dev = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    per_sm = blocks_per_sm(kernel, threads, smem_bytes);
    if (per_sm < 1) die_usage("kernel cannot be resident with %d threads and %zu B shared", threads, smem_bytes);
    return sms * per_sm;
}

// ---------------------------------------------------------------------------
// Address helpers for inline PTX (common/cp_async.cuh, mbarrier.cuh, tma.cuh)
// ---------------------------------------------------------------------------
// Shared-memory operands of async copies and barriers are 32-bit addresses in
// the shared window ("r"); global ones are 64-bit global addresses ("l").
static __device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ uint64_t gmem_u64(const void* p) {
    return (uint64_t)__cvta_generic_to_global(p);
}

// ---------------------------------------------------------------------------
// 7. The output contract
// ---------------------------------------------------------------------------
static inline void print_header(const char* step, const char* title) { printf("== %s: %s\n", step, title); }

// "580.159.04" from the kernel module, when Linux exposes it; else empty.
// The line reads "NVRM version: NVIDIA UNIX ... Kernel Module [for x86_64]
// 580.159.04  Release Build ...": take the first word that is a version.
static inline void nvidia_driver_version(char* out, size_t cap) {
    out[0] = '\0';
    FILE* f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512], word[64];
    if (fgets(line, sizeof line, f)) {
        for (char* p = strtok(line, " \t\n"); p; p = strtok(NULL, " \t\n")) {
            unsigned major = 0, minor = 0;
            if (sscanf(p, "%u.%u", &major, &minor) == 2 && strlen(p) < sizeof word) {
                snprintf(word, sizeof word, "%s", p);
                snprintf(out, cap, "%s", word);
                break;
            }
        }
    }
    fclose(f);
}

// GPU line: machine-dependent, validated for form only by the checker.
static inline void print_gpu(void) {
    int dev = 0, rt = 0, drv = 0, sms = 0, l2 = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    char module[64];
    nvidia_driver_version(module, sizeof module);
    printf("GPU    %s (sm_%d%d, %d SMs, %d MiB L2) CUDA %d.%d driver %s\n", prop.name, prop.major,
           prop.minor, sms, l2 >> 20, rt / 1000, rt % 1000 / 10,
           module[0] ? module : "(version unknown)");
}

// Every bandwidth is also given as a fraction of cudaMemcpy device-to-device
// measured in the same process: a ratio against this GPU, today, at these
// sizes, never against a datasheet peak. Set once by the memcpy reference.
static double g_memcpy_gbps = 0.0;

// bytes: bytes read plus bytes written by the measured work. GB/s = 1e9 B/s.
static inline double print_perf(const char* name, float ms, double bytes) {
    double gbps = bytes / (ms * 1e-3) / 1e9;
    if (g_memcpy_gbps <= 0.0) {
        fprintf(stderr, "internal error: PERF %s printed before the memcpy reference\n", name);
        exit(EXIT_USAGE);
    }
    printf("PERF   %-20s %9.3f ms %8.1f GB/s %6.1f %% of memcpy\n", name, ms, gbps,
           100.0 * gbps / g_memcpy_gbps);
    return gbps;
}

// Times cudaMemcpy device-to-device of `bytes` (src and dst distinct, each at
// least `bytes` long), sets the reference and prints its PERF line (100 %).
typedef struct {
    void* dst;
    const void* src;
    size_t bytes;
} MemcpyJob;

static inline void enqueue_memcpy_d2d(void* ctx, cudaStream_t s) {
    const MemcpyJob* j = (const MemcpyJob*)ctx;
    CUDA_CHECK(cudaMemcpyAsync(j->dst, j->src, j->bytes, cudaMemcpyDeviceToDevice, s));
}

static inline void measure_memcpy_reference(void* dst, const void* src, size_t bytes, const Cli* cli) {
    MemcpyJob job = {dst, src, bytes};
    float ms = time_median_ms(enqueue_memcpy_d2d, &job, 0, cli);
    g_memcpy_gbps = 2.0 * bytes / (ms * 1e-3) / 1e9;  // a copy reads and writes every byte
    print_perf("cudaMemcpy_D2D", ms, 2.0 * bytes);
}

// Last line; its verdict and the exit code always agree.
static inline int finish(void) {
    CUDA_CHECK(cudaDeviceSynchronize());
    printf("RESULT: %s\n", g_checks_failed ? "FAIL" : "PASS");
    return g_checks_failed ? EXIT_WRONG : EXIT_PASS;
}
