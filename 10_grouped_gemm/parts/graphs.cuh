// 10_grouped_gemm/parts/graphs.cuh: the grouped kernel under CUDA graphs,
// captured on one batch and replayed on another, and what a new batch costs
// the host and the device.
#pragma once
#include <time.h>
#include "10_grouped_gemm/parts/kernel.cuh"
#include "10_grouped_gemm/parts/maps.cuh"
#include "10_grouped_gemm/parts/problem.cuh"

// ---- Under CUDA graphs ------------------------------------------------------------
// A graph of one batch's work, captured while batch 0 is on the device: a
// copy of the staged batch (pinned: a replay copies whatever the host put
// there since) and the work. Replayed on batch 1 (other sizes, other A and C
// buffers), each way of getting the maps must still find batch 1's:
//   graph_one_map      the maps are kernel parameters, frozen at capture:
//                      the host swaps in the maps of batch 1's buffers
//                      (encoded once per set) and updates the kernel node
//                      (cudaGraphExecKernelNodeSetParams);
//   graph_host_maps    the host encodes batch 1's maps into the pinned array
//                      the graph's copy node sends;
//   graph_device_maps  build_maps, inside the graph, reads the new batch;
//   graph_device_edit  the kernel reads the new batch and edits its own maps.
typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaGraphNode_t kernel;  // the grouped kernel's node (of `graph`, kept for the updates)
} Graph;

static Graph capture(Problem* q, void (*work)(const Problem*)) {
    Graph gr;
    cudaGraph_t& graph = gr.graph;
    CUDA_CHECK(cudaStreamBeginCapture(q->s, cudaStreamCaptureModeThreadLocal));
    CUDA_CHECK(cudaMemcpyAsync(q->dev, q->staged, sizeof(Batch), cudaMemcpyHostToDevice, q->s));
    work(q);
    CUDA_CHECK(cudaStreamEndCapture(q->s, &graph));
    size_t n = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &n));
    cudaGraphNode_t* nodes = (cudaGraphNode_t*)xmalloc(n * sizeof *nodes, "a graph's nodes");
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes, &n));
    gr.kernel = NULL;
    for (size_t i = 0; i < n; ++i) {
        cudaGraphNodeType type;
        CUDA_CHECK(cudaGraphNodeGetType(nodes[i], &type));
        if (type == cudaGraphNodeTypeKernel) gr.kernel = nodes[i];  // the last kernel: the grouped GEMM
    }
    free(nodes);
    CUDA_CHECK(cudaGraphInstantiate(&gr.exec, graph, 0));
    return gr;
}

static void one_map_work(const Problem* q) {
    run_grouped<ONE_MAP>(q);
}
static void host_maps_work(const Problem* q) {
    run_host_maps(q);
}
static void device_maps_work(const Problem* q) {
    run_grouped<DEVICE_MAPS>(q);
}
static void device_edit_work(const Problem* q) {
    run_grouped<EDIT>(q);
}

// ONE_MAP's kernel node, pointed at batch `i`'s buffers: its four parameters
// (A's map, B's, C's, the arguments) replaced in the instantiated graph.
static void update_one_map_node(const Problem* q, const Graph* gr) {
    cudaKernelNodeParams params = {};
    const int set = set_of(q->batch);
    GroupArgs p = group_args(q);
    CUtensorMap a = q->a_tmpl[set], b = q->b_all, c = q->c_tmpl[set];
    void* args[4] = {&a, &b, &c, &p};
    params.func = (void*)grouped_gemm<ONE_MAP>;
    params.gridDim = dim3(grid_for(q, q->host[q->batch].first_tile[p.experts])),
    params.blockDim = dim3(Grouped<ONE_MAP>::Threads), params.sharedMemBytes = Grouped<ONE_MAP>::SmemBytes;
    params.kernelParams = args;
    CUDA_CHECK(cudaGraphExecKernelNodeSetParams(gr->exec, gr->kernel, &params));
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// A graph replayed on batch 1: the host's part of the update first (`update`),
// then the replay, checked and timed.
#define GRAPH_PART(q, name, gr, update)                                      \
    do {                                                                     \
        CUDA_CHECK(cudaStreamSynchronize((q)->s));                           \
        *(q)->staged = (q)->host[BATCH_1];                                   \
        (q)->batch = BATCH_1;                                                \
        update;                                                              \
        GROUP_PART(q, name, CUDA_CHECK(cudaGraphLaunch((gr).exec, (q)->s))); \
    } while (0)

// The host's share of a new batch, in microseconds (median of 5): encoding
// its 3 G maps (HOST_MAPS), updating ONE_MAP's kernel node; then the device's
// retargets alone, and the host's submit of a device-edit graph replay.
static void report_host_costs(Problem* q, const Graph* one_map, const Graph* device_edit) {
    float encode[5], update[5];
    uint32_t maps = 0;
    for (uint32_t g = 0; g < q->experts_of[BATCH_1]; ++g)
        maps += 3 * (q->host[BATCH_1].first_row[g + 1] > q->host[BATCH_1].first_row[g]);
    for (int r = 0; r < 5; ++r) {
        double t0 = now_seconds();
        encode_host_maps(q, BATCH_1, q->host_maps);
        encode[r] = (float)((now_seconds() - t0) * 1e6);
        t0 = now_seconds();
        update_one_map_node(q, one_map);
        update[r] = (float)((now_seconds() - t0) * 1e6);
    }
    const float e = median_of(encode, 5), u = median_of(update, 5);
    record_time_line(
        "%shost_encode: %u maps in %.1f us on the host (%.2f us per map: cuTensorMapEncodeTiled)", q->prefix,
        maps, e, maps ? e / maps : 0.f);
    record_time_line("%sgraph_node_update: cudaGraphExecKernelNodeSetParams %.1f us on the host", q->prefix,
                     u);
    // build_maps alone on the GPU: the device's share of a new batch (DEVICE_MAPS).
    const GroupArgs p = group_args(q);
    Timer t;
    for (t = timer_begin(q->cli, q->s, NULL, 0); timer_next(&t);)
        build_maps<<<(3 * p.experts + 127) / 128, 128, 0, q->s>>>(q->a_tmpl[1], q->b_tmpl, q->c_tmpl[1], p,
                                                                  q->maps);
    record_time_line("%sbuild_maps: %u maps in %.1f us on the GPU", q->prefix, maps, t.median_ms * 1e3);
    // The device's share in device_edit: one warp's retargets, expert after expert (retarget_alone), its
    // %globaltimer span. Then what the host spends submitting a replay of the device_edit graph, each
    // replay finished before the next; the replay's GPU time is graph_device_edit's PERF line.
    unsigned long long* span_dev;
    CUDA_CHECK(cudaMalloc((void**)&span_dev, sizeof *span_dev));
    float edit_us[5], submit_us[5];
    for (int r = 0; r < 5; ++r) {
        unsigned long long span = 0;
        retarget_alone<<<1, 32, 0, q->s>>>(q->a_tmpl[1], q->b_tmpl, q->c_tmpl[1], p, span_dev);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(&span, span_dev, sizeof span, cudaMemcpyDeviceToHost, q->s));
        CUDA_CHECK(cudaStreamSynchronize(q->s));
        edit_us[r] = (float)(span * 1e-3);
        const double t0 = now_seconds();
        CUDA_CHECK(cudaGraphLaunch(device_edit->exec, q->s));
        submit_us[r] = (float)((now_seconds() - t0) * 1e6);
        CUDA_CHECK(cudaStreamSynchronize(q->s));
    }
    CUDA_CHECK(cudaFree(span_dev));
    const uint32_t switches = maps / 3;  // one per expert with rows
    const float edit = median_of(edit_us, 5);
    record_time_line(
        "%sdevice_edit: %u expert switches in %.1f us on one warp (%.2f us per expert: A and B as the "
        "producer retargets them, C as a consumer does)",
        q->prefix, switches, edit, switches ? edit / switches : 0.f);
    char name[64];
    snprintf(name, sizeof name, "%sgraph_device_edit", q->prefix);
    record_time_line(
        "%sgraph_replay: cudaGraphLaunch %.1f us on the host; the replay %.3f ms on the GPU "
        "(graph_device_edit)",
        q->prefix, median_of(submit_us, 5), perf_ms(name));
}
