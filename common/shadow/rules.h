// rules.h: every rule the shadow build checks, one line each (an X-macro:
// id, short name, the rule as the PTX ISA states it or implies it).
// The wrapper headers' protocol lists name these ids; tests/test_shadow.py
// keeps the lists, this table and the planted mistakes in step.
#pragma once

#define SHADOW_RULES(X)                                                                                     \
    X(B1, "barrier-init",                                                                                   \
      "an mbarrier is used (arrive, expect_tx, wait, a copy completing on it) only after its init, and "    \
      "from another CTA of the cluster only after fence.mbarrier_init and a cluster barrier both passed")   \
    X(B2, "parity",                                                                                         \
      "a wait names the phase it needs: parity 1 on a barrier that completed no phase returns at once, "    \
      "for the phase before the first, which carried no bytes")                                             \
    X(B3, "tx-bytes",                                                                                       \
      "a phase's copies deliver exactly the bytes its expect_tx announced, no more (seen when the last "    \
      "arrival or copy is issued) and no fewer (seen when a wait gives up)")                                \
    X(B4, "arrivals",                                                                                       \
      "a phase completes only when all its arrivals come: a wait that gives up on a phase missing "         \
      "arrivals waits for something nobody will do")                                                        \
    X(A1, "cp-async-read",                                                                                  \
      "shared memory a cp.async writes is read only after the issuing thread's cp.async.wait_group "        \
      "covers its group")                                                                                   \
    X(A2, "cp-async-barrier",                                                                               \
      "another thread's cp.async data is read only after a barrier that follows that thread's wait")        \
    X(A3, "shared-race",                                                                                    \
      "shared memory another thread stored is read only after a barrier that follows the store")            \
    X(S1, "proxy-fence",                                                                                    \
      "shared memory that threads wrote with ordinary stores reaches the async proxy (a TMA or bulk "       \
      "store, reduce or copy reading it, a TMA or bulk load overwriting it) only after each writing "       \
      "thread's fence.proxy.async")                                                                         \
    X(S2, "rewrite-in-flight",                                                                              \
      "shared memory is not rewritten (by a TMA load, a cp.async or the threads) while a bulk store or "    \
      "reduce not yet waited with .read, or a wgmma group not yet waited, still reads it")                  \
    X(S3, "exit-in-flight",                                                                                 \
      "a CTA does not end while its bulk stores may still read its shared memory (no wait_group.read "      \
      "after them) or a TMA load into it is in flight")                                                     \
    X(P1, "stage-handback",                                                                                 \
      "a stage is handed back (an arrive on the barrier its producer waits on before refilling it) only "   \
      "after the arriving warpgroup's wgmma groups and the thread's bulk stores reading it are waited for") \
    X(M1, "map-in-use",                                                                                     \
      "a tensor map in global memory is not rewritten while a bulk store through it is not .read-waited "   \
      "or a load through it is in flight")                                                                  \
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
      "a cluster barrier both pass follows the peer's last remote operation")

enum ShadowRule {
    SH_NONE = 0,
#define SHADOW_RULE_ENUM(id, name, text) SH_##id,
    SHADOW_RULES(SHADOW_RULE_ENUM)
#undef SHADOW_RULE_ENUM
        SH_NUM_RULES
};
