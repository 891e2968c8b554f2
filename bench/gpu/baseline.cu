// The raw-CUDA baseline for kvtier's copy figures, measured on the same machine in the same run:
//   1. pinned cudaMemcpyAsync bandwidth, host-to-device and device-to-host, 4 KiB .. 64 MiB;
//   2. the per-call cost of small copies: issuing N cudaMemcpyAsync of 64 B / 4 KiB / 16 KiB / 64 KiB
//      on one stream (host-side issue time per call) and the time until they all completed.
// Output: CSV on stdout (one header line per table), so run.sh can keep it beside the JMH results.
// Build: nvcc -O2 -o baseline baseline.cu
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            fprintf(stderr, "baseline: %s failed: %s (%s, code %d) at line %d\n", #call,          \
                    cudaGetErrorName(err_), cudaGetErrorString(err_), (int)err_, __LINE__);       \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const size_t MAX_BYTES = (size_t)64 << 20;

// Copies `size` bytes `copies` times back to back on `stream`, timed with events (device time).
static double timed_copies(void *dst, const void *src, size_t size, int copies, cudaMemcpyKind kind,
                           cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop) {
    CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < copies; i++) {
        CHECK(cudaMemcpyAsync(dst, src, size, kind, stream));
    }
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms / 1e3;
}

int main(void) {
    int runtime = 0, driver = 0, devices = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaGetDeviceCount(&devices));
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("# device 0: %s, %d devices, runtime %d, driver %d, PCI %04x:%02x:%02x\n", prop.name, devices, runtime,
           driver, prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);

    void *host = NULL, *device = NULL;
    CHECK(cudaSetDevice(0));
    CHECK(cudaHostAlloc(&host, MAX_BYTES, cudaHostAllocDefault));
    CHECK(cudaMalloc(&device, MAX_BYTES));
    // Touch both so first-use costs stay out of the figures.
    for (size_t i = 0; i < MAX_BYTES; i += 4096) ((volatile char *)host)[i] = (char)i;
    CHECK(cudaMemset(device, 0, MAX_BYTES));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    printf("table,direction,size_bytes,copies,seconds,gb_per_s,us_per_copy\n");
    for (size_t size = 4096; size <= MAX_BYTES; size *= 2) {
        // At least 256 MiB and 20 copies per point: long enough for the events' 0.5 us resolution.
        int copies = (int)((((size_t)256 << 20) + size - 1) / size);
        if (copies < 20) copies = 20;
        if (copies > 20000) copies = 20000;
        for (int d = 0; d < 2; d++) {
            cudaMemcpyKind kind = d == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
            void *dst = d == 0 ? device : host;
            const void *src = d == 0 ? host : device;
            timed_copies(dst, src, size, copies / 10 + 1, kind, stream, start, stop);  // warm-up
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                double s = timed_copies(dst, src, size, copies, kind, stream, start, stop);
                if (s < best) best = s;
            }
            printf("bandwidth,%s,%zu,%d,%.6f,%.3f,%.3f\n", d == 0 ? "H2D" : "D2H", size, copies, best,
                   (double)size * copies / best / 1e9, best / copies * 1e6);
        }
        fflush(stdout);
    }

    // Per-call cost: host time to issue N small async copies, and time until all completed.
    printf("table,direction,size_bytes,copies,issue_us_per_call,total_us_per_copy,gb_per_s\n");
    const size_t small_sizes[] = {64, 4096, 16384, 65536};
    const int calls = 10000;
    for (int k = 0; k < 4; k++) {
        size_t size = small_sizes[k];
        for (int d = 0; d < 2; d++) {
            cudaMemcpyKind kind = d == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
            char *dst = (char *)(d == 0 ? device : host);
            const char *src = (const char *)(d == 0 ? host : device);
            for (int warm = 0; warm < 1000; warm++) {
                CHECK(cudaMemcpyAsync(dst, src, size, kind, stream));
            }
            CHECK(cudaStreamSynchronize(stream));
            double t0 = now_seconds();
            for (int i = 0; i < calls; i++) {
                // Distinct offsets, as a batch of different segments would have.
                size_t offset = ((size_t)i * size) % (MAX_BYTES - size);
                CHECK(cudaMemcpyAsync(dst + offset, src + offset, size, kind, stream));
            }
            double issued = now_seconds();
            CHECK(cudaStreamSynchronize(stream));
            double done = now_seconds();
            printf("per_call,%s,%zu,%d,%.3f,%.3f,%.3f\n", d == 0 ? "H2D" : "D2H", size, calls,
                   (issued - t0) / calls * 1e6, (done - t0) / calls * 1e6, (double)size * calls / (done - t0) / 1e9);
        }
        fflush(stdout);
    }

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(device));
    CHECK(cudaFreeHost(host));
    return 0;
}
