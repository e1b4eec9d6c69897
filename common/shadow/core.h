// core.h: the shadow build's protocol state and its rules, as plain functions
// on plain structs, the same code on the GPU (called from the wrappers
// through shadow.cuh) and on the CPU (tests/unit_shadow.cu feeds it event
// sequences, correct and broken, without a GPU).
//
// What is kept, per CTA (ShCta, in global memory, one slot per CTA running):
//   barriers   per mbarrier: its count, and in one 64-bit word the phases
//              completed, the arrivals still missing and the transaction
//              bytes still owed in the current phase (expect_tx adds, a copy
//              issued toward it subtracts); a phase completes here when the
//              LAST event that the hardware needs for it is issued, so this
//              count is never behind the hardware's;
//   threads    per thread: cp.async and bulk groups committed and waited,
//              what it wrote with ordinary stores since its last
//              fence.proxy.async, its __syncthreads() count (epoch), the
//              tensor maps it acquired;
//   warpgroups wgmma groups committed and waited, the shared memory each
//              pending group reads, whether a wgmma.fence came since the
//              accumulators were last the threads';
//   reads      shared memory that bulk stores and reduces still read;
//   regions    shared memory the TMA wrote, and with which swizzle;
//   chunks     per 16 bytes of shared memory: who wrote it last and when
//              (threads' exact stores, cp.async), for the race rules.
// A rule broken fills one report (the first wins) and the program's bounded
// waits give up: the kernel ends, and the part's check line fails with it.
#pragma once

#include <stdint.h>

#include "common/shadow/rules.h"

// SH_FN: a rule or a message (called, not inlined: the shadow build's code
// stays small enough to compile in seconds); SH_INL: a one-liner.
#if defined(__CUDACC__)
#define SH_FN static __host__ __device__ __noinline__ __attribute__((unused))
#define SH_INL static inline __host__ __device__ __attribute__((unused))
#else
#define SH_FN static __attribute__((noinline, unused))
#define SH_INL static inline
#endif

#define SH_MAX_THREADS 1024
#define SH_BARS 32  // mbarriers per CTA
#define SH_WGS (SH_MAX_THREADS / 128)
#define SH_WG_RING 8                    // wgmma groups remembered per warpgroup (wait_group takes 0..7)
#define SH_READS 64                     // bulk reads pending per CTA
#define SH_REGIONS 32                   // TMA-written regions remembered per CTA
#define SH_SMEM_WINDOW (232448 + 1024)  // sm_90's largest shared window, the reserved 1 KiB included
#define SH_CHUNKS (SH_SMEM_WINDOW / 16)

// ---- atomics: the GPU's, or plain operations in the single-threaded CPU test
#ifdef __CUDA_ARCH__
#define SH_CAS64(p, old, val) atomicCAS((unsigned long long*)(p), (old), (val))
#define SH_CAS32(p, old, val) atomicCAS((unsigned int*)(p), (old), (val))
#define SH_ADD32(p, v) atomicAdd((unsigned int*)(p), (v))
#define SH_MAX32(p, v) atomicMax((unsigned int*)(p), (v))
#define SH_FENCE() __threadfence()
#else
SH_INL unsigned long long sh_cas64_host(unsigned long long* p, unsigned long long old,
                                        unsigned long long val) {
    const unsigned long long was = *p;
    if (was == old) *p = val;
    return was;
}
SH_INL unsigned int sh_cas32_host(unsigned int* p, unsigned int old, unsigned int val) {
    const unsigned int was = *p;
    if (was == old) *p = val;
    return was;
}
SH_INL unsigned int sh_add32_host(unsigned int* p, unsigned int v) {
    const unsigned int was = *p;
    *p = was + v;
    return was;
}
SH_INL unsigned int sh_max32_host(unsigned int* p, unsigned int v) {
    const unsigned int was = *p;
    if (v > was) *p = v;
    return was;
}
#define SH_CAS64(p, old, val) sh_cas64_host((unsigned long long*)(p), (old), (val))
#define SH_CAS32(p, old, val) sh_cas32_host((unsigned int*)(p), (old), (val))
#define SH_ADD32(p, v) sh_add32_host((unsigned int*)(p), (v))
#define SH_MAX32(p, v) sh_max32_host((unsigned int*)(p), (v))
#define SH_FENCE() ((void)0)
#endif
// Every field that another thread may read or write goes through these.
#define SH_LD(x) (*(volatile __typeof__(x)*)&(x))
#define SH_ST(x, v) (*(volatile __typeof__(x)*)&(x) = (v))

// ---- the state ----------------------------------------------------------------
typedef struct {
    const char* file;
    const char* func;
    int line;
} ShSite;

// What the shadow knows of a tensor map (from the host's encoder, or an edit it saw).
typedef struct {
    uint32_t known;       // 0: a map the shadow never saw made: its sizes are unknown
    uint32_t load_bytes;  // bytes one load of a box delivers: what expect_tx must count
    uint32_t box_bytes;   // bytes of the box in shared memory (what a store reads)
    uint32_t swizzle;     // CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
    uint32_t rank, elem_bytes;
    uint32_t box[5], estride[5];
} ShProps;

enum { SH_BAR_BYTES = 1, SH_BAR_FENCED = 2, SH_BAR_MINUS1 = 4, SH_BAR_UNKNOWN = 8 };

typedef struct {
    uint32_t addr;             // shared offset + 1 (0: a free entry)
    uint32_t count;            // arrivals per phase
    unsigned long long st;     // phases done [63:48], arrivals missing [47:32], bytes owed [31:0] (signed)
    uint32_t flags;            // SH_BAR_*
    uint32_t init_epoch;       // cluster barriers this CTA had arrived at when it initialized it
    unsigned long long guard;  // span: the stage this barrier hands back (learned from its producer)
    uint32_t observed;         // newest phase a wait saw complete, + 1
    uint32_t issued;           // newest phase a copy was issued toward, + 1
    uint32_t last_copy;        // bytes of the last copy credited (for messages)
    ShSite minus1;             // where a wait returned for the phase before the first
    uint32_t minus1_thread;
} ShBar;

typedef struct {
    uint32_t epoch;                      // __syncthreads() passed
    uint32_t cp_committed, cp_waited;    // cp.async groups: closed, and covered by a wait
    uint32_t cov_g[4], cov_e[4], cov_n;  // waits that advanced cp_waited: to which group, at which epoch
    uint32_t bk_committed, bk_read;      // bulk groups: closed, and read-waited (a full wait too)
    unsigned long long dirty;            // span: ordinary stores since the last fence.proxy.async (0: none)
    uint32_t learn_bar, learn_fresh;     // the last non-byte barrier waited on (+1), a load since?
    uint32_t cl_arrives, cl_waits;       // cluster barriers this thread arrived at, and waited on
} ShThread;

typedef struct {
    uint32_t committed, waited, fenced, used;
    unsigned long long open[2];              // spans: the open group's reads of A and of B
    unsigned long long ring[SH_WG_RING][2];  // committed group g's reads at g % SH_WG_RING
} ShWg;

// A bulk read in one word (read whole, written whole: never seen half-updated):
// [13:0] first 16-byte chunk, [27:14] chunk past the end, [37:28] the thread,
// [63:38] its bulk group (the thread's commit count + 1; 0: a free entry).
typedef struct {
    unsigned long long w;
} ShRead;

typedef struct {
    unsigned long long span;  // what the TMA wrote
    uint32_t swizzle, seq;    // seq: insertion order (0: free)
} ShRegion;

typedef struct {
    unsigned long long addr;  // a tensor map in global memory that `thread` acquired (0: free)
    uint32_t thread, version, sys, seq;
} ShAcq;
#define SH_ACQS 16

typedef struct {
    ShProps props;
    unsigned long long addr;  // the map being edited by `thread` (tensormap.replace): its props before
    uint32_t thread;
} ShEdit;
// Edits in progress at once in one CTA (a thread's tensormap.replace, between the wrapper's two hooks):
// every thread of a block may edit its own map at the same time (10_grouped_gemm's build_maps: 128).
#define SH_EDITS 128

typedef struct {
    unsigned long long owner;  // (grid id << 32 | linear CTA id) + 1 of the CTA using the slot; 0: free
    uint32_t generation;       // claims of the slot so far: a graph's replays keep their grid id, not this
    uint32_t nthreads, nchunks, cluster_size;
    uint32_t cluster_arrives, cluster_waits,
        remote_epoch;  // remote_epoch: max over remote ops of issuer's arrives + 1
    uint32_t dirty_count, region_seq, reads_used, wgmma_used;
    uint32_t untracked_bars;  // more barriers than SH_BARS: those beyond go unchecked
    uint32_t blk[3];
    ShBar bars[SH_BARS];
    ShWg wgs[SH_WGS];
    ShRead reads[SH_READS];
    ShRegion regions[SH_REGIONS];
    ShAcq acqs[SH_ACQS];
    uint32_t acq_seq;
    ShEdit edits[SH_EDITS];
    uint32_t edit_seq;
    ShThread threads[SH_MAX_THREADS];
    uint32_t chunks[SH_CHUNKS];  // kind [31:30], thread [29:20], epoch or group [19:0]
} ShCta;

enum { SH_CHUNK_NONE = 0, SH_CHUNK_STORE = 1, SH_CHUNK_CP = 2 };
#define SH_EXACT_BYTES \
    256  // an SHADOW_WROTE range up to this size is the thread's own elements: remembered by chunk

// The report of the first rule broken.
typedef struct {
    unsigned int claimed, reported;
    unsigned int rule, thread, block[3], line;
    char file[48], func[48], text[320];
} ShReport;

typedef struct {
    ShCta* cta;
    uint32_t tid;
    ShSite site;
    ShReport* report;
} ShCtx;

// ---- messages: a few strings and numbers, no printf on the device ----------------
typedef struct {
    char text[320];
    int len;
} ShMsg;

SH_FN void sh_s(ShMsg* m, const char* s) {
    while (s && *s && m->len < (int)sizeof m->text - 1) m->text[m->len++] = *s++;
    m->text[m->len] = '\0';
}
SH_FN void sh_u(ShMsg* m, unsigned long long v) {
    char d[24];
    int n = 0;
    do d[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 24);
    while (n && m->len < (int)sizeof m->text - 1) m->text[m->len++] = d[--n];
    m->text[m->len] = '\0';
}
SH_FN void sh_i(ShMsg* m, long long v) {
    if (v < 0) sh_s(m, "-");
    sh_u(m, (unsigned long long)(v < 0 ? -v : v));
}
SH_FN void sh_x(ShMsg* m, unsigned long long v) {
    char d[20];
    int n = 0;
    do d[n++] = "0123456789abcdef"[v & 15];
    while ((v >>= 4) && n < 20);
    sh_s(m, "0x");
    while (n && m->len < (int)sizeof m->text - 1) m->text[m->len++] = d[--n];
    m->text[m->len] = '\0';
}
SH_FN void sh_range(ShMsg* m, uint32_t lo, uint32_t hi) {
    sh_s(m, "[");
    sh_x(m, lo);
    sh_s(m, ", ");
    sh_x(m, hi);
    sh_s(m, ")");
}
SH_INL void sh_init_msg(ShMsg* m) {
    m->len = 0;
    m->text[0] = '\0';
}

SH_FN void sh_copy_text(char* dst, int cap, const char* src) {
    const char* base = src;
    for (const char* p = src; p && *p; ++p)
        if (*p == '/') base = p + 1;
    int i = 0;
    for (; base && base[i] && i < cap - 1; ++i) dst[i] = base[i];
    dst[i] = '\0';
}

// The first broken rule wins; later ones are dropped (the program stops at the first).
SH_FN void sh_report_at(ShReport* r, int rule, const ShSite* site, uint32_t thread, const uint32_t* blk,
                        const ShMsg* m) {
    if (SH_CAS32(&r->claimed, 0u, 1u) != 0u) return;
    r->rule = (unsigned)rule;
    r->thread = thread;
    for (int i = 0; i < 3; ++i) r->block[i] = blk ? blk[i] : 0u;
    r->line = site ? (unsigned)site->line : 0u;
    sh_copy_text(r->file, (int)sizeof r->file, site ? site->file : "");
    int i = 0;
    const char* f = site && site->func ? site->func : "";
    for (; f[i] && i < (int)sizeof r->func - 1; ++i) r->func[i] = f[i];
    r->func[i] = '\0';
    for (i = 0; i < m->len && i < (int)sizeof r->text - 1; ++i) r->text[i] = m->text[i];
    r->text[i] = '\0';
    SH_FENCE();
    SH_ST(r->reported, 1u);
}
SH_FN void sh_report(const ShCtx* c, int rule, const ShMsg* m) {
    sh_report_at(c->report, rule, &c->site, c->tid, c->cta->blk, m);
}

// ---- small helpers ---------------------------------------------------------------
SH_INL int sh_overlap(uint32_t a_lo, uint32_t a_hi, uint32_t b_lo, uint32_t b_hi) {
    return a_lo < b_hi && b_lo < a_hi;
}
// Counters that wrap: a at or after b.
SH_INL int sh_at_or_after(uint32_t a, uint32_t b) {
    return (int32_t)(a - b) >= 0;
}

SH_INL unsigned long long sh_pack(uint32_t done, uint32_t missing, int32_t owed) {
    return (unsigned long long)(done & 0xFFFFu) << 48 | (unsigned long long)(missing & 0xFFFFu) << 32 |
           (uint32_t)owed;
}
SH_INL uint32_t sh_done(unsigned long long st) {
    return (uint32_t)(st >> 48);
}
SH_INL uint32_t sh_missing(unsigned long long st) {
    return (uint32_t)(st >> 32) & 0xFFFFu;
}
SH_INL int32_t sh_owed(unsigned long long st) {
    return (int32_t)(uint32_t)st;
}

// A span of shared memory [lo, hi) in one 64-bit word, so that a reader on
// another thread never sees one end new and the other old (0: nothing).
SH_INL unsigned long long sh_span(uint32_t lo, uint32_t hi) {
    return (unsigned long long)hi << 32 | lo;
}
SH_INL uint32_t sh_lo(unsigned long long s) {
    return (uint32_t)s;
}
SH_INL uint32_t sh_hi(unsigned long long s) {
    return (uint32_t)(s >> 32);
}
SH_INL int sh_span_overlaps(unsigned long long s, uint32_t lo, uint32_t hi) {
    return s && sh_lo(s) < hi && lo < sh_hi(s);
}
SH_INL unsigned long long sh_span_union(unsigned long long s, uint32_t lo, uint32_t hi) {
    return s ? sh_span(lo < sh_lo(s) ? lo : sh_lo(s), hi > sh_hi(s) ? hi : sh_hi(s)) : sh_span(lo, hi);
}
#define SH_READ_FREE 0ull
SH_INL unsigned long long sh_read_pack(uint32_t lo, uint32_t hi, uint32_t thread, uint32_t seq) {
    return (unsigned long long)(lo / 16) | (unsigned long long)((hi + 15) / 16) << 14 |
           (unsigned long long)(thread & 0x3FFu) << 28 | (unsigned long long)(seq & 0x3FFFFFFu) << 38;
}
SH_INL uint32_t sh_read_lo(unsigned long long w) {
    return (uint32_t)(w & 0x3FFFu) * 16;
}
SH_INL uint32_t sh_read_hi(unsigned long long w) {
    return (uint32_t)(w >> 14 & 0x3FFFu) * 16;
}
SH_INL uint32_t sh_read_thread(unsigned long long w) {
    return (uint32_t)(w >> 28 & 0x3FFu);
}
SH_INL uint32_t sh_read_seq(unsigned long long w) {
    return (uint32_t)(w >> 38);
}
// Has thread t's read-waits covered bulk group seq (26 bits, wrapping)?
SH_INL int sh_read_done(uint32_t bk_read, uint32_t seq) {
    return ((bk_read - seq) & 0x3FFFFFFu) < 0x2000000u;
}

// ---- barriers -------------------------------------------------------------------
SH_FN ShBar* sh_bar_find(ShCta* cta, uint32_t addr) {
    const uint32_t key = addr + 1, h = (addr >> 3) % SH_BARS;
    for (uint32_t i = 0; i < SH_BARS; ++i) {
        ShBar* b = &cta->bars[(h + i) % SH_BARS];
        const uint32_t k = SH_LD(b->addr);
        if (k == key) return b;
        if (k == 0) return 0;
    }
    return 0;
}

SH_FN void sh_bar_describe(ShMsg* m, const ShBar* b) {
    sh_s(m, "the mbarrier at shared ");
    sh_x(m, b->addr - 1);
}

SH_FN void sh_mbar_init(const ShCtx* c, uint32_t addr, uint32_t count) {
    const uint32_t key = addr + 1, h = (addr >> 3) % SH_BARS;
    ShBar* b = 0;
    for (uint32_t i = 0; i < SH_BARS && !b; ++i) {
        ShBar* e = &c->cta->bars[(h + i) % SH_BARS];
        const uint32_t k = SH_LD(e->addr);
        if (k == key || (k == 0 && SH_CAS32(&e->addr, 0u, key) == 0u)) b = e;
    }
    if (!b) {  // more barriers than the shadow keeps: this one goes unchecked
        SH_ST(c->cta->untracked_bars, 1u);
        return;
    }
    SH_ST(b->count, count);
    SH_ST(b->st, sh_pack(0, count, 0));
    SH_ST(b->flags, 0u);
    SH_ST(b->init_epoch, SH_LD(c->cta->threads[c->tid].cl_arrives));
    SH_ST(b->guard, 0ull);
    SH_ST(b->observed, 0u);
    SH_ST(b->issued, 0u);
    SH_FENCE();
}

// fence.mbarrier_init: every init this CTA made so far is released to the cluster.
SH_FN void sh_mbar_fence_init(const ShCtx* c) {
    for (uint32_t i = 0; i < SH_BARS; ++i)
        if (SH_LD(c->cta->bars[i].addr))
            SH_ST(c->cta->bars[i].flags, SH_LD(c->cta->bars[i].flags) | SH_BAR_FENCED);
    SH_FENCE();
}

// B1 for an operation from another CTA of the cluster (`from`, this context's
// CTA) on barrier `b` of CTA `to`: the init must be fenced and a cluster
// barrier passed by `from` must come after it.
SH_FN int sh_remote_ready(const ShCtx* c, const ShCta* to, const ShBar* b, uint32_t addr, const char* what) {
    ShMsg m;
    sh_init_msg(&m);
    if (!b) {
        sh_s(&m, what);
        sh_s(&m, " a barrier of cluster rank's CTA at shared ");
        sh_x(&m, addr);
        sh_s(&m, " that CTA has not initialized");
    } else if (!(SH_LD(b->flags) & SH_BAR_FENCED)) {
        sh_s(&m, what);
        sh_s(&m, " a peer CTA's barrier at shared ");
        sh_x(&m, addr);
        sh_s(&m, " whose init no fence.mbarrier_init released to the cluster");
    } else if (!sh_at_or_after(SH_LD(c->cta->threads[c->tid].cl_waits), SH_LD(b->init_epoch) + 1)) {
        sh_s(&m, what);
        sh_s(&m, " a peer CTA's barrier at shared ");
        sh_x(&m, addr);
        sh_s(&m, " before a cluster barrier published its init (this thread has waited on ");
        sh_u(&m, SH_LD(c->cta->threads[c->tid].cl_waits));
        sh_s(&m, " cluster barriers; the init came after the peer's ");
        sh_u(&m, SH_LD(b->init_epoch));
        sh_s(&m, ")");
    } else {
        return 1;
    }
    (void)to;
    sh_report(c, SH_B1, &m);
    return 0;
}

// C1's bookkeeping: this thread's remote operation comes after its own
// cluster arrivals so far; the target must wait on one more cluster barrier.
SH_FN void sh_note_remote(const ShCtx* c, ShCta* to) {
    if (to != c->cta) SH_MAX32(&to->remote_epoch, SH_LD(c->cta->threads[c->tid].cl_arrives) + 1);
}

// A late B2: a wait returned for the phase before the first, and now the
// barrier turns out to carry bytes.
SH_FN void sh_late_parity(const ShCtx* c, ShBar* b) {
    ShMsg m;
    sh_init_msg(&m);
    sh_s(&m, "a wait on ");
    sh_bar_describe(&m, b);
    sh_s(&m, " returned for parity 1 before its first phase completed (thread ");
    sh_u(&m, SH_LD(b->minus1_thread));
    sh_s(&m, " at ");
    sh_copy_text(m.text + m.len, (int)sizeof m.text - m.len, b->minus1.file);
    while (m.text[m.len]) ++m.len;
    sh_s(&m, ":");
    sh_u(&m, (unsigned)b->minus1.line);
    sh_s(&m,
         "): the phase before the first carried no bytes, and this barrier's copies do: the data was "
         "read before it landed");
    sh_report_at(c->report, SH_B2, &b->minus1, SH_LD(b->minus1_thread), c->cta->blk, &m);
}

// After an update that left `st`: a phase whose arrivals are all in but
// which is owed negative bytes got more than its expect_tx, and can never be
// made right (a later expect_tx needs an arrival, and none is left).
SH_FN void sh_check_overflow(const ShCtx* c, ShBar* b, unsigned long long st) {
    if (sh_missing(st) != 0 || sh_owed(st) >= 0 || (SH_LD(b->flags) & SH_BAR_UNKNOWN)) return;
    ShMsg m;
    sh_init_msg(&m);
    sh_s(&m, "phase ");
    sh_u(&m, sh_done(st));
    sh_s(&m, " of ");
    sh_bar_describe(&m, b);
    sh_s(&m, ": its copies bring ");
    sh_u(&m, (unsigned)(-sh_owed(st)));
    sh_s(&m,
         " bytes more than its expect_tx announced, with every arrival in: the phase completes before "
         "the last bytes land, which then count toward the next phase");
    sh_report(c, SH_B3, &m);
}

// One update of a barrier's word: `arrive` arrivals and `bytes` announced
// (expect_tx, positive) or issued (a copy, negative). The phase completes
// when nothing is missing and nothing owed.
SH_FN unsigned long long sh_bar_update(ShBar* b, uint32_t arrive, int32_t bytes) {
    unsigned long long old = SH_LD(b->st), seen;
    for (;;) {
        uint32_t done = sh_done(old), missing = sh_missing(old);
        int32_t owed = sh_owed(old) + bytes;
        missing = missing >= arrive ? missing - arrive : 0u;
        if (missing == 0 && owed == 0) {
            ++done;
            missing = SH_LD(b->count);
        }
        const unsigned long long next = sh_pack(done, missing, owed);
        seen = SH_CAS64(&b->st, old, next);
        if (seen == old) return next;
        old = seen;
    }
}

// The wgmma groups of warpgroup `w` and the bulk stores of thread `t` that
// still read [lo, hi): the offending range into *what, or 0.
SH_FN int sh_pending_wgmma(const ShCta* cta, uint32_t w, uint32_t lo, uint32_t hi, uint32_t* group) {
    const ShWg* g = &cta->wgs[w];
    if (!SH_LD(g->used)) return 0;
    // The open group first, then the count (sh_wg_commit writes them in the other order).
    const unsigned long long open[2] = {SH_LD(g->open[0]), SH_LD(g->open[1])};
    const uint32_t committed = SH_LD(g->committed), waited = SH_LD(g->waited);
    for (int k = 0; k < 2; ++k)
        if (sh_span_overlaps(open[k], lo, hi)) {
            *group = committed + 1;
            return 1;
        }
    for (uint32_t q = waited + 1; sh_at_or_after(committed, q) && q - waited <= SH_WG_RING; ++q)
        for (int k = 0; k < 2; ++k)
            if (sh_span_overlaps(SH_LD(g->ring[q % SH_WG_RING][k]), lo, hi)) {
                *group = q;
                return 1;
            }
    return 0;
}

// The first bulk read still pending over [lo, hi) (of `only_thread`, if not ~0): its word, or 0.
SH_FN unsigned long long sh_pending_read(const ShCta* cta, uint32_t lo, uint32_t hi, uint32_t only_thread) {
    if (!SH_LD(cta->reads_used)) return 0;
    for (int i = 0; i < SH_READS; ++i) {
        const unsigned long long w = SH_LD(cta->reads[i].w);
        const uint32_t seq = sh_read_seq(w), t = sh_read_thread(w);
        if (!seq || seq == 0x3FFFFFFu) continue;  // free, or being written
        if (only_thread != 0xFFFFFFFFu && t != only_thread) continue;
        if (sh_read_done(SH_LD(cta->threads[t].bk_read), seq)) continue;  // read-waited
        if (sh_overlap(sh_read_lo(w), sh_read_hi(w), lo, hi)) return w;
    }
    return 0;
}

// S2: nothing may write [lo, hi) of `cta` while an async reader reads it.
SH_FN int sh_check_rewrite(const ShCtx* c, const ShCta* cta, uint32_t lo, uint32_t hi, const char* writer) {
    const unsigned long long r = sh_pending_read(cta, lo, hi, 0xFFFFFFFFu);
    ShMsg m;
    sh_init_msg(&m);
    if (r) {
        sh_s(&m, writer);
        sh_s(&m, " shared ");
        sh_range(&m, lo, hi);
        sh_s(&m, " while bulk group ");
        sh_u(&m, sh_read_seq(r));
        sh_s(&m, " of thread ");
        sh_u(&m, sh_read_thread(r));
        sh_s(&m, " (a TMA or bulk store or reduce) still reads ");
        sh_range(&m, sh_read_lo(r), sh_read_hi(r));
        sh_s(&m, ": no cp.async.bulk.wait_group.read covers it yet");
        sh_report(c, SH_S2, &m);
        return 0;
    }
    if (SH_LD(cta->wgmma_used))
        for (uint32_t w = 0; w < SH_WGS; ++w) {
            uint32_t group = 0;
            if (sh_pending_wgmma(cta, w, lo, hi, &group)) {
                sh_s(&m, writer);
                sh_s(&m, " shared ");
                sh_range(&m, lo, hi);
                sh_s(&m, " while wgmma group ");
                sh_u(&m, group);
                sh_s(&m, " of warpgroup ");
                sh_u(&m, w);
                sh_s(&m, " still reads it: no wgmma.wait_group covers that group yet");
                sh_report(c, SH_S2, &m);
                return 0;
            }
        }
    return 1;
}

// S1: every thread that wrote [lo, hi) with ordinary stores has fenced since.
SH_FN int sh_check_fenced(const ShCtx* c, const ShCta* cta, uint32_t lo, uint32_t hi, const char* async_op) {
    if (!SH_LD(cta->dirty_count)) return 1;
    for (uint32_t t = 0; t < cta->nthreads; ++t) {
        const unsigned long long dirty = SH_LD(cta->threads[t].dirty);
        if (!sh_span_overlaps(dirty, lo, hi)) continue;
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, async_op);
        sh_s(&m, " shared ");
        sh_range(&m, lo, hi);
        sh_s(&m, ", which thread ");
        sh_u(&m, t);
        sh_s(&m, " wrote with ordinary stores (");
        sh_range(&m, sh_lo(dirty), sh_hi(dirty));
        sh_s(&m,
             ") and has not fenced since: fence.proxy.async.shared::cta, by every writing thread, "
             "before the barrier that hands the buffer over");
        sh_report(c, SH_S1, &m);
        return 0;
    }
    return 1;
}

// mbarrier.arrive (remote when `to` is another CTA's state): `bytes` > 0 for
// arrive.expect_tx. A plain arrive may hand a stage back (P1).
SH_FN void sh_arrive(const ShCtx* c, ShCta* to, uint32_t addr, uint32_t bytes) {
    ShBar* b = sh_bar_find(to, addr);
    if (!b && SH_LD(to->untracked_bars)) return;
    if (to != c->cta) {
        if (!sh_remote_ready(c, to, b, addr, "arrive on")) return;
        sh_note_remote(c, to);
    } else if (!b) {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, bytes ? "arrive.expect_tx on" : "arrive on");
        sh_s(&m, " the mbarrier at shared ");
        sh_x(&m, addr);
        sh_s(&m, ", which no mbarrier.init has initialized");
        sh_report(c, SH_B1, &m);
        return;
    }
    const unsigned long long guard = SH_LD(b->guard);
    if (bytes == 0 && guard) {  // P1: the stage this barrier hands back
        const uint32_t lo = sh_lo(guard), hi = sh_hi(guard), w = c->tid / 128;
        uint32_t group = 0;
        ShMsg m;
        sh_init_msg(&m);
        if (w < SH_WGS && sh_pending_wgmma(c->cta, w, lo, hi, &group)) {
            sh_s(&m, "a stage handed back (arrive on ");
            sh_bar_describe(&m, b);
            sh_s(&m, ", which guards shared ");
            sh_range(&m, lo, hi);
            sh_s(&m, ") while wgmma group ");
            sh_u(&m, group);
            sh_s(&m, " of this warpgroup still reads it: wgmma.wait_group must cover it first");
            sh_report(c, SH_P1, &m);
            return;
        }
        const unsigned long long r = sh_pending_read(c->cta, lo, hi, c->tid);
        if (r) {
            sh_s(&m, "a stage handed back (arrive on ");
            sh_bar_describe(&m, b);
            sh_s(&m, ", which guards shared ");
            sh_range(&m, lo, hi);
            sh_s(&m, ") while this thread's bulk group ");
            sh_u(&m, sh_read_seq(r));
            sh_s(&m, " still reads it: cp.async.bulk.wait_group.read must cover it first");
            sh_report(c, SH_P1, &m);
            return;
        }
    }
    if (bytes) {
        SH_ST(b->flags, SH_LD(b->flags) | SH_BAR_BYTES);
        if (SH_LD(b->flags) & SH_BAR_MINUS1) sh_late_parity(c, b);
    }
    sh_check_overflow(c, b, sh_bar_update(b, 1, (int32_t)bytes));
}

// A copy of `bytes` (0: unknown) issued toward barrier `addr` of CTA `to`.
SH_FN void sh_credit(const ShCtx* c, ShCta* to, uint32_t addr, uint32_t bytes, const char* what) {
    ShBar* b = sh_bar_find(to, addr);
    if (!b && SH_LD(to->untracked_bars)) return;
    if (to != c->cta) {
        if (!sh_remote_ready(c, to, b, addr, what)) return;
        sh_note_remote(c, to);
    } else if (!b) {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, what);
        sh_s(&m, " completing on the mbarrier at shared ");
        sh_x(&m, addr);
        sh_s(&m, ", which no mbarrier.init has initialized");
        sh_report(c, SH_B1, &m);
        return;
    }
    SH_ST(b->flags, SH_LD(b->flags) | SH_BAR_BYTES | (bytes ? 0u : (uint32_t)SH_BAR_UNKNOWN));
    if (SH_LD(b->flags) & SH_BAR_MINUS1) sh_late_parity(c, b);
    SH_ST(b->last_copy, bytes);
    const unsigned long long st = sh_bar_update(b, 0, -(int32_t)bytes);
    // The phase this copy counts toward: the open one, or the one it just completed.
    const uint32_t phase =
        sh_missing(st) == SH_LD(b->count) && sh_owed(st) == 0 ? sh_done(st) - 1 : sh_done(st);
    SH_MAX32(&b->issued, phase + 1);
    sh_check_overflow(c, b, st);
}

// A wait that returned true for `parity`.
SH_FN void sh_wait_done(const ShCtx* c, uint32_t addr, uint32_t parity) {
    ShBar* b = sh_bar_find(c->cta, addr);
    if (!b && SH_LD(c->cta->untracked_bars)) return;
    ShMsg m;
    sh_init_msg(&m);
    if (!b) {
        sh_s(&m, "a wait on the mbarrier at shared ");
        sh_x(&m, addr);
        sh_s(&m, ", which no mbarrier.init has initialized");
        sh_report(c, SH_B1, &m);
        return;
    }
    const unsigned long long st = SH_LD(b->st);
    const uint32_t done = sh_done(st), flags = SH_LD(b->flags);
    ShThread* th = &c->cta->threads[c->tid];
    if (!(flags & SH_BAR_BYTES)) {  // a barrier of arrivals only: a producer may now refill what it guards
        SH_ST(th->learn_bar, (uint32_t)(b - c->cta->bars) + 1);
        SH_ST(th->learn_fresh, 1u);
    }
    if (done == 0 && (parity & 1)) {  // the phase before the first
        if (flags & SH_BAR_BYTES) {
            sh_s(&m, "a wait on ");
            sh_bar_describe(&m, b);
            sh_s(&m,
                 " for parity 1 returned at once: no phase has completed, so parity 1 names the phase "
                 "before the first, which carried no bytes; the copy the wait stands for has not landed "
                 "(wait for parity 0)");
            sh_report(c, SH_B2, &m);
        } else if (!(flags & SH_BAR_MINUS1)) {  // remembered: a copy toward it later makes it B2
            b->minus1 = c->site;
            SH_ST(b->minus1_thread, c->tid);
            SH_ST(b->flags, flags | SH_BAR_MINUS1);
        }
        return;
    }
    if (((done - 1) & 1) != (parity & 1)) {
        // The hardware says the phase with this parity is complete, and the
        // shadow is never behind it: so the wait returned for phase done - 2,
        // long complete (or, done 1, for the phase before the first).
        if (flags & SH_BAR_UNKNOWN) return;
        sh_s(&m, "a wait on ");
        sh_bar_describe(&m, b);
        sh_s(&m, " for parity ");
        sh_u(&m, parity & 1);
        sh_s(&m, " returned at once for ");
        if (done == 1) {
            sh_s(&m, "the phase before the first, which carried no bytes");
        } else {
            sh_s(&m, "phase ");
            sh_u(&m, done - 2);
            sh_s(&m, ", which completed before the newest one");
        }
        sh_s(&m, ": phase ");
        sh_u(&m, done - 1);
        sh_s(&m, " (parity ");
        sh_u(&m, (done - 1) & 1);
        sh_s(&m, ") is the one its copies complete");
        sh_report(c, SH_B2, &m);
        return;
    }
    SH_MAX32(&b->observed, done);  // phase done - 1 seen complete
}

// A bounded wait that gave up: say why the phase never completed.
SH_FN void sh_wait_gave_up(const ShCtx* c, ShCta* cta, uint32_t addr, uint32_t parity) {
    ShBar* b = sh_bar_find(cta, addr);
    if (!b) return;
    const unsigned long long st = SH_LD(b->st);
    ShMsg m;
    sh_init_msg(&m);
    sh_s(&m, "a wait for parity ");
    sh_u(&m, parity & 1);
    sh_s(&m, " on ");
    sh_bar_describe(&m, b);
    sh_s(&m, " gave up: phase ");
    sh_u(&m, sh_done(st));
    if (sh_missing(st)) {
        sh_s(&m, " still misses ");
        sh_u(&m, sh_missing(st));
        sh_s(&m, " of its ");
        sh_u(&m, SH_LD(b->count));
        sh_s(&m, " arrivals");
        if (sh_owed(st) < 0) {
            sh_s(&m, ", and copies already brought it ");
            sh_u(&m, (unsigned)-sh_owed(st));
            sh_s(&m, " bytes that no expect_tx announced");
        }
        sh_s(&m, ": nobody will complete it");
        sh_report(c, SH_B4, &m);
    } else if (sh_owed(st) > 0 && !(SH_LD(b->flags) & SH_BAR_UNKNOWN)) {
        sh_s(&m, " has every arrival, but its expect_tx announced ");
        sh_u(&m, (unsigned)sh_owed(st));
        sh_s(&m, " bytes more than its copies bring: the transaction count never reaches zero");
        sh_report(c, SH_B3, &m);
    }
}

// ---- shared memory written by the threads, and the proxy fence ---------------------
SH_FN void sh_fence_proxy_async(const ShCtx* c) {
    ShThread* th = &c->cta->threads[c->tid];
    if (SH_LD(th->dirty)) {
        SH_ST(th->dirty, 0ull);
        SH_ADD32(&c->cta->dirty_count, 0xFFFFFFFFu);
    }
}

SH_FN void sh_wrote(const ShCtx* c, uint32_t lo, uint32_t bytes) {
    const uint32_t hi = lo + bytes;
    if (!sh_check_rewrite(c, c->cta, lo, hi, "threads' ordinary stores write")) return;
    ShThread* th = &c->cta->threads[c->tid];
    const unsigned long long dirty = SH_LD(th->dirty);
    if (!dirty) SH_ADD32(&c->cta->dirty_count, 1u);
    SH_ST(th->dirty, sh_span_union(dirty, lo, hi));
    if (bytes <= SH_EXACT_BYTES)
        for (uint32_t q = lo / 16; q < (hi + 15) / 16 && q < c->cta->nchunks; ++q)
            SH_ST(c->cta->chunks[q],
                  (uint32_t)SH_CHUNK_STORE << 30 | (c->tid & 0x3FFu) << 20 | (SH_LD(th->epoch) & 0xFFFFFu));
}

// The epoch at which thread t's cp.async waits first covered group g, or
// 0xFFFFFFFF when its history no longer says (no report then).
SH_FN uint32_t sh_cover_epoch(const ShThread* th, uint32_t g) {
    const uint32_t n = SH_LD(th->cov_n);
    uint32_t best = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < 4 && i < n; ++i) {
        const uint32_t k = (n - 1 - i) % 4;  // newest first
        if (((SH_LD(th->cov_g[k]) - g) & 0xFFFFFu) < 0x80000u)
            best = SH_LD(th->cov_e[k]);
        else
            return best;
    }
    return n <= 4 ? best : 0xFFFFFFFFu;
}

SH_FN void sh_read(const ShCtx* c, uint32_t lo, uint32_t bytes) {
    const ShThread* me = &c->cta->threads[c->tid];
    const uint32_t epoch = SH_LD(me->epoch);
    for (uint32_t q = lo / 16; q < (lo + bytes + 15) / 16 && q < c->cta->nchunks; ++q) {
        const uint32_t w = SH_LD(c->cta->chunks[q]), kind = w >> 30, t = (w >> 20) & 0x3FFu, v = w & 0xFFFFFu;
        if (kind == SH_CHUNK_NONE || t >= c->cta->nthreads) continue;
        const ShThread* wr = &c->cta->threads[t];
        ShMsg m;
        sh_init_msg(&m);
        if (kind == SH_CHUNK_STORE && t != c->tid && ((epoch - v) & 0xFFFFFu) == 0) {
            sh_s(&m, "read of shared ");
            sh_x(&m, q * 16);
            sh_s(&m, ", which thread ");
            sh_u(&m, t);
            sh_s(&m, " stored with no __syncthreads() since (both have passed ");
            sh_u(&m, epoch);
            sh_s(&m, "): the read may come first");
            sh_report(c, SH_A3, &m);
            return;
        }
        if (kind != SH_CHUNK_CP) continue;
        const uint32_t waited = SH_LD(wr->cp_waited) & 0xFFFFFu;
        const int covered = ((waited - v) & 0xFFFFFu) < 0x80000u;
        if (t == c->tid) {  // its own copy: its own wait must cover it
            if (covered) continue;
            sh_s(&m, "read of shared ");
            sh_x(&m, q * 16);
            sh_s(&m, ", which this thread's cp.async of its group ");
            sh_u(&m, v);
            sh_s(&m, " writes: its cp.async.wait_group has covered only its groups up to ");
            sh_u(&m, waited);
            sh_report(c, SH_A1, &m);
            return;
        }
        // Another thread's copy: that thread's wait, then a barrier, then the read.
        const uint32_t n = SH_LD(wr->cov_n), last_wait = n ? SH_LD(wr->cov_e[(n - 1) % 4]) : 0u;
        const int barrier_since_wait =
            n && ((epoch - last_wait) & 0xFFFFFu) != 0 && ((epoch - last_wait) & 0xFFFFFu) < 0x80000u;
        if (!covered &&
            barrier_since_wait) {  // it waited, a barrier came, but its wait left the group pending
            sh_s(&m, "read of shared ");
            sh_x(&m, q * 16);
            sh_s(&m, ", which a cp.async of thread ");
            sh_u(&m, t);
            sh_s(&m, " in its group ");
            sh_u(&m, v);
            sh_s(&m,
                 " writes: that thread's cp.async.wait_group, before the barrier, covered only its groups up "
                 "to ");
            sh_u(&m, waited);
            sh_s(&m, " (wait_group N leaves the newest N pending)");
            sh_report(c, SH_A1, &m);
            return;
        }
        const uint32_t covered_at = covered ? sh_cover_epoch(wr, v) : 0xFFFFFFFFu;
        if (!covered || (covered_at != 0xFFFFFFFFu && ((epoch - covered_at) & 0xFFFFFu) == 0)) {
            sh_s(&m, "read of shared ");
            sh_x(&m, q * 16);
            sh_s(&m, ", which a cp.async of thread ");
            sh_u(&m, t);
            sh_s(&m, " writes, with no __syncthreads() after that thread's cp.async.wait_group");
            sh_s(&m, covered ? ": its wait covers only its own copies, for itself"
                             : " (it has not waited for it yet)");
            sh_report(c, SH_A2, &m);
            return;
        }
    }
}

SH_FN void sh_syncthreads(const ShCtx* c) {
    ShThread* th = &c->cta->threads[c->tid];
    SH_ST(th->epoch, SH_LD(th->epoch) + 1);
}

// ---- cp.async ------------------------------------------------------------------------
SH_FN void sh_cp_async(const ShCtx* c, uint32_t dst, uint32_t bytes) {
    if (SH_LD(c->cta->reads_used) || SH_LD(c->cta->wgmma_used))
        if (!sh_check_rewrite(c, c->cta, dst, dst + bytes, "a cp.async writes")) return;
    const ShThread* th = &c->cta->threads[c->tid];
    const uint32_t group = (SH_LD(th->cp_committed) + 1) & 0xFFFFFu;
    for (uint32_t q = dst / 16; q < (dst + bytes + 15) / 16 && q < c->cta->nchunks; ++q)
        SH_ST(c->cta->chunks[q], (uint32_t)SH_CHUNK_CP << 30 | (c->tid & 0x3FFu) << 20 | group);
}
SH_FN void sh_cp_commit(const ShCtx* c) {
    ShThread* th = &c->cta->threads[c->tid];
    SH_ST(th->cp_committed, SH_LD(th->cp_committed) + 1);
}
SH_FN void sh_cp_wait(const ShCtx* c, uint32_t n) {
    ShThread* th = &c->cta->threads[c->tid];
    const uint32_t committed = SH_LD(th->cp_committed);
    const uint32_t covered = committed >= n ? committed - n : 0u;
    if (covered > SH_LD(th->cp_waited) || SH_LD(th->cov_n) == 0) {
        const uint32_t k = SH_LD(th->cov_n) % 4;
        SH_ST(th->cov_g[k], covered);
        SH_ST(th->cov_e[k], SH_LD(th->epoch));
        SH_ST(th->cov_n, SH_LD(th->cov_n) + 1);
        if (covered > SH_LD(th->cp_waited)) SH_ST(th->cp_waited, covered);
    }
}

// ---- bulk groups (TMA stores, reduces, bulk copies from shared memory) -------------
SH_FN void sh_bulk_read(const ShCtx* c, uint32_t lo, uint32_t bytes, const char* what) {
    const uint32_t hi = lo + bytes;
    if (!sh_check_fenced(c, c->cta, lo, hi, what)) return;
    ShThread* th = &c->cta->threads[c->tid];
    const unsigned long long w = sh_read_pack(lo, hi, c->tid, SH_LD(th->bk_committed) + 1);
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < SH_READS; ++i) {
            ShRead* r = &c->cta->reads[i];
            const unsigned long long old = SH_LD(r->w);
            const uint32_t s = sh_read_seq(old);
            // a free entry, or (second pass) one whose group its thread has read-waited
            if (s && (pass == 0 || s == 0x3FFFFFFu ||
                      !sh_read_done(SH_LD(c->cta->threads[sh_read_thread(old)].bk_read), s)))
                continue;
            if (SH_CAS64(&r->w, old, w) != old) continue;
            SH_ST(c->cta->reads_used, 1u);
            return;
        }
}
SH_FN void sh_bulk_commit(const ShCtx* c) {
    ShThread* th = &c->cta->threads[c->tid];
    SH_ST(th->bk_committed, SH_LD(th->bk_committed) + 1);
}
SH_FN void sh_bulk_wait(const ShCtx* c, uint32_t n) {
    ShThread* th = &c->cta->threads[c->tid];
    const uint32_t committed = SH_LD(th->bk_committed);
    const uint32_t covered = committed >= n ? committed - n : 0u;
    if (sh_at_or_after(covered, SH_LD(th->bk_read) + 1)) SH_ST(th->bk_read, covered);
    SH_FENCE();
}

// ---- TMA loads: into this CTA, or (multicast) into several ------------------------
SH_FN void sh_region_note(ShCta* cta, uint32_t lo, uint32_t hi, uint32_t swizzle) {
    const uint32_t seq = SH_ADD32(&cta->region_seq, 1u) + 1;
    int victim = 0;
    uint32_t oldest = 0xFFFFFFFFu;
    for (int i = 0; i < SH_REGIONS; ++i) {
        const uint32_t s = SH_LD(cta->regions[i].seq);
        if (s && sh_lo(SH_LD(cta->regions[i].span)) == lo) {
            victim = i;
            break;
        }
        if (s < oldest) oldest = s, victim = i;
    }
    ShRegion* r = &cta->regions[victim];
    SH_ST(r->swizzle, swizzle);
    SH_ST(r->span, sh_span(lo, hi));
    SH_ST(r->seq, seq);
}

// A copy into [dst, dst + bytes) of `to` (this CTA, or a peer receiving a
// multicast), completing on the barrier at `bar` of the same CTA.
SH_FN void sh_load_into(const ShCtx* c, ShCta* to, uint32_t dst, uint32_t bytes, uint32_t region_bytes,
                        uint32_t bar, uint32_t swizzle, const char* what) {
    const uint32_t hi = dst + (region_bytes ? region_bytes : 16u);
    if (!sh_check_rewrite(c, to, dst, hi, what)) return;
    if (to == c->cta && !sh_check_fenced(c, to, dst, hi, what)) return;
    if (region_bytes) sh_region_note(to, dst, hi, swizzle);
    sh_credit(c, to, bar, bytes, what);
    if (to != c->cta) return;
    ShThread* th = &c->cta->threads[c->tid];
    const uint32_t lb = SH_LD(th->learn_bar);
    if (!lb || lb > SH_BARS) return;
    ShBar* guard = &c->cta->bars[lb - 1];
    if (guard == sh_bar_find(c->cta, bar)) return;
    if (SH_LD(th->learn_fresh)) {  // the first load after the wait: the stage starts here
        SH_ST(guard->guard, sh_span(dst, hi));
        SH_ST(th->learn_fresh, 0u);
    } else {
        SH_ST(guard->guard, sh_span_union(SH_LD(guard->guard), dst, hi));
    }
}

// ---- wgmma ------------------------------------------------------------------------
SH_FN void sh_wg_fence(const ShCtx* c) {
    if (c->tid % 128) return;
    ShWg* g = &c->cta->wgs[c->tid / 128];
    SH_ST(g->fenced, 1u);
}

// The swizzle a descriptor's layout field names, as CUtensorMapSwizzle numbers it.
SH_INL uint32_t sh_desc_swizzle(unsigned long long desc) {
    const uint32_t layout = (uint32_t)(desc >> 62);
    return layout == 1 ? 3u : layout == 2 ? 2u : layout == 3 ? 1u : 0u;
}

SH_FN void sh_mma(const ShCtx* c, unsigned long long desc_a, unsigned long long desc_b, uint32_t a_rows,
                  uint32_t b_rows) {
    if (c->tid % 128) return;
    ShWg* g = &c->cta->wgs[c->tid / 128];
    ShMsg m;
    sh_init_msg(&m);
    if (!SH_LD(g->fenced)) {
        sh_s(&m,
             "wgmma.mma_async with no wgmma.fence since this warpgroup's accumulators were last the "
             "threads' (");
        sh_s(&m, SH_LD(g->committed) ? "after wgmma.wait_group" : "the kernel's start");
        sh_s(&m, "): the tensor cores may read registers the threads have not finished with");
        sh_report(c, SH_W1, &m);
        return;
    }
    const unsigned long long desc[2] = {desc_a, desc_b};
    const uint32_t rows[2] = {a_rows, b_rows};
    for (int k = 0; k < 2; ++k) {
        const uint32_t start = (uint32_t)(desc[k] & 0x3FFFu) << 4, sbo = (uint32_t)((desc[k] >> 32) & 0x3FFFu)
                                                                         << 4;
        const uint32_t lo = start & ~127u, hi = lo + rows[k] / 8 * (sbo ? sbo : 128u);
        for (int i = 0; i < SH_REGIONS; ++i) {
            const ShRegion* r = &c->cta->regions[i];
            const unsigned long long span = SH_LD(r->span);
            if (!SH_LD(r->seq) || start < sh_lo(span) || start >= sh_hi(span)) continue;
            if (SH_LD(r->swizzle) != sh_desc_swizzle(desc[k])) {
                const char* names[4] = {"none", "32B", "64B", "128B"};
                sh_s(&m, k ? "B" : "A");
                sh_s(&m, "'s descriptor (shared ");
                sh_x(&m, start);
                sh_s(&m, ") says swizzle ");
                sh_s(&m, names[sh_desc_swizzle(desc[k]) & 3]);
                sh_s(&m, ", but the TMA wrote that tile with swizzle ");
                sh_s(&m, names[SH_LD(r->swizzle) & 3]);
                sh_s(&m, ": the MMA reads the right bytes from the wrong places");
                sh_report(c, SH_W3, &m);
                return;
            }
            break;
        }
        SH_ST(g->open[k], sh_span_union(SH_LD(g->open[k]), lo, hi));
    }
    SH_ST(g->used, 1u);
    SH_ST(c->cta->wgmma_used, 1u);
}

SH_FN void sh_wg_commit(const ShCtx* c) {
    if (c->tid % 128) return;
    ShWg* g = &c->cta->wgs[c->tid / 128];
    const uint32_t q = SH_LD(g->committed) + 1;
    for (int k = 0; k < 2; ++k) SH_ST(g->ring[q % SH_WG_RING][k], SH_LD(g->open[k]));
    SH_ST(g->committed, q);  // before the open group is cleared: it is never seen in neither place
    for (int k = 0; k < 2; ++k) SH_ST(g->open[k], 0ull);
}

SH_FN void sh_wg_wait(const ShCtx* c, uint32_t n) {
    if (c->tid % 128) return;
    ShWg* g = &c->cta->wgs[c->tid / 128];
    const uint32_t committed = SH_LD(g->committed);
    const uint32_t covered = committed >= n ? committed - n : 0u;
    if (sh_at_or_after(covered, SH_LD(g->waited) + 1)) SH_ST(g->waited, covered);
    SH_ST(g->fenced, 0u);  // the accumulators are the threads' again
    SH_FENCE();
}

// The threads are about to read the accumulators (wgmma_fence_operands).
SH_FN void sh_wg_operands(const ShCtx* c) {
    if (c->tid % 128) return;
    const ShWg* g = &c->cta->wgs[c->tid / 128];
    const uint32_t committed = SH_LD(g->committed), waited = SH_LD(g->waited);
    if (sh_at_or_after(waited, committed) && !SH_LD(g->open[0]) && !SH_LD(g->open[1])) return;
    ShMsg m;
    sh_init_msg(&m);
    sh_s(&m, "the accumulators handed to the threads while ");
    sh_u(&m, committed - waited);
    sh_s(&m, " wgmma group(s) of this warpgroup are still pending");
    if (SH_LD(g->open[0]) || SH_LD(g->open[1])) sh_s(&m, " (and MMAs not yet committed)");
    sh_s(&m, ": wgmma.wait_group 0 first");
    sh_report(c, SH_W2, &m);
}

// ---- clusters ---------------------------------------------------------------------
SH_FN void sh_cluster_arrive(const ShCtx* c) {
    ShThread* th = &c->cta->threads[c->tid];
    SH_ST(th->cl_arrives, SH_LD(th->cl_arrives) + 1);
    if (c->tid == 0) SH_ST(c->cta->cluster_arrives, SH_LD(th->cl_arrives));
    SH_FENCE();
}
SH_FN void sh_cluster_wait(const ShCtx* c) {
    ShThread* th = &c->cta->threads[c->tid];
    SH_ST(th->cl_waits, SH_LD(th->cl_waits) + 1);
    if (c->tid == 0) SH_ST(c->cta->cluster_waits, SH_LD(th->cl_waits));  // the CTA's, for its end
}

// ---- the end of a CTA: what it left behind (S3, C1) -----------------------------------
SH_FN void sh_exit_audit(ShReport* report, ShCta* cta) {
    ShMsg m;
    sh_init_msg(&m);
    const ShSite none = {"", "(the CTA's end)", 0};
    const unsigned long long r = sh_pending_read(cta, 0, 0xFFFFFFFFu, 0xFFFFFFFFu);
    if (r) {
        const uint32_t t = sh_read_thread(r);
        sh_s(&m, "the CTA ended while thread ");
        sh_u(&m, t);
        sh_s(&m, "'s bulk group ");
        sh_u(&m, sh_read_seq(r));
        sh_s(&m, " may still read its shared memory ");
        sh_range(&m, sh_read_lo(r), sh_read_hi(r));
        sh_s(&m, " (read-waited up to group ");
        sh_u(&m, SH_LD(cta->threads[t].bk_read));
        sh_s(&m, "): cp.async.bulk.wait_group.read 0 before the end");
        sh_report_at(report, SH_S3, &none, t, cta->blk, &m);
        return;
    }
    for (int i = 0; i < SH_BARS; ++i) {
        const ShBar* b = &cta->bars[i];
        if (!SH_LD(b->addr) || sh_at_or_after(SH_LD(b->observed), SH_LD(b->issued))) continue;
        if (SH_LD(b->flags) & SH_BAR_UNKNOWN) continue;
        sh_s(&m, "the CTA ended while a copy toward ");
        sh_bar_describe(&m, b);
        sh_s(&m, " may be in flight: no wait saw its phase ");
        sh_u(&m, SH_LD(b->issued) - 1);
        sh_s(&m, " complete, so the copy may still write this CTA's shared memory");
        sh_report_at(report, SH_S3, &none, 0, cta->blk, &m);
        return;
    }
    if (SH_LD(cta->remote_epoch) && !sh_at_or_after(SH_LD(cta->cluster_waits), SH_LD(cta->remote_epoch))) {
        sh_s(&m, "the CTA ended after ");
        sh_u(&m, SH_LD(cta->cluster_waits));
        sh_s(&m,
             " cluster barriers, but a peer arrived on or copied into its shared memory after its own "
             "cluster barrier ");
        sh_u(&m, SH_LD(cta->remote_epoch) - 1);
        sh_s(&m, ": a barrier.cluster arrive and wait, after the last remote operation, keeps it alive");
        sh_report_at(report, SH_C1, &none, 0, cta->blk, &m);
    }
}

// ---- tensor maps ----------------------------------------------------------------
// The props after one tensormap.replace (the fields that change what a copy moves).
enum {
    SH_EDIT_ADDRESS,
    SH_EDIT_DIM,
    SH_EDIT_STRIDE,
    SH_EDIT_BOX,
    SH_EDIT_ESTRIDE,
    SH_EDIT_RANK,
    SH_EDIT_ELEMTYPE,
    SH_EDIT_SWIZZLE,
    SH_EDIT_FILL
};

SH_INL uint32_t sh_ptx_elem_bytes(uint32_t ptx_type) {
    // the PTX ISA's numbering (tensormap_edit.cuh): 0 u8, 1 u16, 2 u32, 3 s32, 4 u64, 5 s64, 6 f16,
    // 7 f32, 8 f32.ftz, 9 f64, 10 bf16, 11 tf32, 12 tf32.ftz
    return ptx_type == 0                                      ? 1u
           : ptx_type == 1 || ptx_type == 6 || ptx_type == 10 ? 2u
           : ptx_type == 4 || ptx_type == 5 || ptx_type == 9  ? 8u
                                                              : 4u;
}

SH_FN void sh_props_sizes(ShProps* p) {
    uint32_t load = p->elem_bytes * p->box[0], box = p->elem_bytes * p->box[0];
    for (uint32_t d = 1; d < p->rank && d < 5; ++d) {
        const uint32_t s = p->estride[d] ? p->estride[d] : 1u;
        load *= (p->box[d] + s - 1) / s;
        box *= p->box[d];
    }
    p->load_bytes = load;
    p->box_bytes = box;
}

SH_FN void sh_props_edit(ShProps* p, int field, uint32_t ord, uint32_t value) {
    if (!p->known) return;
    if (field == SH_EDIT_BOX && ord < 5) p->box[ord] = value;
    if (field == SH_EDIT_ESTRIDE && ord < 5) p->estride[ord] = value;
    if (field == SH_EDIT_RANK) p->rank = value + 1;  // the instruction takes rank - 1
    if (field == SH_EDIT_ELEMTYPE) p->elem_bytes = sh_ptx_elem_bytes(value);
    if (field == SH_EDIT_SWIZZLE) p->swizzle = value;
    sh_props_sizes(p);
}

// A tensor map in global memory that the device wrote (tensormap.cp_fenceproxy,
// or tensormap.replace .global), keyed by its address.
typedef struct {
    ShCta* cta;  // the CTA of a use, and the owner it had
    unsigned long long owner;
    uint32_t generation;
    uint32_t thread, kind, seq, bar;  // kind 1: a store (bulk group seq), 2: a load (its barrier, phase seq)
} ShUse;

// A use whose CTA still runs: the same owner, in the same claim of its slot.
SH_FN int sh_use_live(const ShUse* u) {
    return u->cta && SH_LD(u->cta->owner) == u->owner && SH_LD(u->cta->generation) == u->generation;
}

#define SH_USES 8
typedef struct {
    unsigned long long addr;                     // 0: free
    uint32_t version, released, device_written;  // device_written 0: the host wrote it (only used here)
    unsigned long long editor_owner;
    uint32_t editor_thread;
    ShProps props;
    ShUse uses[SH_USES];
} ShGlobalMap;

// M1: a map rewritten while something in flight still reads it.
SH_FN int sh_map_check_rewrite(const ShCtx* c, ShGlobalMap* gm) {
    for (int i = 0; i < SH_USES; ++i) {
        ShUse* u = &gm->uses[i];
        const uint32_t kind = SH_LD(u->kind);
        if (!kind || !sh_use_live(u)) continue;  // gone: its CTA has ended
        int pending = 0;
        if (kind == 1) {
            pending = !sh_read_done(SH_LD(u->cta->threads[u->thread].bk_read), u->seq);
        } else {
            const ShBar* b = &u->cta->bars[u->bar];
            pending = !sh_at_or_after(SH_LD(b->observed), u->seq + 1);
        }
        if (!pending) continue;
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, "the tensor map at global ");
        sh_x(&m, gm->addr);
        sh_s(&m, " (version ");
        sh_u(&m, SH_LD(gm->version));
        sh_s(&m, ") rewritten while ");
        if (kind == 1) {
            sh_s(&m, "bulk group ");
            sh_u(&m, u->seq);
            sh_s(&m, " of thread ");
            sh_u(&m, u->thread);
            sh_s(&m, " (a TMA store through it; the thread has committed ");
            sh_u(&m, SH_LD(u->cta->threads[u->thread].bk_committed));
            sh_s(&m, " groups, read-waited ");
            sh_u(&m, SH_LD(u->cta->threads[u->thread].bk_read));
            sh_s(&m, ") may still read it: cp.async.bulk.wait_group.read first");
        } else {
            const ShBar* b = &u->cta->bars[u->bar];
            sh_s(&m, "a TMA load through it is in flight (its barrier's phase ");
            sh_u(&m, u->seq);
            sh_s(&m, " not yet waited for: ");
            sh_u(&m, sh_done(SH_LD(b->st)));
            sh_s(&m, " phases complete, waits have seen ");
            sh_u(&m, SH_LD(b->observed));
            sh_s(&m, (SH_LD(b->flags) & SH_BAR_UNKNOWN) ? "; a copy of unknown size counted toward it" : "");
            sh_s(&m, u->cta == c->cta ? ")" : "; a load of another CTA)");
        }
        sh_report(c, SH_M1, &m);
        return 0;
    }
    return 1;
}

// A use by the TMA of a map in global memory (gm: what the device wrote
// there, or NULL for a map the host wrote): M2, M3.
SH_FN int sh_map_check_use(const ShCtx* c, const ShGlobalMap* any, unsigned long long addr) {
    const ShGlobalMap* gm = any && SH_LD(any->device_written) ? any : 0;
    int acquired = 0, sys = 0;
    for (int i = 0; i < SH_ACQS; ++i) {
        const ShAcq* a = &c->cta->acqs[i];
        if (SH_LD(a->addr) == addr && SH_LD(a->thread) == c->tid &&
            (!gm || SH_LD(a->version) == SH_LD(gm->version)))
            acquired = 1, sys |= (int)SH_LD(a->sys);
    }
    ShMsg m;
    sh_init_msg(&m);
    if (gm && !SH_LD(gm->released)) {
        sh_s(&m, "the TMA uses the tensor map at global ");
        sh_x(&m, addr);
        sh_s(&m,
             ", edited in place (tensormap.replace .global) with no fence.proxy.tensormap::generic.release "
             "by the editing thread since: the tensormap proxy may see the old fields");
        sh_report(c, SH_M2, &m);
        return 0;
    }
    if (!acquired || (!gm && !sys)) {
        sh_s(&m, "the TMA uses the tensor map at global ");
        sh_x(&m, addr);
        sh_s(&m, gm ? ", which the device rewrote (version " : ", which the host wrote,");
        if (gm) {
            sh_u(&m, SH_LD(gm->version));
            sh_s(&m, "),");
        }
        sh_s(&m, acquired
                     ? " acquired at .gpu scope only: the host's writes need .sys"
                     : " without this thread's fence.proxy.tensormap::generic.acquire since: the TMA may "
                       "keep its cached copy of the old map");
        sh_report(c, SH_M3, &m);
        return 0;
    }
    return 1;
}

SH_FN void sh_map_acquire(const ShCtx* c, unsigned long long addr, const ShGlobalMap* gm, uint32_t sys) {
    // An acquire pairs with a release before it: one taken while the map's last edits are unreleased
    // acquires nothing of them (a use then needs another acquire, after the release: M3).
    if (gm && SH_LD(gm->device_written) && !SH_LD(gm->released)) return;
    // This thread's entry for the map, else the next one in turn: threads of one CTA may acquire at the
    // same time (a producer and two consumers), and the atomic turn gives each its own entry, the oldest.
    ShAcq* victim = 0;
    for (int i = 0; i < SH_ACQS && !victim; ++i) {
        ShAcq* a = &c->cta->acqs[i];
        if (SH_LD(a->addr) == addr && SH_LD(a->thread) == c->tid) victim = a;
    }
    const uint32_t seq = SH_ADD32(&c->cta->acq_seq, 1u);
    if (!victim) victim = &c->cta->acqs[seq % SH_ACQS];
    SH_ST(victim->addr, 0ull);
    SH_ST(victim->thread, c->tid);
    SH_ST(victim->version, gm ? SH_LD(gm->version) : 0u);
    SH_ST(victim->sys, sys);
    SH_ST(victim->seq, seq + 1);
    SH_ST(victim->addr, addr);
}

// tensormap.replace on the map at `addr`, by this thread: its props before the
// edit are kept here, the edit applied to them after (tensormap_edit.cuh).
SH_FN ShEdit* sh_edit_slot(const ShCtx* c, unsigned long long addr) {
    for (int i = 0; i < SH_EDITS; ++i)
        if (c->cta->edits[i].addr == addr && c->cta->edits[i].thread == c->tid) return &c->cta->edits[i];
    // A new entry: the next in turn (an atomic count), so that threads editing at once never share one.
    ShEdit* e = &c->cta->edits[SH_ADD32(&c->cta->edit_seq, 1u) % SH_EDITS];
    e->addr = addr;
    e->thread = c->tid;
    return e;
}

SH_FN void sh_map_note_use(const ShCtx* c, ShGlobalMap* gm, uint32_t kind, uint32_t seq, uint32_t bar) {
    int victim = 0;
    for (int i = 0; i < SH_USES; ++i) {
        const ShUse* u = &gm->uses[i];
        if (!SH_LD(u->kind) || !sh_use_live(u)) {
            victim = i;
            break;
        }
        victim = (int)(seq % SH_USES);
    }
    ShUse* u = &gm->uses[victim];
    SH_ST(u->kind, 0u);
    u->cta = c->cta;
    u->owner = SH_LD(c->cta->owner);
    u->generation = SH_LD(c->cta->generation);
    u->thread = c->tid;
    u->seq = seq;
    u->bar = bar;
    SH_FENCE();
    SH_ST(u->kind, kind);
}

// tensormap.cp_fenceproxy into a global slot: a new version, released.
SH_FN int sh_map_publish(const ShCtx* c, ShGlobalMap* g, const ShProps* p) {
    if (!sh_map_check_rewrite(c, g)) return 0;
    g->props = *p;
    SH_ST(g->version, SH_LD(g->version) + 1);
    g->editor_owner = SH_LD(c->cta->owner);
    g->editor_thread = c->tid;
    SH_ST(g->device_written, 1u);
    SH_FENCE();
    SH_ST(g->released, 1u);  // cp_fenceproxy releases what it copies
    return 1;
}

// tensormap.replace .global on a slot: the first edit after a release (or by
// another thread) starts a new version, unreleased until this thread's
// fence.proxy.tensormap::generic.release.
SH_FN int sh_map_edit_global(const ShCtx* c, ShGlobalMap* g, const ShProps* p) {
    if (SH_LD(g->released) || SH_LD(g->version) == 0 || SH_LD(g->editor_owner) != SH_LD(c->cta->owner) ||
        g->editor_thread != c->tid) {
        if (!sh_map_check_rewrite(c, g)) return 0;
        SH_ST(g->version, SH_LD(g->version) + 1);
    }
    g->props = *p;
    g->editor_owner = SH_LD(c->cta->owner);
    g->editor_thread = c->tid;
    SH_ST(g->device_written, 1u);
    SH_ST(g->released, 0u);
    return 1;
}

// fence.proxy.tensormap::generic.release by this thread: its edits are released.
SH_FN void sh_map_release(const ShCtx* c, ShGlobalMap* g) {
    if (SH_LD(g->addr) && !SH_LD(g->released) && g->editor_owner == SH_LD(c->cta->owner) &&
        g->editor_thread == c->tid)
        SH_ST(g->released, 1u);
}
