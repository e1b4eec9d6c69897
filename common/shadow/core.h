// core.h: the shadow build's protocol state and its rules, as plain functions
// on plain structs, the same code on the GPU (called from the wrappers'
// hooks through shadow.cuh, or from the Sanitizer API tool's patch functions)
// and on the CPU (tests/unit_shadow.cu feeds it event sequences, correct and
// broken, without a GPU).
//
// What is kept, per CTA (ShCta, in global memory, one slot per CTA running):
//   barriers   per mbarrier: its count, and in one 64-bit word the phases
//              completed, the arrivals still missing and the transaction
//              bytes still owed in the current phase (expect_tx adds, a copy
//              issued toward it subtracts); a phase completes here when the
//              LAST event that the hardware needs for it is issued, so this
//              count is never behind the hardware's;
//   threads    per thread: what it is ordered after (below), its marks, its
//              cp.async, bulk and wgmma groups committed and waited (and
//              when), its proxy fences, the tensor maps it acquired;
//   warpgroups the shared memory each pending wgmma group reads;
//   reads      shared memory that bulk stores and reduces still read;
//   regions    shared memory the TMA wrote, with which swizzle, on which
//              barrier phase;
//   chunks     per 16 bytes of shared memory, its last writer: a thread's
//              store (which words, and the thread's mark then), a cp.async
//              (its group), or a TMA or bulk load (its barrier and phase).
// A rule broken fills one report (the first wins) and the program's bounded
// waits give up: the kernel ends, and the part's check line fails with it.
//
// Happens-before. A rule that asks whether a wait or a fence "happened" asks
// it of the ACTING thread: did its own program order, or a chain of
// synchronizations, put it after that wait or fence? The sync objects are
// the CTA's mbarriers, the 16 bar.sync ids (0: __syncthreads()), the cluster
// barrier and each warp's __syncwarp; each has PHASES (an mbarrier's own; for
// a bar.sync id, a cluster barrier or a warp, the thread's own count of its
// passes, which every participant counts alike). Per thread:
//   know[]   per sync object, how many of its phases the thread is ordered
//            after (a vector clock over sync objects, 16-bit counts compared
//            with wrap-around);
//   log[]    its last SH_LOG releases (an arrive, a bar.sync or bar.arrive, a
//            __syncwarp, a cluster arrive): which object, which phase, and
//            the thread's mark count then;
//   seq      its marks: each release, proxy fence and wait that others may
//            need to be ordered after gets the next number; a plain event (a
//            store, an init) is stamped with the count so far.
// A release joins the thread's know[] into its phase's accumulator (per sync
// object, one per phase parity); the thread that passes that phase (an
// mbarrier wait that saw it complete, the same bar.sync, cluster barrier or
// __syncwarp) folds the accumulator into its own know[] and knows the phase
// itself: it is ordered after everything every arriver was ordered after
// (Triton's ConSan keeps the same kind of visibility per thread and per
// async agent). "Thread a is ordered after thread t's event stamped s"
// (sh_after) is then: a == t, or some release of t with a mark after s is
// a phase a knows. Within one CTA only: other CTAs' order (flags in global
// memory, grid boundaries) is not seen, and the rules that cross CTAs decide
// on the state as it is (rules.h says which).
//
// The contract of the hooks: a release (arrive, bar.sync, bar.arrive,
// __syncwarp, cluster arrive) is reported BEFORE its instruction, so that
// what the thread joins is there when a partner passes; a wait may be
// reported after it (a bar.sync's knowledge is folded in at the thread's
// next event, an mbarrier wait's at once). With feed SH_FEED_SYNC (the
// Sanitizer API tool reports every bar.sync, bar.arrive, __syncwarp and
// cluster barrier) the rules below are strict; without it (the wrappers'
// hooks see __syncthreads(), mbarriers and cluster barriers, not named
// barriers nor __syncwarp), S1, S2, M1 and M2 keep the state as it is in
// real time as their second chance: what the missing barriers may have
// ordered is not reported.
//
// The cost, per CTA slot: sizeof(ShCta), 662 KiB: the threads' states 536 KiB
// (1024 threads x 536 bytes: know[] 162, the log 64), the accumulators 53 KiB
// (81 sync objects x 672 bytes), the chunks 57 KiB, the rest 16 KiB. A
// thread's own state is cleared by its first event (sh_me), the rest by
// sh_cta_reset when the slot is claimed. The time: a release joins the
// entries its thread knows (a few), a fold reads those the arrivers knew, a
// check of "ordered after" reads at most SH_LOG releases.
//
// Entry points (ShCtx: the CTA's state, the acting thread, the call site):
//   barriers   sh_mbar_init, sh_mbar_inval, sh_mbar_fence_init, sh_arrive,
//              sh_arrive_n (a count and a scope), sh_credit (a copy toward a
//              barrier), sh_wait_done, sh_wait_gave_up;
//   order      sh_bar (bar.sync / bar.arrive id, count), sh_syncthreads,
//              sh_syncwarp, sh_cluster_arrive, sh_cluster_wait, sh_fence_scope;
//   shared     sh_wrote, sh_read, sh_remote_wrote, sh_fence_proxy_async;
//   cp.async   sh_cp_async, sh_cp_commit, sh_cp_wait;
//   bulk       sh_bulk_read, sh_bulk_commit, sh_bulk_wait, sh_load_into;
//   wgmma      sh_wg_fence, sh_mma, sh_wg_commit, sh_wg_wait, sh_wg_operands;
//   maps       sh_props_edit, sh_map_check_use, sh_map_note_use,
//              sh_map_publish(_scoped), sh_map_edit_global,
//              sh_map_release(_scoped), sh_map_acquire, sh_map_check_rewrite;
//   the CTA    sh_cta_reset (its claim), sh_exit_audit (its end);
//   reports    sh_rule_id, sh_rule_name, sh_rule_text, sh_format_report;
//   addresses  sh_smem_offset (the state's offset of a shared address).
#pragma once

#include <stdint.h>
#include <stdio.h>

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
#define SH_WARPS (SH_MAX_THREADS / 32)
#define SH_NAMED 16                     // bar.sync ids: 0 is __syncthreads()
#define SH_WG_RING 8                    // wgmma groups remembered per warpgroup (wait_group takes 0..7)
#define SH_READS 64                     // bulk reads pending per CTA
#define SH_REGIONS 32                   // TMA-written regions remembered per CTA
#define SH_SMEM_WINDOW (232448 + 1024)  // sm_90's largest shared window, the reserved 1 KiB included
#define SH_CHUNKS (SH_SMEM_WINDOW / 16)
#define SH_LOG 8   // releases remembered per thread
#define SH_HIST 4  // waits (or fences) remembered per thread and kind

// The sync objects, one index each: the mbarriers by their slot in bars[],
// then the bar.sync ids, the cluster barrier, each warp's __syncwarp.
#define SH_SYNC_NAMED(id) (SH_BARS + (id))
#define SH_SYNC_CLUSTER (SH_BARS + SH_NAMED)
#define SH_SYNC_WARP(w) (SH_SYNC_CLUSTER + 1 + (w))
#define SH_SYNCS (SH_SYNC_WARP(SH_WARPS))
#define SH_KWORDS ((SH_SYNCS + 31) / 32)

// A release's or an acquire's scope (0 and 1 as sh_map_acquire's `sys` always meant).
enum { SH_SCOPE_GPU = 0, SH_SCOPE_SYS = 1, SH_SCOPE_CTA = 2, SH_SCOPE_CLUSTER = 3 };
// What the feed reports: SH_FEED_SYNC, every bar.sync, bar.arrive, __syncwarp and cluster barrier.
enum { SH_FEED_SYNC = 1 };

// ---- atomics: the GPU's, or plain operations in the single-threaded CPU test
#ifdef __CUDA_ARCH__
#define SH_CAS64(p, old, val) atomicCAS((unsigned long long*)(p), (old), (val))
#define SH_CAS32(p, old, val) atomicCAS((unsigned int*)(p), (old), (val))
#define SH_ADD32(p, v) atomicAdd((unsigned int*)(p), (v))
#define SH_MAX32(p, v) atomicMax((unsigned int*)(p), (v))
#define SH_OR32(p, v) atomicOr((unsigned int*)(p), (v))
#define SH_FENCE() __threadfence()
#define SH_CTZ(x) (__ffs((int)(x)) - 1)
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
SH_INL unsigned int sh_or32_host(unsigned int* p, unsigned int v) {
    const unsigned int was = *p;
    *p = was | v;
    return was;
}
#define SH_CAS64(p, old, val) sh_cas64_host((unsigned long long*)(p), (old), (val))
#define SH_CAS32(p, old, val) sh_cas32_host((unsigned int*)(p), (old), (val))
#define SH_ADD32(p, v) sh_add32_host((unsigned int*)(p), (v))
#define SH_MAX32(p, v) sh_max32_host((unsigned int*)(p), (v))
#define SH_OR32(p, v) sh_or32_host((unsigned int*)(p), (v))
#define SH_FENCE() ((void)0)
#define SH_CTZ(x) __builtin_ctz(x)
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

enum { SH_BAR_BYTES = 1, SH_BAR_FENCED = 2, SH_BAR_MINUS1 = 4, SH_BAR_UNKNOWN = 8, SH_BAR_INVAL = 16 };

typedef struct {
    uint32_t addr;          // shared offset + 1 (0: a free entry)
    uint32_t count;         // arrivals per phase
    unsigned long long st;  // phases done [63:48], arrivals missing [47:32], bytes owed [31:0] (signed)
    uint32_t flags;         // SH_BAR_*
    uint32_t init_epoch;    // cluster barriers this CTA had arrived at when it initialized it
    uint32_t init_thread;   // who initialized it, and that thread's mark count then (B1)
    uint32_t init_seq;
    unsigned long long guard;  // span: the stage this barrier hands back (learned from its producer)
    uint32_t observed;         // newest phase a wait saw complete, + 1
    uint32_t issued;           // newest phase a copy was issued toward, + 1
    uint32_t last_copy;        // bytes of the last copy credited (for messages)
    ShSite minus1;             // where a wait returned for the phase before the first
    uint32_t minus1_thread;
} ShBar;

// Waits (or fences) that advanced a count: to which group, at which mark; newest at (n - 1) % SH_HIST.
typedef struct {
    uint32_t g[SH_HIST], s[SH_HIST], n;
} ShHist;

typedef struct {
    uint32_t gen;                    // the claim of the slot this state belongs to (sh_me clears a stale one)
    uint32_t seq;                    // marks so far
    uint32_t pend, pend_phase;       // a barrier passed (sync + 1), its knowledge folded in at the next event
    uint32_t nlog;                   // releases so far
    unsigned long long log[SH_LOG];  // release n at n % SH_LOG: [63:32] its mark, [23:16] sync, [15:0] phase
    uint32_t kmask[SH_KWORDS];       // the sync objects know[] holds
    uint16_t know[SH_SYNCS];         // per sync object: its phases this thread is ordered after (mod 2^16)
    uint32_t named[SH_NAMED];        // bar.sync / bar.arrive passes per id: the phase of the next
    uint32_t warp_syncs;             // __syncwarp passes
    uint32_t cl_arrives, cl_waits;   // cluster barriers this thread arrived at, and waited on
    uint32_t cp_committed, cp_waited;  // cp.async groups: closed, and covered by a wait
    ShHist cov;                        // cp.async waits
    uint32_t bk_committed, bk_read;    // bulk groups: closed, and read-waited (a full wait too)
    ShHist rd;                         // bulk read-waits
    ShHist fences;                     // fence.proxy.async (g unused)
    unsigned long long dirty;          // span: large ordinary stores since the last fence.proxy.async
    uint32_t learn_bar, learn_fresh;   // the last non-byte barrier waited on (+1), a load since?
    uint32_t wg_committed, wg_waited;  // this thread's wgmma groups: closed, and covered by its waits
    uint32_t wg_fenced, wg_open;       // a wgmma.fence since its last wait; an MMA since its last commit
    ShHist wgw;                        // wgmma waits
    uint32_t remote_dirty;             // stores into a peer's shared memory since a cluster-scope release
} ShThread;

typedef struct {
    uint32_t committed, waited, used;        // the leader's (thread 0 of the warpgroup) count and waits
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
    uint32_t bar, phase;      // the barrier slot (+ 1; 0: none) and the phase its copy completes
} ShRegion;

typedef struct {
    unsigned long long addr;  // a tensor map in global memory that `thread` acquired (0: free)
    uint32_t thread, version, scope, seq;
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

// What the arrivers of one phase of a sync object knew, per sync object i:
// k[phase & 1][i] = valid [31] | (phase >> 1) & 0x7FFF [30:16] | count [15:0].
typedef struct {
    uint32_t k[2][SH_SYNCS];
    uint32_t mask[2][SH_KWORDS];  // which entries were ever joined (a union over the phases)
} ShAcc;

typedef struct {
    unsigned long long owner;  // (grid id << 32 | linear CTA id) + 1 of the CTA using the slot; 0: free
    uint32_t generation;       // claims of the slot so far: a graph's replays keep their grid id, not this
    // ---- sh_cta_reset clears from here to threads[] ----
    uint32_t nthreads, nchunks, cluster_size, feed;
    uint32_t cluster_arrives, cluster_waits,
        remote_epoch;  // remote_epoch: max over remote ops of issuer's arrives + 1
    uint32_t dirty_count, region_seq, reads_used, wgmma_used, stores_seen;
    uint32_t untracked_bars;  // more barriers than SH_BARS: those beyond go unchecked
    uint32_t blk[3];
    unsigned long long bar_span;    // the shared memory of every barrier ever initialized (B5's quick test)
    unsigned long long reads_span;  // of every bulk read recorded (S2's quick test)
    unsigned long long mma_span;    // of every wgmma operand recorded (S2's quick test)
    ShBar bars[SH_BARS];
    ShWg wgs[SH_WGS];
    ShRead reads[SH_READS];
    ShRegion regions[SH_REGIONS];
    ShAcq acqs[SH_ACQS];
    uint32_t acq_seq;
    ShEdit edits[SH_EDITS];
    uint32_t edit_seq;
    ShAcc acc[SH_SYNCS];
    // ---- to here ----
    ShThread threads[SH_MAX_THREADS];
    uint32_t chunks[SH_CHUNKS];  // see "chunks" below
} ShCta;

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

// ---- the rules' names, and the report line -----------------------------------------
// The table of rules.h, by the number a report carries: field 0 its id, 1 its name, 2 its text
// (SH_NONE and numbers past the table: "?").
SH_INL const char* sh_rule_field(unsigned rule, int field) {
    switch (rule) {
#define SH_RULE_CASE(id, name, text) \
    case SH_##id:                    \
        return field == 0 ? #id : field == 1 ? name : text;
        SHADOW_RULES(SH_RULE_CASE)
#undef SH_RULE_CASE
    default:
        return "?";
    }
}
SH_INL const char* sh_rule_id(unsigned rule) {
    return sh_rule_field(rule, 0);
}
SH_INL const char* sh_rule_name(unsigned rule) {
    return sh_rule_field(rule, 1);
}
SH_INL const char* sh_rule_text(unsigned rule) {
    return sh_rule_field(rule, 2);
}

// The report as the line under a failing check (tools/bugs.py's SHADOW_LINE reads it): on the host.
static inline int sh_format_report(const ShReport* r, char* out, size_t cap) {
    return snprintf(out, cap, "shadow: %s %s: %s; block (%u,%u,%u) thread %u, %s (%s:%u)",
                    sh_rule_id(r->rule), sh_rule_name(r->rule), r->text, r->block[0], r->block[1],
                    r->block[2], r->thread, r->func, r->file, r->line);
}

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

// ---- encodings ---------------------------------------------------------------------
// The state's offset of a shared-window address (cvta.to.shared): in a cluster
// launch the window's address of a CTA's own shared memory carries its rank
// above bit 24 (on the H200: rank 1's offset 0x400 reads 0x1000400); the
// offset is the 24 bits below, up to the largest window (227 KiB + 1 KiB).
SH_INL uint32_t sh_smem_offset(uint32_t window_addr) {
    return window_addr & 0xFFFFFFu;
}

SH_INL int sh_overlap(uint32_t a_lo, uint32_t a_hi, uint32_t b_lo, uint32_t b_hi) {
    return a_lo < b_hi && b_lo < a_hi;
}
// Counters that wrap: a at or after b.
SH_INL int sh_at_or_after(uint32_t a, uint32_t b) {
    return (int32_t)(a - b) >= 0;
}
// 16-bit counts (phases) that wrap: a after b.
SH_INL int sh_newer16(uint32_t a, uint32_t b) {
    return (int16_t)(uint16_t)(a - b) > 0;
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

// A chunk of 16 bytes of shared memory: its last writer, in one word.
//   [31:30] kind: 0 none, 1 a thread's store, 2 a cp.async, 3 a TMA or bulk load;
//   store: [29:26] the 4-byte words it wrote, [25:16] the thread, [15:0] its mark count then;
//   cp:    [29:20] the thread, [19:0] its group (the thread's commit count + 1);
//   load:  [29:24] the barrier's slot, [23:0] the phase the copy completes (its low 16 bits used).
enum { SH_CHUNK_NONE = 0, SH_CHUNK_STORE = 1, SH_CHUNK_CP = 2, SH_CHUNK_LOAD = 3 };
#define SH_EXACT_BYTES 256  // a write range up to this size is the thread's own elements: remembered by chunk
SH_INL uint32_t sh_chunk_kind(uint32_t w) {
    return w >> 30;
}
SH_INL uint32_t sh_chunk_store(uint32_t words, uint32_t thread, uint32_t seq) {
    return (uint32_t)SH_CHUNK_STORE << 30 | (words & 0xFu) << 26 | (thread & 0x3FFu) << 16 | (seq & 0xFFFFu);
}
SH_INL uint32_t sh_chunk_cp(uint32_t thread, uint32_t group) {
    return (uint32_t)SH_CHUNK_CP << 30 | (thread & 0x3FFu) << 20 | (group & 0xFFFFFu);
}
SH_INL uint32_t sh_chunk_load(uint32_t slot, uint32_t phase) {
    return (uint32_t)SH_CHUNK_LOAD << 30 | (slot & 0x3Fu) << 24 | (phase & 0xFFFFFFu);
}
SH_INL uint32_t sh_chunk_words(uint32_t w) {
    return w >> 26 & 0xFu;
}
SH_INL uint32_t sh_chunk_store_thread(uint32_t w) {
    return w >> 16 & 0x3FFu;
}
SH_INL uint32_t sh_chunk_store_seq(uint32_t w) {
    return w & 0xFFFFu;
}
SH_INL uint32_t sh_chunk_cp_thread(uint32_t w) {
    return w >> 20 & 0x3FFu;
}
SH_INL uint32_t sh_chunk_cp_group(uint32_t w) {
    return w & 0xFFFFFu;
}
SH_INL uint32_t sh_chunk_load_slot(uint32_t w) {
    return w >> 24 & 0x3Fu;
}
SH_INL uint32_t sh_chunk_load_phase(uint32_t w) {
    return w & 0xFFFFFFu;
}
// The 4-byte words of chunk q that [lo, hi) touches.
SH_INL uint32_t sh_words_of(uint32_t q, uint32_t lo, uint32_t hi) {
    const uint32_t a = lo > q * 16 ? lo - q * 16 : 0u, b = hi < q * 16 + 16 ? hi - q * 16 : 16u;
    return a >= b ? 0u : ((1u << ((b + 3) / 4)) - 1u) & ~((1u << (a / 4)) - 1u);
}

// ---- happens-before ----------------------------------------------------------------
// Thread `me` is ordered after phase `phase` of sync object `sync` (after every arrival of it).
SH_INL int sh_knows(const ShThread* me, uint32_t sync, uint32_t phase) {
    if (sync >= SH_SYNCS || !(SH_LD(me->kmask[sync / 32]) >> (sync % 32) & 1u)) return 0;
    return (int16_t)(uint16_t)(SH_LD(me->know[sync]) - (phase + 1)) >= 0;
}
// `count` phases of `sync` complete, for this thread (its own state: nobody else writes it).
SH_INL void sh_learn(ShThread* me, uint32_t sync, uint32_t count) {
    const uint32_t bit = 1u << (sync % 32);
    if (!(me->kmask[sync / 32] & bit)) {
        SH_ST(me->know[sync], (uint16_t)count);
        SH_ST(me->kmask[sync / 32], me->kmask[sync / 32] | bit);
    } else if (sh_newer16(count, me->know[sync])) {
        SH_ST(me->know[sync], (uint16_t)count);
    }
}

#define SH_ACC_VALID 0x80000000u
SH_INL uint32_t sh_acc_tag(uint32_t phase) {
    return (phase >> 1) & 0x7FFFu;
}
// One arriver's count for one sync object, into its phase's accumulator entry.
SH_FN void sh_acc_join(uint32_t* e, uint32_t phase, uint32_t count) {
    const uint32_t tag = sh_acc_tag(phase), mine = SH_ACC_VALID | tag << 16 | (count & 0xFFFFu);
    uint32_t old = SH_LD(*e);
    for (;;) {
        uint32_t next = mine;
        if (old & SH_ACC_VALID) {
            const uint32_t was = old >> 16 & 0x7FFFu;
            if (was == tag) {
                if (!sh_newer16(count, old)) return;  // what it holds already covers this
            } else if (((tag - was) & 0x7FFFu) >= 0x4000u) {
                return;  // an arrival of an older phase, late: that phase's waiters have folded it
            }
        }
        const uint32_t seen = SH_CAS32(e, old, next);
        if (seen == old) return;
        old = seen;
    }
}

// A release by `me` into phase `phase` of `sync`: what it knows goes to that
// phase's accumulator, and into its log (with its next mark).
SH_FN void sh_release(const ShCtx* c, ShThread* me, uint32_t sync, uint32_t phase) {
    ShAcc* a = &c->cta->acc[sync];
    const uint32_t s = phase & 1;
    for (uint32_t w = 0; w < SH_KWORDS; ++w) {
        uint32_t bits = me->kmask[w];
        if (bits && (SH_LD(a->mask[s][w]) & bits) != bits) SH_OR32(&a->mask[s][w], bits);
        while (bits) {
            const uint32_t i = w * 32 + (uint32_t)SH_CTZ(bits);
            bits &= bits - 1;
            sh_acc_join(&a->k[s][i], phase, me->know[i]);
        }
    }
    const uint32_t seq = me->seq + 1;
    SH_ST(me->log[me->nlog % SH_LOG],
          (unsigned long long)seq << 32 | (sync & 0xFFu) << 16 | (phase & 0xFFFFu));
    SH_FENCE();  // the entry before the counts that make it visible
    SH_ST(me->seq, seq);
    SH_ST(me->nlog, me->nlog + 1);
}

// `me` passed phase `phase` of `sync`: ordered after everything its arrivers were.
SH_FN void sh_fold(const ShCta* cta, ShThread* me, uint32_t sync, uint32_t phase) {
    const ShAcc* a = &cta->acc[sync];
    const uint32_t s = phase & 1, tag = sh_acc_tag(phase);
    for (uint32_t w = 0; w < SH_KWORDS; ++w) {
        uint32_t bits = SH_LD(a->mask[s][w]);
        while (bits) {
            const uint32_t i = w * 32 + (uint32_t)SH_CTZ(bits);
            bits &= bits - 1;
            const uint32_t e = SH_LD(a->k[s][i]);
            if ((e & SH_ACC_VALID) && (e >> 16 & 0x7FFFu) == tag) sh_learn(me, i, e & 0xFFFFu);
        }
    }
    sh_learn(me, sync, phase + 1);
}

// A mark: a fence or a wait that a later release carries to others.
SH_INL uint32_t sh_mark(ShThread* me) {
    SH_ST(me->seq, me->seq + 1);
    return me->seq;
}

// The acting thread's own state: cleared on its first event in this claim of
// the slot, with the knowledge of a barrier it passed folded in.
SH_FN ShThread* sh_me(const ShCtx* c) {
    ShThread* me = &c->cta->threads[c->tid];
    const uint32_t gen = SH_LD(c->cta->generation);
    if (SH_LD(me->gen) != gen) {
        uint32_t* w = (uint32_t*)me;
        for (uint32_t i = 0; i < sizeof(ShThread) / 4; ++i) w[i] = 0u;
        SH_FENCE();
        SH_ST(me->gen, gen);
    }
    const uint32_t pend = me->pend;
    if (pend) {
        me->pend = 0;
        sh_fold(c->cta, me, pend - 1, me->pend_phase);
    }
    return me;
}

// Thread t's state in this claim of the slot, or NULL (it has done nothing yet).
SH_INL const ShThread* sh_peer(const ShCta* cta, uint32_t t) {
    if (t >= SH_MAX_THREADS) return 0;
    const ShThread* th = &cta->threads[t];
    return SH_LD(th->gen) == SH_LD(cta->generation) ? th : 0;
}

// Is thread a (its state `me`) ordered after what thread t did up to its mark
// count s? 1: yes (a == t, or a release of t after s is a phase a knows);
// 0: no; 2: t's log no longer says (it released more than SH_LOG times
// since): no report then.
SH_FN int sh_after(const ShCta* cta, const ShThread* me, uint32_t a, uint32_t t, uint32_t s) {
    if (a == t) return 1;
    const ShThread* wt = sh_peer(cta, t);
    if (!wt) return 2;
    const uint32_t n = SH_LD(wt->nlog);
    for (uint32_t i = 0; i < SH_LOG && i < n; ++i) {
        const unsigned long long e = SH_LD(wt->log[(n - 1 - i) % SH_LOG]);
        if (!sh_at_or_after((uint32_t)(e >> 32), s + 1)) return 0;  // it, and the older ones: before s
        if (sh_knows(me, (uint32_t)(e >> 16) & 0xFFu, (uint32_t)e & 0xFFFFu)) return 1;
    }
    return n > SH_LOG ? 2 : 0;
}
// Thread t's full mark count of a chunk's 16-bit stamp.
SH_INL uint32_t sh_full_seq(const ShThread* wt, uint32_t s16) {
    const uint32_t now = SH_LD(wt->seq);
    return now - ((now - s16) & 0xFFFFu);
}

#define SH_LOST 0xFFFFFFFFu   // the history no longer holds the first wait that covered the group
#define SH_NEVER 0xFFFFFFFEu  // no wait covered it
SH_FN void sh_hist_push(ShHist* h, uint32_t group, uint32_t seq) {
    const uint32_t k = h->n % SH_HIST;
    SH_ST(h->g[k], group);
    SH_ST(h->s[k], seq);
    SH_FENCE();
    SH_ST(h->n, h->n + 1);
}
// The mark of the first wait in `h` that covered `group` (counts compared within `mask`, which wrap).
SH_FN uint32_t sh_hist_first(const ShHist* h, uint32_t group, uint32_t mask) {
    const uint32_t n = SH_LD(h->n), half = (mask >> 1) + 1;
    uint32_t best = SH_NEVER;
    for (uint32_t i = 0; i < SH_HIST && i < n; ++i) {
        const uint32_t k = (n - 1 - i) % SH_HIST;  // newest first
        if (((SH_LD(h->g[k]) - group) & mask) >= half) return best;
        best = SH_LD(h->s[k]);
    }
    return n > SH_HIST && best != SH_NEVER ? SH_LOST : best;
}
// The mark of thread wt's first proxy fence after its mark count s.
SH_FN uint32_t sh_fence_after(const ShThread* wt, uint32_t s) {
    const uint32_t n = SH_LD(wt->fences.n);
    uint32_t best = SH_NEVER;
    for (uint32_t i = 0; i < SH_HIST && i < n; ++i) {
        const uint32_t f = SH_LD(wt->fences.s[(n - 1 - i) % SH_HIST]);
        if (!sh_at_or_after(f, s + 1)) return best;
        best = f;
    }
    return n > SH_HIST && best != SH_NEVER ? SH_LOST : best;
}
// Without the full feed a barrier may have ordered what the state cannot show.
SH_INL int sh_strict(const ShCta* cta) {
    return (int)(SH_LD(cta->feed) & SH_FEED_SYNC);
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
    ShThread* me = sh_me(c);
    const uint32_t key = addr + 1, h = (addr >> 3) % SH_BARS;
    ShBar* b = 0;
    int fresh = 0;
    for (uint32_t i = 0; i < SH_BARS && !b; ++i) {
        ShBar* e = &c->cta->bars[(h + i) % SH_BARS];
        const uint32_t k = SH_LD(e->addr);
        if (k == key) b = e;
        if (k == 0 && SH_CAS32(&e->addr, 0u, key) == 0u) b = e, fresh = 1;
    }
    if (!b) {  // more barriers than the shadow keeps: this one goes unchecked
        SH_ST(c->cta->untracked_bars, 1u);
        return;
    }
    if (!fresh && !(SH_LD(b->flags) & SH_BAR_INVAL)) {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, "mbarrier.init on ");
        sh_bar_describe(&m, b);
        sh_s(&m, ", which thread ");
        sh_u(&m, SH_LD(b->init_thread));
        sh_s(&m, " initialized (");
        sh_u(&m, sh_done(SH_LD(b->st)));
        sh_s(&m,
             " phases complete) and no mbarrier.inval has ended: an init over a live barrier is undefined");
        sh_report(c, SH_B5, &m);
        return;
    }
    SH_ST(b->count, count);
    SH_ST(b->st, sh_pack(0, count, 0));
    SH_ST(b->flags, 0u);
    SH_ST(b->init_epoch, SH_LD(me->cl_arrives));
    SH_ST(b->init_thread, c->tid);
    SH_ST(b->init_seq, me->seq);
    SH_ST(b->guard, 0ull);
    SH_ST(b->observed, 0u);
    SH_ST(b->issued, 0u);
    SH_ST(c->cta->bar_span, sh_span_union(SH_LD(c->cta->bar_span), addr, addr + 8));
    // A barrier's phases start over: the accumulators of its slot hold nothing of the one before.
    ShAcc* a = &c->cta->acc[b - c->cta->bars];
    for (int s = 0; s < 2; ++s)
        for (uint32_t i = 0; i < SH_SYNCS; ++i) SH_ST(a->k[s][i], 0u);
    SH_FENCE();
}

// fence.mbarrier_init: every init this CTA made so far is released to the cluster.
SH_FN void sh_mbar_fence_init(const ShCtx* c) {
    for (uint32_t i = 0; i < SH_BARS; ++i)
        if (SH_LD(c->cta->bars[i].addr))
            SH_ST(c->cta->bars[i].flags, SH_LD(c->cta->bars[i].flags) | SH_BAR_FENCED);
    SH_FENCE();
}

// B1 for a use of this CTA's barrier `b` (NULL: none at `addr`) by the acting
// thread: initialized, not invalidated, and the init happened before.
SH_FN int sh_bar_ready(const ShCtx* c, const ShThread* me, const ShBar* b, uint32_t addr, const char* what) {
    ShMsg m;
    sh_init_msg(&m);
    sh_s(&m, what);
    sh_s(&m, " the mbarrier at shared ");
    sh_x(&m, addr);
    if (!b) {
        sh_s(&m, ", which no mbarrier.init has initialized");
    } else if (SH_LD(b->flags) & SH_BAR_INVAL) {
        sh_s(&m, ", which mbarrier.inval has ended: initialize it again first");
    } else if (!sh_after(c->cta, me, c->tid, SH_LD(b->init_thread), SH_LD(b->init_seq))) {
        sh_s(&m, ", whose init by thread ");
        sh_u(&m, SH_LD(b->init_thread));
        sh_s(&m,
             " no barrier since has ordered before this thread: the init, then fence.mbarrier_init, then "
             "__syncthreads() (or a cluster barrier), then every use");
    } else {
        return 1;
    }
    sh_report(c, SH_B1, &m);
    return 0;
}

// mbarrier.inval: the barrier's life ends (its memory may be reused, or initialized again).
SH_FN void sh_mbar_inval(const ShCtx* c, uint32_t addr) {
    ShThread* me = sh_me(c);
    ShBar* b = sh_bar_find(c->cta, addr);
    if (!b && SH_LD(c->cta->untracked_bars)) return;
    if (!sh_bar_ready(c, me, b, addr, "mbarrier.inval on")) return;
    if (!sh_at_or_after(SH_LD(b->observed), SH_LD(b->issued)) && !(SH_LD(b->flags) & SH_BAR_UNKNOWN)) {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, "mbarrier.inval on ");
        sh_bar_describe(&m, b);
        sh_s(&m, " while a copy toward its phase ");
        sh_u(&m, SH_LD(b->issued) - 1);
        sh_s(&m, " may be in flight (no wait saw it complete): the copy would complete on dead memory");
        sh_report(c, SH_B5, &m);
        return;
    }
    SH_ST(b->flags, SH_LD(b->flags) | SH_BAR_INVAL);
}

// B5: [lo, hi) of `cta` written (by a thread or a copy) while a live barrier lies there.
SH_FN int sh_check_bar_memory(const ShCtx* c, ShCta* cta, uint32_t lo, uint32_t hi, const char* writer) {
    if (!sh_span_overlaps(SH_LD(cta->bar_span), lo, hi)) return 1;
    for (int i = 0; i < SH_BARS; ++i) {
        const ShBar* b = &cta->bars[i];
        const uint32_t k = SH_LD(b->addr);
        if (!k || (SH_LD(b->flags) & SH_BAR_INVAL) || !sh_overlap(k - 1, k + 7, lo, hi)) continue;
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, writer);
        sh_s(&m, " shared ");
        sh_range(&m, lo, hi);
        sh_s(&m, ", over ");
        sh_bar_describe(&m, b);
        sh_s(&m, ", which is live: mbarrier.inval ends a barrier's life before its memory is reused");
        sh_report(c, SH_B5, &m);
        return 0;
    }
    return 1;
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
// when nothing is missing and nothing owed. *phase: the phase the update
// counted toward (the one open when it came).
SH_FN unsigned long long sh_bar_update(ShBar* b, uint32_t arrive, int32_t bytes, uint32_t* phase) {
    unsigned long long old = SH_LD(b->st), seen;
    for (;;) {
        uint32_t done = sh_done(old), missing = sh_missing(old);
        const uint32_t open = done;
        int32_t owed = sh_owed(old) + bytes;
        missing = missing >= arrive ? missing - arrive : 0u;
        if (missing == 0 && owed == 0) {
            ++done;
            missing = SH_LD(b->count);
        }
        const unsigned long long next = sh_pack(done, missing, owed);
        seen = SH_CAS64(&b->st, old, next);
        if (seen == old) {
            if (phase) *phase = open;
            return next;
        }
        old = seen;
    }
}

// ---- which async readers still read [lo, hi) --------------------------------------
// The groups of warpgroup `w` that read [lo, hi) and whose wait thread `me`
// (acting thread a) is not ordered after: 1 and the group, *waited 1 if some
// thread of the warpgroup did wait for it (but no chain orders that wait
// before a). Groups older than the ring are taken as done.
SH_FN int sh_unordered_wgmma(const ShCtx* c, const ShThread* me, const ShCta* cta, uint32_t w, uint32_t lo,
                             uint32_t hi, uint32_t* group, int* waited) {
    const ShWg* g = &cta->wgs[w];
    *waited = 0;
    if (!SH_LD(g->used)) return 0;
    const unsigned long long open[2] = {SH_LD(g->open[0]), SH_LD(g->open[1])};
    const uint32_t committed = SH_LD(g->committed), leader_waited = SH_LD(g->waited);
    for (int k = 0; k < 2; ++k)
        if (sh_span_overlaps(open[k], lo, hi)) {
            *group = committed + 1;
            return 1;
        }
    const uint32_t a = c->tid;
    for (uint32_t back = 0; back < SH_WG_RING && back < committed; ++back) {
        const uint32_t q = committed - back;
        if (!sh_span_overlaps(SH_LD(g->ring[q % SH_WG_RING][0]), lo, hi) &&
            !sh_span_overlaps(SH_LD(g->ring[q % SH_WG_RING][1]), lo, hi))
            continue;
        if (cta != c->cta) {  // another CTA's warpgroup (a multicast into it): its waits as they are
            if (sh_at_or_after(leader_waited, q)) continue;
            *group = q;
            return 1;
        }
        if (a / 128 == w && sh_at_or_after(me->wg_waited, q)) continue;  // its own wait covered it
        int found = 0;
        for (uint32_t i = 0; i < 128 && !found;
             ++i) {  // the leader first: it is the one that usually arrives
            const uint32_t u = w * 128 + i;
            const ShThread* wu = sh_peer(cta, u);
            if (!wu || !sh_at_or_after(SH_LD(wu->wg_waited), q)) continue;
            *waited = 1;
            const uint32_t e = sh_hist_first(&wu->wgw, q, 0xFFFFFFFFu);
            found = e == SH_LOST || (e != SH_NEVER && sh_after(cta, me, a, u, e));
        }
        if (found || (!sh_strict(cta) && sh_at_or_after(leader_waited, q))) continue;
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

// The first bulk read over [lo, hi) whose read-wait the acting thread is not
// ordered after: its word (*waited 1 if its thread did wait, but no chain
// orders that wait before the acting thread), or 0.
SH_FN unsigned long long sh_unordered_read(const ShCtx* c, const ShThread* me, const ShCta* cta, uint32_t lo,
                                           uint32_t hi, int* waited) {
    *waited = 0;
    if (!SH_LD(cta->reads_used) || !sh_span_overlaps(SH_LD(cta->reads_span), lo, hi)) return 0;
    for (int i = 0; i < SH_READS; ++i) {
        const unsigned long long w = SH_LD(cta->reads[i].w);
        const uint32_t seq = sh_read_seq(w), t = sh_read_thread(w);
        if (!seq || seq == 0x3FFFFFFu || !sh_overlap(sh_read_lo(w), sh_read_hi(w), lo, hi)) continue;
        if (!sh_read_done(SH_LD(cta->threads[t].bk_read), seq)) return w;  // not read-waited at all
        if (cta != c->cta || t == c->tid || !sh_strict(cta)) continue;     // the wait itself, as it is
        const ShThread* wt = sh_peer(cta, t);
        const uint32_t e = wt ? sh_hist_first(&wt->rd, seq, 0x3FFFFFFu) : SH_LOST;
        if (e == SH_LOST || e == SH_NEVER || sh_after(cta, me, c->tid, t, e)) continue;
        *waited = 1;
        return w;
    }
    return 0;
}

// S2: nothing may write [lo, hi) of `cta` until the waits of the async readers
// of it happened before the write.
SH_FN int sh_check_rewrite(const ShCtx* c, const ShCta* cta, uint32_t lo, uint32_t hi, const char* writer) {
    const ShThread* me = sh_me(c);
    int waited = 0;
    const unsigned long long r = sh_unordered_read(c, me, cta, lo, hi, &waited);
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
        sh_s(&m,
             waited ? ": that thread's cp.async.bulk.wait_group.read covered it, but no barrier since orders "
                      "that wait before this write"
                    : ": no cp.async.bulk.wait_group.read covers it yet");
        sh_report(c, SH_S2, &m);
        return 0;
    }
    if (SH_LD(cta->wgmma_used) && sh_span_overlaps(SH_LD(cta->mma_span), lo, hi))
        for (uint32_t w = 0; w < SH_WGS; ++w) {
            uint32_t group = 0;
            if (sh_unordered_wgmma(c, me, cta, w, lo, hi, &group, &waited)) {
                sh_s(&m, writer);
                sh_s(&m, " shared ");
                sh_range(&m, lo, hi);
                sh_s(&m, " while wgmma group ");
                sh_u(&m, group);
                sh_s(&m, " of warpgroup ");
                sh_u(&m, w);
                sh_s(&m,
                     waited
                         ? " reads it: that warpgroup's wgmma.wait_group covered the group, but no barrier "
                           "since orders that wait before this write (the stage is handed back after it)"
                         : " still reads it: no wgmma.wait_group covers that group yet");
                sh_report(c, SH_S2, &m);
                return 0;
            }
        }
    return 1;
}

// S1: every thread that wrote [lo, hi) of this CTA with ordinary stores ran
// fence.proxy.async since, and (with the full feed) that fence happened
// before the async operation.
SH_FN int sh_check_fenced(const ShCtx* c, const ShCta* cta, uint32_t lo, uint32_t hi, const char* async_op) {
    ShMsg m;
    sh_init_msg(&m);
    if (SH_LD(cta->dirty_count))
        for (uint32_t t = 0; t < cta->nthreads; ++t) {  // large writes (a whole buffer per thread)
            const unsigned long long dirty = SH_LD(cta->threads[t].dirty);
            if (!sh_span_overlaps(dirty, lo, hi) || !sh_peer(cta, t)) continue;
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
    if (!SH_LD(cta->stores_seen) || cta != c->cta) return 1;
    const ShThread* me = sh_me(c);
    for (uint32_t q = lo / 16; q < (hi + 15) / 16 && q < cta->nchunks; ++q) {  // each chunk's last writer
        const uint32_t w = SH_LD(cta->chunks[q]);
        if (sh_chunk_kind(w) != SH_CHUNK_STORE) continue;
        const uint32_t t = sh_chunk_store_thread(w);
        const ShThread* wt = sh_peer(cta, t);
        if (!wt) continue;
        const uint32_t f = sh_fence_after(wt, sh_full_seq(wt, sh_chunk_store_seq(w)));
        if (f == SH_LOST || (f != SH_NEVER && (!sh_strict(cta) || sh_after(cta, me, c->tid, t, f)))) continue;
        sh_s(&m, async_op);
        sh_s(&m, " shared ");
        sh_range(&m, lo, hi);
        sh_s(&m, ", which thread ");
        sh_u(&m, t);
        sh_s(&m, " wrote with ordinary stores (at ");
        sh_x(&m, q * 16);
        sh_s(&m, f == SH_NEVER ? ") and has not fenced since"
                               : ") and fenced after, but no barrier since orders that fence before this");
        sh_s(&m,
             ": fence.proxy.async.shared::cta, by every writing thread, before the barrier that hands the "
             "buffer over");
        sh_report(c, SH_S1, &m);
        return 0;
    }
    return 1;
}

// ---- the wgmma groups a thread has not waited for (P1) -----------------------------
// The groups of the acting thread's warpgroup that read [lo, hi) and that its
// own waits have not covered: 1 and the group.
SH_FN int sh_own_wgmma(const ShCtx* c, const ShThread* me, uint32_t lo, uint32_t hi, uint32_t* group) {
    const uint32_t w = c->tid / 128;
    if (w >= SH_WGS) return 0;
    const ShWg* g = &c->cta->wgs[w];
    if (!SH_LD(g->used)) return 0;
    const uint32_t leader = SH_LD(g->committed), mine = me->wg_committed;
    if (me->wg_open ||
        !sh_at_or_after(leader, mine))  // MMAs of this thread's the leader has not committed yet
        for (int k = 0; k < 2; ++k)
            if (sh_span_overlaps(SH_LD(g->open[k]), lo, hi)) {
                *group = leader + 1;
                return 1;
            }
    const uint32_t last = sh_at_or_after(leader, mine) ? mine : leader;
    for (uint32_t q = me->wg_waited + 1; sh_at_or_after(last, q) && q - me->wg_waited <= SH_WG_RING; ++q) {
        if (!sh_at_or_after(q + SH_WG_RING, leader + 1)) continue;  // its ring entry was reused
        for (int k = 0; k < 2; ++k)
            if (sh_span_overlaps(SH_LD(g->ring[q % SH_WG_RING][k]), lo, hi)) {
                *group = q;
                return 1;
            }
    }
    return 0;
}

// ---- arrivals, copies, waits -------------------------------------------------------
// mbarrier.arrive (remote when `to` is another CTA's state): `count` arrivals,
// `bytes` > 0 for arrive.expect_tx, released at `scope`. A plain arrive may
// hand a stage back (P1).
SH_FN void sh_arrive_n(const ShCtx* c, ShCta* to, uint32_t addr, uint32_t bytes, uint32_t count,
                       uint32_t scope) {
    ShThread* me = sh_me(c);
    ShBar* b = sh_bar_find(to, addr);
    if (!b && SH_LD(to->untracked_bars)) return;
    if (to != c->cta) {
        if (!sh_remote_ready(c, to, b, addr, "arrive on")) return;
        if (scope == SH_SCOPE_CTA && me->remote_dirty) {
            ShMsg m;
            sh_init_msg(&m);
            sh_s(&m, "an arrive at .release.cta scope on a peer CTA's barrier at shared ");
            sh_x(&m, addr);
            sh_s(&m,
                 ", after this thread wrote that peer's shared memory (st.shared::cluster): a .cta release "
                 "does "
                 "not order those stores for the peer's waiters; arrive with .release.cluster");
            sh_report(c, SH_X1, &m);
            return;
        }
        sh_note_remote(c, to);
    } else if (!sh_bar_ready(c, me, b, addr, bytes ? "arrive.expect_tx on" : "arrive on")) {
        return;
    }
    if (scope != SH_SCOPE_CTA) me->remote_dirty = 0;
    const unsigned long long guard = SH_LD(b->guard);
    if (bytes == 0 && guard) {  // P1: the stage this barrier hands back (this CTA's copy of it)
        const uint32_t lo = sh_lo(guard), hi = sh_hi(guard);
        uint32_t group = 0;
        ShMsg m;
        sh_init_msg(&m);
        if (sh_own_wgmma(c, me, lo, hi, &group)) {
            sh_s(&m, "a stage handed back (arrive on ");
            sh_bar_describe(&m, b);
            sh_s(&m, ", which guards shared ");
            sh_range(&m, lo, hi);
            sh_s(&m, ") while wgmma group ");
            sh_u(&m, group);
            sh_s(&m, " of this warpgroup still reads it: this thread's wgmma.wait_group must cover it first");
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
    uint32_t phase = 0;
    sh_check_overflow(c, b, sh_bar_update(b, count, (int32_t)bytes, &phase));
    if (to == c->cta) sh_release(c, me, (uint32_t)(b - c->cta->bars), phase);
}
SH_FN void sh_arrive(const ShCtx* c, ShCta* to, uint32_t addr, uint32_t bytes) {
    sh_arrive_n(c, to, addr, bytes, 1u, SH_SCOPE_CTA);
}

// A copy of `bytes` (0: unknown) issued toward barrier `addr` of CTA `to`:
// the barrier's slot and the phase the copy completes, or 0 if it was not
// counted (untracked, or a rule broke).
SH_FN int sh_credit_phase(const ShCtx* c, ShCta* to, uint32_t addr, uint32_t bytes, const char* what,
                          uint32_t* slot, uint32_t* phase) {
    const ShThread* me = sh_me(c);
    ShBar* b = sh_bar_find(to, addr);
    if (!b && SH_LD(to->untracked_bars)) return 0;
    if (to != c->cta) {
        if (!sh_remote_ready(c, to, b, addr, what)) return 0;
        sh_note_remote(c, to);
    } else {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, what);
        sh_s(&m, " completing on");
        if (!sh_bar_ready(c, me, b, addr, m.text)) return 0;
    }
    SH_ST(b->flags, SH_LD(b->flags) | SH_BAR_BYTES | (bytes ? 0u : (uint32_t)SH_BAR_UNKNOWN));
    if (SH_LD(b->flags) & SH_BAR_MINUS1) sh_late_parity(c, b);
    SH_ST(b->last_copy, bytes);
    uint32_t open = 0;
    const unsigned long long st = sh_bar_update(b, 0, -(int32_t)bytes, &open);
    SH_MAX32(&b->issued, open + 1);
    sh_check_overflow(c, b, st);
    *slot = (uint32_t)(b - to->bars);
    *phase = open;
    return 1;
}
SH_FN void sh_credit(const ShCtx* c, ShCta* to, uint32_t addr, uint32_t bytes, const char* what) {
    uint32_t slot, phase;
    sh_credit_phase(c, to, addr, bytes, what, &slot, &phase);
}

// A wait that returned true for `parity`.
SH_FN void sh_wait_done(const ShCtx* c, uint32_t addr, uint32_t parity) {
    ShThread* me = sh_me(c);
    ShBar* b = sh_bar_find(c->cta, addr);
    if (!b && SH_LD(c->cta->untracked_bars)) return;
    if (!sh_bar_ready(c, me, b, addr, "a wait on")) return;
    ShMsg m;
    sh_init_msg(&m);
    const unsigned long long st = SH_LD(b->st);
    const uint32_t done = sh_done(st), flags = SH_LD(b->flags);
    if (!(flags & SH_BAR_BYTES)) {  // a barrier of arrivals only: a producer may now refill what it guards
        SH_ST(me->learn_bar, (uint32_t)(b - c->cta->bars) + 1);
        SH_ST(me->learn_fresh, 1u);
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
    SH_MAX32(&b->observed, done);                                 // phase done - 1 seen complete
    sh_fold(c->cta, me, (uint32_t)(b - c->cta->bars), done - 1);  // and this thread ordered after it
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
    if (sh_missing(st)) {  // arrivals first: without them the phase cannot complete, whatever the bytes
        sh_s(&m, " still misses ");
        sh_u(&m, sh_missing(st));
        sh_s(&m, " of its ");
        sh_u(&m, SH_LD(b->count));
        sh_s(&m, " arrivals");
        if (sh_owed(st) < 0) {
            sh_s(&m, ", and copies already brought it ");
            sh_u(&m, (unsigned)-sh_owed(st));
            sh_s(&m, " bytes that no expect_tx announced");
        } else if (sh_owed(st) > 0) {
            sh_s(&m, " (and ");
            sh_u(&m, (unsigned)sh_owed(st));
            sh_s(&m, " bytes its copies have not brought)");
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

// ---- barriers of threads: bar.sync, __syncwarp, the cluster barrier ----------------
// bar.sync (wait 1) or bar.arrive (wait 0) on barrier `id` (0: __syncthreads()),
// reported before the instruction. `count` (the threads it waits for) is the
// instruction's; the phase is this thread's count of its passes at `id`.
SH_FN void sh_bar(const ShCtx* c, uint32_t id, uint32_t count, int wait) {
    (void)count;
    ShThread* me = sh_me(c);
    const uint32_t sync = SH_SYNC_NAMED(id % SH_NAMED), phase = me->named[id % SH_NAMED]++;
    sh_release(c, me, sync, phase);
    if (wait) {
        me->pend = sync + 1;
        me->pend_phase = phase;
    }
}
SH_FN void sh_syncthreads(const ShCtx* c) {
    sh_bar(c, 0, 0, 1);
}
// __syncwarp(mask), reported before the instruction.
SH_FN void sh_syncwarp(const ShCtx* c, uint32_t mask) {
    (void)mask;
    ShThread* me = sh_me(c);
    const uint32_t sync = SH_SYNC_WARP(c->tid / 32 % SH_WARPS), phase = me->warp_syncs++;
    sh_release(c, me, sync, phase);
    me->pend = sync + 1;
    me->pend_phase = phase;
}

SH_FN void sh_cluster_arrive(const ShCtx* c) {
    ShThread* me = sh_me(c);
    sh_release(c, me, SH_SYNC_CLUSTER, me->cl_arrives);
    me->remote_dirty = 0;  // barrier.cluster.arrive releases at cluster scope
    SH_ST(me->cl_arrives, me->cl_arrives + 1);
    if (c->tid == 0) SH_ST(c->cta->cluster_arrives, SH_LD(me->cl_arrives));
    SH_FENCE();
}
SH_FN void sh_cluster_wait(const ShCtx* c) {
    ShThread* me = sh_me(c);
    me->pend = SH_SYNC_CLUSTER + 1;
    me->pend_phase = me->cl_waits;
    SH_ST(me->cl_waits, me->cl_waits + 1);
    if (c->tid == 0) SH_ST(c->cta->cluster_waits, SH_LD(me->cl_waits));  // the CTA's, for its end
}

// A fence (fence.acq_rel, fence.sc) at `scope`: at cluster scope or wider it releases remote stores.
SH_FN void sh_fence_scope(const ShCtx* c, uint32_t scope) {
    ShThread* me = sh_me(c);
    if (scope != SH_SCOPE_CTA) me->remote_dirty = 0;
}

// ---- shared memory written and read by the threads, and the proxy fence -------------
SH_FN void sh_fence_proxy_async(const ShCtx* c) {
    ShThread* me = sh_me(c);
    sh_hist_push(&me->fences, 0u, sh_mark(me));
    if (SH_LD(me->dirty)) {
        SH_ST(me->dirty, 0ull);
        SH_ADD32(&c->cta->dirty_count, 0xFFFFFFFFu);
    }
}

SH_FN void sh_wrote(const ShCtx* c, uint32_t lo, uint32_t bytes) {
    ShThread* me = sh_me(c);
    const uint32_t hi = lo + bytes;
    if (!sh_check_bar_memory(c, c->cta, lo, hi, "threads' ordinary stores write")) return;
    if (!sh_check_rewrite(c, c->cta, lo, hi, "threads' ordinary stores write")) return;
    if (bytes > SH_EXACT_BYTES) {  // a whole buffer: its span, until the thread's fence
        const unsigned long long dirty = SH_LD(me->dirty);
        if (!dirty) SH_ADD32(&c->cta->dirty_count, 1u);
        SH_ST(me->dirty, sh_span_union(dirty, lo, hi));
        return;
    }
    for (uint32_t q = lo / 16; q < (hi + 15) / 16 && q < c->cta->nchunks; ++q) {
        const uint32_t old = SH_LD(c->cta->chunks[q]);
        uint32_t words = sh_words_of(q, lo, hi);
        if (sh_chunk_kind(old) == SH_CHUNK_STORE && sh_chunk_store_thread(old) == c->tid &&
            sh_chunk_store_seq(old) == (me->seq & 0xFFFFu))
            words |= sh_chunk_words(old);  // the same thread, no mark between: one write
        SH_ST(c->cta->chunks[q], sh_chunk_store(words, c->tid, me->seq));
    }
    if (!SH_LD(c->cta->stores_seen)) SH_ST(c->cta->stores_seen, 1u);
}

// A store into a peer CTA's shared memory (st.shared::cluster): what X1 asks the next arrive to release.
SH_FN void sh_remote_wrote(const ShCtx* c, ShCta* to, uint32_t lo, uint32_t bytes) {
    ShThread* me = sh_me(c);
    (void)lo, (void)bytes;
    if (to != c->cta) me->remote_dirty = 1;
}

SH_FN void sh_read(const ShCtx* c, uint32_t lo, uint32_t bytes) {
    const ShThread* me = sh_me(c);
    const uint32_t hi = lo + bytes;
    for (uint32_t q = lo / 16; q < (hi + 15) / 16 && q < c->cta->nchunks; ++q) {
        const uint32_t w = SH_LD(c->cta->chunks[q]), kind = sh_chunk_kind(w);
        ShMsg m;
        sh_init_msg(&m);
        if (kind == SH_CHUNK_STORE) {
            const uint32_t t = sh_chunk_store_thread(w);
            const ShThread* wt = sh_peer(c->cta, t);
            if (t == c->tid || !wt || !(sh_chunk_words(w) & sh_words_of(q, lo, hi))) continue;
            if (sh_after(c->cta, me, c->tid, t, sh_full_seq(wt, sh_chunk_store_seq(w)))) continue;
            sh_s(&m, "read of shared ");
            sh_x(&m, q * 16);
            sh_s(&m, ", which thread ");
            sh_u(&m, t);
            sh_s(&m,
                 " stored with no barrier since that orders the store before this read (__syncthreads(), "
                 "bar.sync, __syncwarp, an mbarrier phase): the read may come first");
            sh_report(c, SH_A3, &m);
            return;
        }
        if (kind == SH_CHUNK_LOAD) {
            const uint32_t slot = sh_chunk_load_slot(w), phase = sh_chunk_load_phase(w);
            if (sh_knows(me, slot, phase)) continue;
            sh_s(&m, "read of shared ");
            sh_x(&m, q * 16);
            sh_s(&m, ", which a TMA or bulk load writes completing phase ");
            sh_u(&m, phase);
            sh_s(&m, " of ");
            sh_bar_describe(&m, &c->cta->bars[slot % SH_BARS]);
            sh_s(&m,
                 ": no wait this thread is ordered after saw that phase complete, so the data may not have "
                 "landed");
            sh_report(c, SH_A4, &m);
            return;
        }
        if (kind != SH_CHUNK_CP) continue;
        const uint32_t t = sh_chunk_cp_thread(w), v = sh_chunk_cp_group(w);
        const ShThread* wr = sh_peer(c->cta, t);
        if (!wr) continue;
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
        if (covered) {
            const uint32_t e = sh_hist_first(&wr->cov, v, 0xFFFFFu);
            if (e == SH_LOST || e == SH_NEVER || sh_after(c->cta, me, c->tid, t, e)) continue;
        } else {
            const uint32_t n = SH_LD(wr->cov.n);
            const uint32_t last_wait = n ? SH_LD(wr->cov.s[(n - 1) % SH_HIST]) : 0u;
            if (n && sh_after(c->cta, me, c->tid, t, last_wait) == 1) {
                // it waited, a barrier came, but its wait left the group pending
                sh_s(&m, "read of shared ");
                sh_x(&m, q * 16);
                sh_s(&m, ", which a cp.async of thread ");
                sh_u(&m, t);
                sh_s(&m, " in its group ");
                sh_u(&m, v);
                sh_s(
                    &m,
                    " writes: that thread's cp.async.wait_group, before the barrier, covered only its groups "
                    "up to ");
                sh_u(&m, waited);
                sh_s(&m, " (wait_group N leaves the newest N pending)");
                sh_report(c, SH_A1, &m);
                return;
            }
        }
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

// ---- cp.async ------------------------------------------------------------------------
SH_FN void sh_cp_async(const ShCtx* c, uint32_t dst, uint32_t bytes) {
    const ShThread* me = sh_me(c);
    if (!sh_check_bar_memory(c, c->cta, dst, dst + bytes, "a cp.async writes")) return;
    if (SH_LD(c->cta->reads_used) || SH_LD(c->cta->wgmma_used))
        if (!sh_check_rewrite(c, c->cta, dst, dst + bytes, "a cp.async writes")) return;
    const uint32_t group = SH_LD(me->cp_committed) + 1;
    for (uint32_t q = dst / 16; q < (dst + bytes + 15) / 16 && q < c->cta->nchunks; ++q)
        SH_ST(c->cta->chunks[q], sh_chunk_cp(c->tid, group));
}
SH_FN void sh_cp_commit(const ShCtx* c) {
    ShThread* me = sh_me(c);
    SH_ST(me->cp_committed, me->cp_committed + 1);
}
SH_FN void sh_cp_wait(const ShCtx* c, uint32_t n) {
    ShThread* me = sh_me(c);
    const uint32_t committed = me->cp_committed;
    const uint32_t covered = committed >= n ? committed - n : 0u;
    if (covered > me->cp_waited || me->cov.n == 0) {
        sh_hist_push(&me->cov, covered, sh_mark(me));
        if (covered > me->cp_waited) SH_ST(me->cp_waited, covered);
    }
}

// ---- bulk groups (TMA stores, reduces, bulk copies from shared memory) -------------
SH_FN void sh_bulk_read(const ShCtx* c, uint32_t lo, uint32_t bytes, const char* what) {
    const uint32_t hi = lo + bytes;
    if (!sh_check_fenced(c, c->cta, lo, hi, what)) return;
    ShThread* me = sh_me(c);
    const unsigned long long w = sh_read_pack(lo, hi, c->tid, SH_LD(me->bk_committed) + 1);
    SH_ST(c->cta->reads_span, sh_span_union(SH_LD(c->cta->reads_span), lo, hi));
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
    ShThread* me = sh_me(c);
    SH_ST(me->bk_committed, me->bk_committed + 1);
}
SH_FN void sh_bulk_wait(const ShCtx* c, uint32_t n) {
    ShThread* me = sh_me(c);
    const uint32_t committed = me->bk_committed;
    const uint32_t covered = committed >= n ? committed - n : 0u;
    if (sh_at_or_after(covered, me->bk_read + 1)) {
        sh_hist_push(&me->rd, covered, sh_mark(me));
        SH_ST(me->bk_read, covered);
    }
    SH_FENCE();
}

// ---- TMA loads: into this CTA, or (multicast) into several ------------------------
SH_FN void sh_region_note(ShCta* cta, uint32_t lo, uint32_t hi, uint32_t swizzle, uint32_t bar,
                          uint32_t phase) {
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
    SH_ST(r->seq, 0u);
    SH_ST(r->swizzle, swizzle);
    SH_ST(r->bar, bar);
    SH_ST(r->phase, phase);
    SH_ST(r->span, sh_span(lo, hi));
    SH_FENCE();
    SH_ST(r->seq, seq);
}

// A copy into [dst, dst + bytes) of `to` (this CTA, or a peer receiving a
// multicast), completing on the barrier at `bar` of the same CTA.
SH_FN void sh_load_into(const ShCtx* c, ShCta* to, uint32_t dst, uint32_t bytes, uint32_t region_bytes,
                        uint32_t bar, uint32_t swizzle, const char* what) {
    ShThread* me = sh_me(c);
    const uint32_t hi = dst + (region_bytes ? region_bytes : 16u);
    if (!sh_check_bar_memory(c, to, dst, hi, what)) return;
    if (!sh_check_rewrite(c, to, dst, hi, what)) return;
    if (to == c->cta && !sh_check_fenced(c, to, dst, hi, what)) return;
    uint32_t slot = 0, phase = 0;
    const int counted = sh_credit_phase(c, to, bar, bytes, what, &slot, &phase);
    if (region_bytes) sh_region_note(to, dst, hi, swizzle, counted ? slot + 1 : 0u, phase);
    if (counted && region_bytes)  // its bytes: readable once a wait saw this phase
        for (uint32_t q = dst / 16; q < (hi + 15) / 16 && q < to->nchunks; ++q)
            SH_ST(to->chunks[q], sh_chunk_load(slot, phase));
    if (to != c->cta) return;
    const uint32_t lb = SH_LD(me->learn_bar);
    if (!lb || lb > SH_BARS) return;
    ShBar* guard = &c->cta->bars[lb - 1];
    if (guard == sh_bar_find(c->cta, bar)) return;
    if (SH_LD(me->learn_fresh)) {  // the first load after the wait: the stage starts here
        SH_ST(guard->guard, sh_span(dst, hi));
        SH_ST(me->learn_fresh, 0u);
    } else {
        SH_ST(guard->guard, sh_span_union(SH_LD(guard->guard), dst, hi));
    }
}

// ---- wgmma ------------------------------------------------------------------------
// Every thread of the warpgroup reports its own fence, MMAs, commits and waits;
// the leader (thread 0 of the warpgroup) also keeps the shared memory each group reads.
SH_FN void sh_wg_fence(const ShCtx* c) {
    ShThread* me = sh_me(c);
    me->wg_fenced = 1;
}

// The swizzle a descriptor's layout field names, as CUtensorMapSwizzle numbers it.
SH_INL uint32_t sh_desc_swizzle(unsigned long long desc) {
    const uint32_t layout = (uint32_t)(desc >> 62);
    return layout == 1 ? 3u : layout == 2 ? 2u : layout == 3 ? 1u : 0u;
}

SH_FN void sh_mma(const ShCtx* c, unsigned long long desc_a, unsigned long long desc_b, uint32_t a_rows,
                  uint32_t b_rows) {
    ShThread* me = sh_me(c);
    const int leader = c->tid % 128 == 0;
    ShWg* g = &c->cta->wgs[c->tid / 128 % SH_WGS];
    ShMsg m;
    sh_init_msg(&m);
    if (!me->wg_fenced) {
        sh_s(&m,
             "wgmma.mma_async with no wgmma.fence since this warpgroup's accumulators were last the "
             "threads' (");
        sh_s(&m, me->wg_committed ? "after wgmma.wait_group" : "the kernel's start");
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
            const uint32_t bar = SH_LD(r->bar), phase = SH_LD(r->phase);
            if (bar && !sh_knows(me, bar - 1, phase)) {
                sh_s(&m, k ? "B" : "A");
                sh_s(&m, "'s tile (shared ");
                sh_x(&m, start);
                sh_s(&m, ") is read by wgmma.mma_async, but the TMA load that writes it completes phase ");
                sh_u(&m, phase);
                sh_s(&m, " of ");
                sh_bar_describe(&m, &c->cta->bars[(bar - 1) % SH_BARS]);
                sh_s(&m, ", and no wait this thread is ordered after saw that phase complete");
                sh_report(c, SH_A4, &m);
                return;
            }
            if (leader && SH_LD(r->swizzle) != sh_desc_swizzle(desc[k])) {
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
        if (leader) {
            SH_ST(g->open[k], sh_span_union(SH_LD(g->open[k]), lo, hi));
            SH_ST(c->cta->mma_span, sh_span_union(SH_LD(c->cta->mma_span), lo, hi));
        }
    }
    me->wg_open = 1;
    if (leader) {
        SH_ST(g->used, 1u);
        SH_ST(c->cta->wgmma_used, 1u);
    }
}

SH_FN void sh_wg_commit(const ShCtx* c) {
    ShThread* me = sh_me(c);
    me->wg_committed++;
    me->wg_open = 0;
    if (c->tid % 128) return;
    ShWg* g = &c->cta->wgs[c->tid / 128 % SH_WGS];
    const uint32_t q = SH_LD(g->committed) + 1;
    for (int k = 0; k < 2; ++k) SH_ST(g->ring[q % SH_WG_RING][k], SH_LD(g->open[k]));
    SH_ST(g->committed, q);  // before the open group is cleared: it is never seen in neither place
    for (int k = 0; k < 2; ++k) SH_ST(g->open[k], 0ull);
}

SH_FN void sh_wg_wait(const ShCtx* c, uint32_t n) {
    ShThread* me = sh_me(c);
    const uint32_t covered = me->wg_committed >= n ? me->wg_committed - n : 0u;
    if (sh_at_or_after(covered, me->wg_waited + 1)) {
        sh_hist_push(&me->wgw, covered, sh_mark(me));
        SH_ST(me->wg_waited, covered);
    }
    me->wg_fenced = 0;  // the accumulators are the threads' again
    if (c->tid % 128 == 0) {
        ShWg* g = &c->cta->wgs[c->tid / 128 % SH_WGS];
        const uint32_t committed = SH_LD(g->committed);
        const uint32_t lcovered = committed >= n ? committed - n : 0u;
        if (sh_at_or_after(lcovered, SH_LD(g->waited) + 1)) SH_ST(g->waited, lcovered);
    }
    SH_FENCE();
}

// The threads are about to read the accumulators (wgmma_fence_operands).
SH_FN void sh_wg_operands(const ShCtx* c) {
    const ShThread* me = sh_me(c);
    if (sh_at_or_after(me->wg_waited, me->wg_committed) && !me->wg_open) return;
    ShMsg m;
    sh_init_msg(&m);
    sh_s(&m, "the accumulators handed to the threads while ");
    sh_u(&m, me->wg_committed - me->wg_waited);
    sh_s(&m, " wgmma group(s) of this warpgroup are still pending");
    if (me->wg_open) sh_s(&m, " (and MMAs not yet committed)");
    sh_s(&m, ": wgmma.wait_group 0 first");
    sh_report(c, SH_W2, &m);
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
    uint32_t release_seq;  // the editing thread's mark at its release (cp_fenceproxy, or the release fence)
    uint32_t rel_scope;    // that release's scope
    ShProps props;
    ShUse uses[SH_USES];
} ShGlobalMap;

// M1: a map rewritten before what still reads it is done, for the rewriting thread.
SH_FN int sh_map_check_rewrite(const ShCtx* c, ShGlobalMap* gm) {
    const ShThread* me = sh_me(c);
    for (int i = 0; i < SH_USES; ++i) {
        ShUse* u = &gm->uses[i];
        const uint32_t kind = SH_LD(u->kind);
        if (!kind || !sh_use_live(u)) continue;  // gone: its CTA has ended
        const int here = u->cta == c->cta;
        int pending = 0, unordered = 0;
        if (kind == 1) {
            const ShThread* wt = &u->cta->threads[u->thread];
            pending = !sh_read_done(SH_LD(wt->bk_read), u->seq);
            if (!pending && here && u->thread != c->tid && sh_strict(c->cta)) {
                const uint32_t e = sh_hist_first(&wt->rd, u->seq, 0x3FFFFFFu);
                unordered = e != SH_LOST && e != SH_NEVER && !sh_after(c->cta, me, c->tid, u->thread, e);
            }
        } else if (here) {  // a load of this CTA: a wait this thread is ordered after saw its phase
            pending = !sh_knows(me, u->bar, u->seq);
        } else {
            pending = !sh_at_or_after(SH_LD(u->cta->bars[u->bar].observed), u->seq + 1);
        }
        if (!pending && !unordered) continue;
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
            sh_s(&m, unordered ? ") may still read it: its read wait is not ordered before this rewrite"
                               : ") may still read it: cp.async.bulk.wait_group.read first");
        } else {
            const ShBar* b = &u->cta->bars[u->bar % SH_BARS];
            sh_s(&m, "a TMA load through it may be in flight (");
            sh_s(&m, here ? "no wait this thread is ordered after saw its barrier's phase "
                          : "its barrier's phase ");
            sh_u(&m, u->seq);
            sh_s(&m, here ? " complete: " : " not yet waited for: ");
            sh_u(&m, sh_done(SH_LD(b->st)));
            sh_s(&m, " phases complete, waits have seen ");
            sh_u(&m, SH_LD(b->observed));
            sh_s(&m, (SH_LD(b->flags) & SH_BAR_UNKNOWN) ? "; a copy of unknown size counted toward it" : "");
            sh_s(&m, here ? ")" : "; a load of another CTA)");
        }
        sh_report(c, SH_M1, &m);
        return 0;
    }
    return 1;
}

// A use by the TMA of a map in global memory (gm: what the device wrote
// there, or NULL for a map the host wrote): M2, M3, X1.
SH_FN int sh_map_check_use(const ShCtx* c, const ShGlobalMap* any, unsigned long long addr) {
    const ShThread* me = sh_me(c);
    const ShGlobalMap* gm = any && SH_LD(any->device_written) ? any : 0;
    int acquired = 0, sys = 0, wide = 0;
    for (int i = 0; i < SH_ACQS; ++i) {
        const ShAcq* a = &c->cta->acqs[i];
        if (SH_LD(a->addr) == addr && SH_LD(a->thread) == c->tid &&
            (!gm || SH_LD(a->version) == SH_LD(gm->version))) {
            const uint32_t scope = SH_LD(a->scope);
            acquired = 1, sys |= scope == SH_SCOPE_SYS, wide |= scope != SH_SCOPE_CTA;
        }
    }
    const int other_cta = gm && SH_LD(gm->editor_owner) != SH_LD(c->cta->owner);
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
    if (gm && !other_cta && SH_LD(gm->editor_thread) != c->tid && sh_strict(c->cta) &&
        !sh_after(c->cta, me, c->tid, SH_LD(gm->editor_thread), SH_LD(gm->release_seq))) {
        sh_s(&m, "the TMA uses the tensor map at global ");
        sh_x(&m, addr);
        sh_s(&m, ", which thread ");
        sh_u(&m, SH_LD(gm->editor_thread));
        sh_s(&m, " edited and released, but no barrier since orders that release before this thread's use");
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
    if (other_cta && (SH_LD(gm->rel_scope) == SH_SCOPE_CTA || !wide)) {
        sh_s(&m, "the TMA uses the tensor map at global ");
        sh_x(&m, addr);
        sh_s(&m, ", which another CTA edited, ");
        sh_s(&m,
             SH_LD(gm->rel_scope) == SH_SCOPE_CTA ? "released at .cta scope" : "acquired here at .cta scope");
        sh_s(&m, ": a .cta release or acquire orders nothing for another CTA (use .gpu)");
        sh_report(c, SH_X1, &m);
        return 0;
    }
    return 1;
}

SH_FN void sh_map_acquire(const ShCtx* c, unsigned long long addr, const ShGlobalMap* gm, uint32_t scope) {
    sh_me(c);
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
    SH_ST(victim->scope, scope);
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

// tensormap.cp_fenceproxy into a global slot: a new version, released at `scope`.
SH_FN int sh_map_publish_scoped(const ShCtx* c, ShGlobalMap* g, const ShProps* p, uint32_t scope) {
    ShThread* me = sh_me(c);
    if (!sh_map_check_rewrite(c, g)) return 0;
    g->props = *p;
    SH_ST(g->version, SH_LD(g->version) + 1);
    g->editor_owner = SH_LD(c->cta->owner);
    g->editor_thread = c->tid;
    SH_ST(g->release_seq, sh_mark(me));
    SH_ST(g->rel_scope, scope);
    SH_ST(g->device_written, 1u);
    SH_FENCE();
    SH_ST(g->released, 1u);  // cp_fenceproxy releases what it copies
    return 1;
}
SH_FN int sh_map_publish(const ShCtx* c, ShGlobalMap* g, const ShProps* p) {
    return sh_map_publish_scoped(c, g, p, SH_SCOPE_GPU);
}

// tensormap.replace .global on a slot: the first edit after a release (or by
// another thread) starts a new version, unreleased until this thread's
// fence.proxy.tensormap::generic.release.
SH_FN int sh_map_edit_global(const ShCtx* c, ShGlobalMap* g, const ShProps* p) {
    sh_me(c);
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

// fence.proxy.tensormap::generic.release at `scope` by this thread: its edits are released.
SH_FN void sh_map_release_scoped(const ShCtx* c, ShGlobalMap* g, uint32_t scope) {
    ShThread* me = sh_me(c);
    if (SH_LD(g->addr) && !SH_LD(g->released) && g->editor_owner == SH_LD(c->cta->owner) &&
        g->editor_thread == c->tid) {
        SH_ST(g->release_seq, sh_mark(me));
        SH_ST(g->rel_scope, scope);
        SH_ST(g->released, 1u);
    }
}
SH_FN void sh_map_release(const ShCtx* c, ShGlobalMap* g) {
    sh_map_release_scoped(c, g, SH_SCOPE_GPU);
}

// ---- the CTA's slot, claimed ------------------------------------------------------
// Everything but the owner, the generation (the caller's), the threads' own
// states (each clears its own: sh_me) and the chunks past `nchunks`.
SH_FN void sh_cta_reset(ShCta* s, uint32_t nthreads, uint32_t nchunks, uint32_t cluster_size,
                        const uint32_t* blk, uint32_t feed) {
    uint32_t* w = (uint32_t*)&s->nthreads;
    const uint32_t words = (uint32_t)(((char*)s->threads - (char*)&s->nthreads) / 4);
    for (uint32_t i = 0; i < words; ++i) w[i] = 0u;
    for (uint32_t q = 0; q < nchunks && q < SH_CHUNKS; ++q) s->chunks[q] = 0u;
    s->nthreads = nthreads;
    s->nchunks = nchunks < SH_CHUNKS ? nchunks : (uint32_t)SH_CHUNKS;
    s->cluster_size = cluster_size;
    s->feed = feed;
    for (int i = 0; i < 3; ++i) s->blk[i] = blk ? blk[i] : 0u;
}
