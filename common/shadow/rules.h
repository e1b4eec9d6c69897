// rules.h: every rule the shadow build checks, one line each (an X-macro:
// id, short name, the rule as the PTX ISA states it or implies it).
// The wrapper headers' protocol lists name these ids; tests/test_shadow.py
// keeps the lists, this table and the planted mistakes in step, and
// tests/unit_shadow.cu breaks each rule on the CPU.
//
// "Happened" means happened before, for the acting thread (common/shadow/core.h,
// "Happens-before"): its own earlier operation, or one ordered before it by a
// chain of barriers: __syncthreads() and bar.sync/bar.arrive (named barriers),
// __syncwarp, an mbarrier phase (the waiter is ordered after every arrival of
// the phase it waited for, and after everything those arrivers were ordered
// after), a cluster barrier. Never "has anyone done it by now". Decided so:
// B1 (within the CTA), A2, A3, A4, S1, S2, P1, M1, M2 (within the CTA), W2.
// Decided per thread in its own program order: A1, M3, W1, X1. Decided on the
// barrier's own state (no thread's knowledge enters): B2, B3, B4, B5, W3; at
// the CTA's end, when every thread is done: S3, C1.
// Across CTAs (a map another CTA edits or uses, a peer's barrier) the order
// comes from flags in global memory (st.release / ld.acquire) or a grid
// boundary, which no hook interprets: B1 for a peer, M1 and M2 for another
// CTA's copies, S2 for a peer's multicast, and C1 are decided by the state as
// it is when the operation comes (cluster barriers are counted), not by
// happens-before.
//
// What stays impossible at run time, and why:
// - a release or acquire on a flag in global memory (st.release/ld.acquire,
//   atom with a memory order, fence.acq_rel.gpu before a flag): the hooks see
//   the access, not what the other side of the protocol expects of it;
//   make test's fence pins count them;
// - a scope too narrow where nothing observable depends on it: a try_wait at
//   .acquire.cta on a barrier only local threads arrive on, a cluster
//   barrier's .relaxed arrive when nothing was written for a peer;
// - the data: a wrong index, coordinate or swizzle computed by hand breaks no
//   protocol (the programs' own checks see it);
// - a race between a thread's read and a later TMA or bulk write of the same
//   bytes (write after read), and two threads' writes of one word: only a
//   read after a write, and the async proxy's reads (S1, S2), are judged.
#pragma once

#define SHADOW_RULES(X)                                                                                     \
    X(B1, "barrier-init",                                                                                   \
      "an mbarrier is used (arrive, expect_tx, wait, a copy completing on it) only after its init "         \
      "happened before the using thread, and from another CTA of the cluster only after "                   \
      "fence.mbarrier_init and a cluster barrier both passed")                                              \
    X(B2, "parity",                                                                                         \
      "a wait names the phase it needs: parity 1 on a barrier that completed no phase returns at once, "    \
      "for the phase before the first, which carried no bytes")                                             \
    X(B3, "tx-bytes",                                                                                       \
      "a phase's copies deliver exactly the bytes its expect_tx announced, no more (seen when the last "    \
      "arrival or copy is issued) and no fewer (seen when a wait gives up)")                                \
    X(B4, "arrivals",                                                                                       \
      "a phase completes only when all its arrivals come: a wait that gives up on a phase missing "         \
      "arrivals waits for something nobody will do")                                                        \
    X(B5, "barrier-inval",                                                                                  \
      "an mbarrier is initialized once: its memory is written, or initialized again, only after "           \
      "mbarrier.inval ended its life, and it is not invalidated while a copy toward it is in flight")       \
    X(A1, "cp-async-read",                                                                                  \
      "shared memory a cp.async writes is read only after the issuing thread's cp.async.wait_group "        \
      "covers its group")                                                                                   \
    X(A2, "cp-async-barrier",                                                                               \
      "another thread's cp.async data is read only after that thread's wait happened before the read")      \
    X(A3, "shared-race",                                                                                    \
      "shared memory another thread stored is read only after the store happened before the read")          \
    X(A4, "load-read",                                                                                      \
      "shared memory a TMA or bulk load writes is read (by a thread, or a wgmma) only after a wait "        \
      "that saw the phase its copy completes on happened before the read")                                  \
    X(S1, "proxy-fence",                                                                                    \
      "shared memory that threads wrote with ordinary stores reaches the async proxy (a TMA or bulk "       \
      "store, reduce or copy reading it, a TMA or bulk load overwriting it) only after each writing "       \
      "thread's fence.proxy.async, which happened before the async operation")                              \
    X(S2, "rewrite-in-flight",                                                                              \
      "shared memory is not rewritten (by a TMA load, a cp.async or the threads) before the wait of a "     \
      "bulk store or reduce reading it (wait_group.read), or of a wgmma group reading it, happened before " \
      "the write")                                                                                          \
    X(S3, "exit-in-flight",                                                                                 \
      "a CTA does not end while its bulk stores may still read its shared memory (no wait_group.read "      \
      "after them) or a TMA load into it is in flight")                                                     \
    X(P1, "stage-handback",                                                                                 \
      "a stage is handed back (an arrive on the barrier its producer waits on before refilling it) only "   \
      "after the arriving thread's waits covered its warpgroup's wgmma groups and its own bulk stores "     \
      "reading it")                                                                                         \
    X(M1, "map-in-use",                                                                                     \
      "a tensor map in global memory is rewritten only after every bulk store through it was "              \
      ".read-waited and every load through it completed, both happened before the rewrite")                 \
    X(M2, "map-release",                                                                                    \
      "a tensor map edited in place in global memory reaches the TMA only after "                           \
      "fence.proxy.tensormap::generic.release by the editing thread")                                       \
    X(M3, "map-acquire",                                                                                    \
      "a tensor map in global memory (edited on the device, or written by the host) is used by the TMA "    \
      "only after the issuing thread's fence.proxy.tensormap::generic.acquire since its last edit (.sys "   \
      "for a map the host wrote)")                                                                          \
    X(W1, "wgmma-fence",                                                                                    \
      "a wgmma.mma_async comes after a wgmma.fence issued since the warpgroup's accumulators were last "    \
      "handed to the threads (the kernel's start, a wgmma.wait_group)")                                     \
    X(W2, "accumulators",                                                                                   \
      "the accumulators are read only after wgmma.wait_group says every group writing them is complete")    \
    X(W3, "descriptor-layout", "a wgmma descriptor names the swizzle the TMA wrote its tile with")          \
    X(C1, "cluster-exit",                                                                                   \
      "a CTA of a cluster does not end while a peer may still arrive on or copy into its shared memory: "   \
      "a cluster barrier both pass follows the peer's last remote operation")                               \
    X(X1, "scope",                                                                                          \
      "a release or acquire reaches the threads that rely on it: a tensor map released or acquired at "     \
      ".cta scope serves only its own CTA, and an arrive that hands a peer data written into its shared "   \
      "memory releases at .cluster scope")

enum ShadowRule {
    SH_NONE = 0,
#define SHADOW_RULE_ENUM(id, name, text) SH_##id,
    SHADOW_RULES(SHADOW_RULE_ENUM)
#undef SHADOW_RULE_ENUM
        SH_NUM_RULES
};
