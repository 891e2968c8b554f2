/*
 * selftest -- exercises the fake libcudart through its public CUDA API and control API. Run by native/build.sh;
 * a failed check fails the build. Deterministic: ordering is forced with gates (host functions that block until
 * the test opens them), never with sleeps or time limits; the only timing assertion is a lower bound that
 * copydelayus guarantees (an event pair around a delayed copy). Clean under AddressSanitizer and ThreadSanitizer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "kvtierfake.h"

static int checks, failures;

#define CHECK(cond)                                                                                                \
    do {                                                                                                           \
        checks++;                                                                                                  \
        if (!(cond)) {                                                                                             \
            failures++;                                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                        \
        }                                                                                                          \
    } while (0)

#define CHECK_ERR(expr, want)                                                                                      \
    do {                                                                                                           \
        cudaError_t got_ = (expr);                                                                                 \
        checks++;                                                                                                  \
        if (got_ != (want)) {                                                                                      \
            failures++;                                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s returned %s (%d), wanted %s\n", __FILE__, __LINE__, #expr,            \
                    cudaGetErrorName(got_), (int)got_, #want);                                                     \
        }                                                                                                          \
    } while (0)

#define OK(expr) CHECK_ERR(expr, cudaSuccess)

static void fill_random(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

/* A gate: a host function that blocks its stream until the test opens it. */
struct gate {
    pthread_mutex_t m;
    pthread_cond_t c;
    int open;
    int entered;
};
static void gate_init(struct gate *g) {
    pthread_mutex_init(&g->m, NULL);
    pthread_cond_init(&g->c, NULL);
    g->open = 0;
    g->entered = 0;
}
static void CUDART_CB gate_fn(void *arg) {
    struct gate *g = arg;
    pthread_mutex_lock(&g->m);
    g->entered = 1;
    pthread_cond_broadcast(&g->c);
    while (!g->open)
        pthread_cond_wait(&g->c, &g->m);
    pthread_mutex_unlock(&g->m);
}
static void gate_open(struct gate *g) {
    pthread_mutex_lock(&g->m);
    g->open = 1;
    pthread_cond_broadcast(&g->c);
    pthread_mutex_unlock(&g->m);
}
static void gate_wait_entered(struct gate *g) {
    pthread_mutex_lock(&g->m);
    while (!g->entered)
        pthread_cond_wait(&g->c, &g->m);
    pthread_mutex_unlock(&g->m);
}

struct order_log {
    pthread_mutex_t m;
    int n;
    int v[256];
};
static struct order_log order = {PTHREAD_MUTEX_INITIALIZER, 0, {0}};
static int order_tokens[256];
static void CUDART_CB log_fn(void *arg) {
    pthread_mutex_lock(&order.m);
    order.v[order.n++] = *(int *)arg;
    pthread_mutex_unlock(&order.m);
}
static volatile int flag_ran;
static void CUDART_CB set_flag_fn(void *arg) {
    (void)arg;
    flag_ran = 1;
}

static void test_device_and_version(void) {
    int n = -1, v = -1;
    OK(cudaGetDeviceCount(&n));
    CHECK(n == 1);
    OK(cudaRuntimeGetVersion(&v));
    CHECK(v == CUDART_VERSION);
    OK(cudaDriverGetVersion(&v));
    CHECK(v == CUDART_VERSION);
    OK(cudaSetDevice(0));
    CHECK_ERR(cudaSetDevice(1), cudaErrorInvalidDevice);
    OK(cudaGetDevice(&n));
    CHECK(n == 0);
    OK(cudaDeviceGetAttribute(&n, cudaDevAttrHostRegisterSupported, 0));
    CHECK(n == 1);
    OK(cudaDeviceGetAttribute(&n, cudaDevAttrUnifiedAddressing, 0));
    CHECK(n == 1);
    CHECK_ERR(cudaDeviceGetAttribute(&n, cudaDevAttrUnifiedAddressing, 3), cudaErrorInvalidDevice);
    CHECK(kvtierfake_configure("attr=cudaDevAttrHostRegisterSupported:0") == 0);
    OK(cudaDeviceGetAttribute(&n, cudaDevAttrHostRegisterSupported, 0));
    CHECK(n == 0);
    OK(cudaDeviceCanAccessPeer(&n, 0, 0));
    CHECK(n == 0);
    CHECK_ERR(cudaDeviceCanAccessPeer(&n, 0, 1), cudaErrorInvalidDevice);
    size_t free_b, total;
    OK(cudaMemGetInfo(&free_b, &total));
    CHECK(total == (size_t)8 << 30 && free_b == total);
    CHECK(strcmp(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure") == 0);
    CHECK(strcmp(cudaGetErrorString(cudaErrorNotReady), "device not ready") == 0);
    CHECK(strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code") == 0);
    CHECK(strcmp(cudaGetErrorString((cudaError_t)12345), "unrecognized error code") == 0);
    kvtierfake_reset();
    OK(cudaDeviceGetAttribute(&n, cudaDevAttrHostRegisterSupported, 0));
    CHECK(n == 1);
}

static void test_memory_and_round_trips(void) {
    enum { N = 1 << 20 };
    unsigned char *host = malloc(N), *back = malloc(N);
    void *dev = NULL, *dev2 = NULL;
    fill_random(host, N, 42);
    OK(cudaMalloc(&dev, N));
    OK(cudaMalloc(&dev2, N));
    CHECK(((uintptr_t)dev & 255) == 0);
    CHECK(kvtierfake_live_count("device") == 2 && kvtierfake_live_count("device_bytes") == 2L * N);
    size_t free_b, total;
    OK(cudaMemGetInfo(&free_b, &total));
    CHECK(free_b == total - 2 * (size_t)N);

    cudaStream_t s;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    OK(cudaMemcpyAsync(dev, host, N, cudaMemcpyHostToDevice, s));
    OK(cudaMemcpyAsync(dev2, dev, N, cudaMemcpyDeviceToDevice, s));
    OK(cudaMemcpyAsync(back, dev2, N, cudaMemcpyDeviceToHost, s));
    OK(cudaStreamSynchronize(s));
    CHECK(memcmp(host, back, N) == 0);

    /* cudaMemcpyDefault infers each side */
    memset(back, 0, N);
    OK(cudaMemcpyAsync((char *)dev + 100, host, 1000, cudaMemcpyDefault, s));
    OK(cudaMemcpyAsync(back, (char *)dev + 100, 1000, cudaMemcpyDefault, s));
    OK(cudaMemcpyPeerAsync(dev2, 0, dev, 0, N, s));
    CHECK_ERR(cudaMemcpyPeerAsync(dev2, 1, dev, 0, N, s), cudaErrorInvalidDevice);
    OK(cudaMemsetAsync((char *)dev2 + 10, 0xAB, 20, s));
    OK(cudaStreamSynchronize(s));
    CHECK(memcmp(host, back, 1000) == 0);
    unsigned char chunk[40];
    OK(cudaMemcpyAsync(chunk, dev2, sizeof chunk, cudaMemcpyDeviceToHost, s));
    OK(cudaStreamSynchronize(s));
    CHECK(chunk[9] == host[9] && chunk[30] == host[30]); /* around the memset: the peer copy of dev */
    int memset_ok = 1;
    for (int i = 10; i < 30; i++)
        memset_ok &= chunk[i] == 0xAB;
    CHECK(memset_ok);

    /* wrong sides with an explicit kind: what a GPU rejects */
    CHECK_ERR(cudaMemcpyAsync(back, host, 16, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_ERR(cudaGetLastError(), cudaSuccess);
    CHECK_ERR(cudaMemcpyAsync(dev, dev2, 16, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaMemcpyAsync(back, host, 16, cudaMemcpyDeviceToHost, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaMemcpyAsync(dev, back, 16, cudaMemcpyDeviceToDevice, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaMemcpyAsync(dev, host, 16, cudaMemcpyDeviceToHost, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
    CHECK_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue); /* peek does not clear */
    CHECK_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_ERR(cudaGetLastError(), cudaSuccess);
    /* a range running past the end of its allocation */
    CHECK_ERR(cudaMemcpyAsync((char *)dev + N - 8, host, 16, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaMemsetAsync(host, 0, 16, s), cudaErrorInvalidValue);
    CHECK_ERR(cudaMemcpyAsync(dev, host, 16, (enum cudaMemcpyKind)7, s), cudaErrorInvalidMemcpyDirection);
    (void)cudaGetLastError();

    /* legacy default stream works and copies */
    memset(back, 0, 64);
    OK(cudaMemcpyAsync(back, dev, 64, cudaMemcpyDeviceToHost, 0));
    OK(cudaStreamSynchronize(0));
    CHECK(memcmp(back, host, 64) == 0);

    CHECK_ERR(cudaFree(host), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    OK(cudaFree(dev));
    OK(cudaFree(dev2));
    OK(cudaFree(NULL));
    CHECK(kvtierfake_live_count("device") == 0 && kvtierfake_live_count("device_bytes") == 0);
    OK(cudaStreamDestroy(s));
    CHECK_ERR(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
    CHECK_ERR(cudaStreamDestroy(0), cudaErrorInvalidResourceHandle);
    (void)cudaGetLastError();

    CHECK(kvtierfake_configure("memtotal=1m") == 0);
    CHECK_ERR(cudaMalloc(&dev, 2 << 20), cudaErrorMemoryAllocation);
    OK(cudaMalloc(&dev, 1 << 19));
    OK(cudaMemGetInfo(&free_b, &total));
    CHECK(total == 1 << 20 && free_b == 1 << 19);
    OK(cudaFree(dev));
    kvtierfake_reset();
    free(host);
    free(back);
}

static void test_async_is_async(void) {
    enum { N = 4096 };
    unsigned char host[N], back[N];
    void *dev;
    fill_random(host, N, 7);
    memset(back, 0x11, N);
    OK(cudaMalloc(&dev, N));
    cudaStream_t s;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
    OK(cudaMemcpyAsync(dev, host, N, cudaMemcpyHostToDevice, s));
    OK(cudaStreamSynchronize(s));

    /* the copy is not done on the calling thread: with the stream held by a gate, the call returns and the
     * destination is untouched until the gate opens (no timing involved) */
    struct gate g;
    gate_init(&g);
    OK(cudaLaunchHostFunc(s, gate_fn, &g));
    OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, s));
    gate_wait_entered(&g);
    CHECK(back[0] == 0x11 && back[N - 1] == 0x11);
    CHECK_ERR(cudaStreamQuery(s), cudaErrorNotReady);
    gate_open(&g);
    OK(cudaStreamSynchronize(s));
    CHECK(memcmp(back, host, N) == 0);

    /* events: real timestamps around a copy that copydelayus makes take at least 200 ms on the stream */
    memset(back, 0x11, N);
    CHECK(kvtierfake_configure("copydelayus=200000") == 0);
    cudaEvent_t a, b, untimed;
    OK(cudaEventCreateWithFlags(&a, cudaEventDefault));
    OK(cudaEventCreateWithFlags(&b, cudaEventBlockingSync));
    OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    OK(cudaEventQuery(a)); /* never recorded: complete */
    gate_init(&g);
    OK(cudaLaunchHostFunc(s, gate_fn, &g));
    OK(cudaEventRecord(a, s));
    OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, s));
    OK(cudaEventRecord(b, s));
    OK(cudaEventRecord(untimed, s));
    CHECK_ERR(cudaEventQuery(b), cudaErrorNotReady);
    CHECK_ERR(cudaGetLastError(), cudaSuccess); /* not-ready is not an error */
    float ms = -1;
    CHECK_ERR(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
    gate_open(&g);
    OK(cudaEventSynchronize(b));
    CHECK(memcmp(back, host, N) == 0);
    OK(cudaEventElapsedTime(&ms, a, b));
    CHECK(ms >= 199.0f && ms < 600000.0f);
    OK(cudaEventSynchronize(untimed));
    CHECK_ERR(cudaEventElapsedTime(&ms, a, untimed), cudaErrorInvalidResourceHandle);
    cudaEvent_t never;
    OK(cudaEventCreateWithFlags(&never, cudaEventDefault));
    CHECK_ERR(cudaEventElapsedTime(&ms, a, never), cudaErrorInvalidResourceHandle);
    CHECK_ERR(cudaEventCreateWithFlags(&never, cudaEventInterprocess), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    OK(cudaStreamSynchronize(s));
    OK(cudaStreamQuery(s));
    kvtierfake_reset();
    OK(cudaEventDestroy(a));
    OK(cudaEventDestroy(b));
    OK(cudaEventDestroy(untimed));
    OK(cudaEventDestroy(never));
    CHECK_ERR(cudaEventQuery(a), cudaErrorInvalidResourceHandle);
    (void)cudaGetLastError();
    OK(cudaStreamDestroy(s));
    OK(cudaFree(dev));
}

static void test_cross_stream_ordering(void) {
    enum { N = 8192 };
    unsigned char host[N], back[N];
    void *dev;
    fill_random(host, N, 99);
    OK(cudaMalloc(&dev, N));
    OK(cudaMemsetAsync(dev, 0, N, 0));
    OK(cudaDeviceSynchronize());
    cudaStream_t a, b;
    OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t ev;
    OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

    /* without a wait, b reads the old bytes while a is held: a missing sync shows up as wrong bytes */
    struct gate g;
    gate_init(&g);
    OK(cudaLaunchHostFunc(a, gate_fn, &g));
    OK(cudaMemcpyAsync(dev, host, N, cudaMemcpyHostToDevice, a));
    memset(back, 0x55, N);
    OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, b));
    OK(cudaStreamSynchronize(b));
    CHECK(back[0] == 0 && back[N - 1] == 0);
    gate_open(&g);
    OK(cudaStreamSynchronize(a));

    /* with cudaStreamWaitEvent, b waits for a's copy */
    OK(cudaMemsetAsync(dev, 0, N, a));
    gate_init(&g);
    OK(cudaLaunchHostFunc(a, gate_fn, &g));
    OK(cudaMemcpyAsync(dev, host, N, cudaMemcpyHostToDevice, a));
    OK(cudaEventRecord(ev, a));
    OK(cudaStreamWaitEvent(b, ev, 0));
    memset(back, 0x55, N);
    OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, b));
    gate_wait_entered(&g);
    CHECK_ERR(cudaStreamQuery(b), cudaErrorNotReady);
    CHECK_ERR(cudaEventQuery(ev), cudaErrorNotReady);
    CHECK(back[0] == 0x55);
    gate_open(&g);
    OK(cudaStreamSynchronize(b));
    CHECK(memcmp(back, host, N) == 0);
    OK(cudaEventQuery(ev));

    /* legacy default stream: waits for earlier work of blocking streams, not of non-blocking ones */
    cudaStream_t blocking;
    OK(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault));
    gate_init(&g);
    OK(cudaLaunchHostFunc(blocking, gate_fn, &g));
    flag_ran = 0;
    OK(cudaLaunchHostFunc(0, set_flag_fn, NULL));
    gate_wait_entered(&g);
    CHECK_ERR(cudaStreamQuery(0), cudaErrorNotReady);
    CHECK(flag_ran == 0);
    gate_open(&g);
    OK(cudaStreamSynchronize(0));
    CHECK(flag_ran == 1);
    gate_init(&g);
    OK(cudaLaunchHostFunc(a, gate_fn, &g)); /* a is non-blocking */
    flag_ran = 0;
    OK(cudaLaunchHostFunc(0, set_flag_fn, NULL));
    OK(cudaStreamSynchronize(0));
    CHECK(flag_ran == 1);
    gate_open(&g);

    /* host functions run in stream order, interleaved with copies */
    order.n = 0;
    for (int i = 0; i < 100; i++) {
        order_tokens[i] = i;
        OK(cudaLaunchHostFunc(a, log_fn, &order_tokens[i]));
        if (i % 10 == 0)
            OK(cudaMemcpyAsync(dev, host, N, cudaMemcpyHostToDevice, a));
    }
    OK(cudaStreamSynchronize(a));
    int in_order = order.n == 100;
    for (int i = 0; in_order && i < 100; i++)
        in_order = order.v[i] == i;
    CHECK(in_order);
    CHECK_ERR(cudaLaunchHostFunc(a, NULL, NULL), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    /* destroying a stream with pending work: returns at once, the work still completes */
    gate_init(&g);
    OK(cudaLaunchHostFunc(blocking, gate_fn, &g));
    flag_ran = 0;
    OK(cudaLaunchHostFunc(blocking, set_flag_fn, NULL));
    OK(cudaStreamDestroy(blocking));
    CHECK(kvtierfake_live_count("streams") == 2);
    gate_open(&g);
    OK(cudaDeviceSynchronize());
    CHECK(flag_ran == 1);

    OK(cudaEventDestroy(ev));
    OK(cudaStreamDestroy(a));
    OK(cudaStreamDestroy(b));
    OK(cudaFree(dev));
}

static void test_pinned_and_registered(void) {
    void *pinned, *devp;
    OK(cudaHostAlloc(&pinned, 10000, cudaHostAllocPortable | cudaHostAllocMapped));
    CHECK(kvtierfake_live_count("pinned") == 1);
    OK(cudaHostGetDevicePointer(&devp, (char *)pinned + 5, 0));
    CHECK(devp == (char *)pinned + 5);
    CHECK_ERR(cudaHostAlloc(&pinned, 16, 0x80), cudaErrorInvalidValue);
    CHECK_ERR(cudaHostRegister(pinned, 100, 0), cudaErrorHostMemoryAlreadyRegistered);
    CHECK_ERR(cudaFreeHost((char *)pinned + 1), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    long page = sysconf(_SC_PAGESIZE);
    char *buf = aligned_alloc((size_t)page, (size_t)page * 8);
    OK(cudaHostRegister(buf, (size_t)page * 4, cudaHostRegisterDefault));
    CHECK(kvtierfake_live_count("registered") == 1);
    CHECK_ERR(cudaHostRegister(buf + page, (size_t)page, 0), cudaErrorHostMemoryAlreadyRegistered);
    CHECK_ERR(cudaHostRegister(buf + page * 4 - 1, 2, 0), cudaErrorHostMemoryAlreadyRegistered);
    OK(cudaHostRegister(buf + page * 4, (size_t)page * 4, cudaHostRegisterReadOnly));
    CHECK_ERR(cudaHostUnregister(buf + 1), cudaErrorHostMemoryNotRegistered);
    CHECK_ERR(cudaHostUnregister(pinned), cudaErrorHostMemoryNotRegistered);
    CHECK_ERR(cudaHostRegister(buf, 0, 0), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    CHECK(kvtierfake_configure("attr=cudaDevAttrHostRegisterReadOnlySupported:0") == 0);
    CHECK_ERR(cudaHostRegister(buf + page * 6, (size_t)page, cudaHostRegisterReadOnly), cudaErrorNotSupported);
    CHECK(kvtierfake_configure("attr=99:0") == 0);
    CHECK_ERR(cudaHostRegister(buf + page * 6, (size_t)page, 0), cudaErrorNotSupported);
    kvtierfake_reset();
    (void)cudaGetLastError();
    OK(cudaHostGetDevicePointer(&devp, buf + 3, 0));
    CHECK(devp == buf + 3);

    /* a read-only registration may be a copy source but never a destination */
    void *dev;
    OK(cudaMalloc(&dev, 4096));
    OK(cudaMemcpyAsync(dev, buf + page * 4, 4096, cudaMemcpyHostToDevice, 0));
    CHECK_ERR(cudaMemcpyAsync(buf + page * 4, dev, 4096, cudaMemcpyDeviceToHost, 0), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    OK(cudaDeviceSynchronize());
    OK(cudaHostUnregister(buf + page * 4));
    OK(cudaHostUnregister(buf));
    CHECK(kvtierfake_live_count("registered") == 0);

    /* an unmapped range cannot be registered */
    void *gone = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(gone, (size_t)page * 2);
    CHECK_ERR(cudaHostRegister(gone, (size_t)page, 0), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    /* a file mapping: register, copy device -> file pages, read back through the file */
    char path[] = "/tmp/kvtierfake-selftestXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    size_t len = (size_t)page * 4;
    CHECK(ftruncate(fd, (off_t)len) == 0);
    unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(map != MAP_FAILED);
    unsigned char *src = malloc(len), *check = malloc(len);
    fill_random(src, len, 1234);
    void *dev2;
    OK(cudaMalloc(&dev2, len));
    OK(cudaHostRegister(map, len, cudaHostRegisterDefault));
    OK(cudaMemcpyAsync(dev2, src, len, cudaMemcpyHostToDevice, 0));
    OK(cudaMemcpyAsync(map, dev2, len, cudaMemcpyDeviceToHost, 0));
    OK(cudaStreamSynchronize(0));
    OK(cudaHostUnregister(map));
    CHECK(msync(map, len, MS_SYNC) == 0);
    CHECK(pread(fd, check, len, 0) == (ssize_t)len);
    CHECK(memcmp(check, src, len) == 0);
    munmap(map, len);
    close(fd);
    unlink(path);
    free(src);
    free(check);
    free(buf);
    OK(cudaFree(dev));
    OK(cudaFree(dev2));
    OK(cudaFreeHost(pinned));
    CHECK(kvtierfake_live_count("pinned") == 0);
}

typedef cudaError_t (*batch13_fn)(void *const *, const void *const *, const size_t *, size_t,
                                  struct cudaMemcpyAttributes *, size_t *, size_t, cudaStream_t);
typedef cudaError_t (*batch12_fn)(void *const *, const void *const *, const size_t *, size_t,
                                  struct cudaMemcpyAttributes *, size_t *, size_t, size_t *, cudaStream_t);

static void test_batch(void) {
    enum { N = 3, SZ = 5000 };
    unsigned char host[N][SZ], back[N][SZ];
    void *dev[N];
    void *dsts[N], *dsts_back[N];
    const void *srcs[N], *srcs_back[N];
    size_t sizes[N] = {SZ, SZ - 1, 1};
    for (int i = 0; i < N; i++) {
        fill_random(host[i], SZ, (unsigned)i + 500);
        OK(cudaMalloc(&dev[i], SZ));
        dsts[i] = dev[i];
        srcs[i] = host[i];
        dsts_back[i] = back[i];
        srcs_back[i] = dev[i];
    }
    struct cudaMemcpyAttributes attr[2];
    memset(attr, 0, sizeof attr);
    attr[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attr[1].srcAccessOrder = cudaMemcpySrcAccessOrderAny;
    size_t idx[2] = {0, 2};
    cudaStream_t s;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    batch13_fn b13 = (batch13_fn)(void *)&cudaMemcpyBatchAsync;
    batch12_fn b12 = (batch12_fn)(void *)&cudaMemcpyBatchAsync;

    /* 13.x ABI (the default) */
    OK(b13(dsts, srcs, sizes, N, attr, idx, 2, s));
    memset(back, 0, sizeof back);
    OK(b13(dsts_back, srcs_back, sizes, N, attr, idx, 1, s));
    OK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        CHECK(memcmp(back[i], host[i], sizes[i]) == 0);
    CHECK_ERR(b13(dsts, srcs, sizes, N, attr, idx, 2, 0), cudaErrorInvalidValue);  /* legacy stream */
    size_t bad_idx[2] = {1, 2};
    CHECK_ERR(b13(dsts, srcs, sizes, N, attr, bad_idx, 2, s), cudaErrorInvalidValue);
    size_t dec_idx[2] = {0, 0};
    CHECK_ERR(b13(dsts, srcs, sizes, N, attr, dec_idx, 2, s), cudaErrorInvalidValue);
    size_t big_idx[2] = {0, 3};
    CHECK_ERR(b13(dsts, srcs, sizes, N, attr, big_idx, 2, s), cudaErrorInvalidValue);
    CHECK_ERR(b13(dsts, srcs, sizes, 0, attr, idx, 1, s), cudaErrorInvalidValue);
    attr[1].srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
    CHECK_ERR(b13(dsts, srcs, sizes, N, attr, idx, 2, s), cudaErrorInvalidValue);
    attr[1].srcAccessOrder = cudaMemcpySrcAccessOrderAny;
    (void)cudaGetLastError();

    /* DuringApiCall: the source is read before the call returns */
    unsigned char eph[64];
    memset(eph, 0x77, sizeof eph);
    void *one_dst[1] = {dev[0]};
    const void *one_src[1] = {eph};
    size_t one_size[1] = {sizeof eph};
    struct cudaMemcpyAttributes during = {0};
    during.srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    size_t zero = 0;
    CHECK(kvtierfake_configure("copydelayus=50000") == 0);
    OK(b13(one_dst, one_src, one_size, 1, &during, &zero, 1, s));
    memset(eph, 0x00, sizeof eph);
    unsigned char got[64];
    OK(cudaMemcpyAsync(got, dev[0], sizeof got, cudaMemcpyDeviceToHost, s));
    OK(cudaStreamSynchronize(s));
    CHECK(got[0] == 0x77 && got[63] == 0x77);
    kvtierfake_reset();

    /* 12.8/12.9 ABI: 9 arguments, failIdx before the stream */
    CHECK(kvtierfake_configure("version=12090") == 0);
    int v;
    OK(cudaRuntimeGetVersion(&v));
    CHECK(v == 12090);
    for (int i = 0; i < N; i++)
        fill_random(host[i], SZ, (unsigned)i + 900);
    size_t fail_idx = 77;
    OK(b12(dsts, srcs, sizes, N, attr, idx, 2, &fail_idx, s));
    memset(back, 0, sizeof back);
    OK(b12(dsts_back, srcs_back, sizes, N, attr, idx, 2, &fail_idx, s));
    OK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        CHECK(memcmp(back[i], host[i], sizes[i]) == 0);
    /* a bad copy reports its index */
    const void *bad_srcs[N] = {host[0], host[1], host[2]};
    void *bad_dsts[N] = {dev[0], (char *)dev[1] + 4000, dev[2]}; /* copy 1 runs past its allocation */
    fail_idx = 77;
    CHECK_ERR(b12(bad_dsts, bad_srcs, sizes, N, attr, idx, 2, &fail_idx, s), cudaErrorInvalidValue);
    CHECK(fail_idx == 1);
    attr[1].srcAccessOrder = (enum cudaMemcpySrcAccessOrder)9;
    CHECK_ERR(b12(dsts, srcs, sizes, N, attr, idx, 2, &fail_idx, s), cudaErrorInvalidValue);
    CHECK(fail_idx == 2);
    attr[1].srcAccessOrder = cudaMemcpySrcAccessOrderAny;
    CHECK_ERR(b12(dsts, srcs, sizes, N, attr, bad_idx, 2, &fail_idx, s), cudaErrorInvalidValue);
    CHECK(fail_idx == SIZE_MAX);
    (void)cudaGetLastError();

    /* before 12.8 there is no batch API */
    CHECK(kvtierfake_configure("version=12060") == 0);
    CHECK_ERR(b12(dsts, srcs, sizes, N, attr, idx, 2, &fail_idx, s), cudaErrorNotSupported);
    (void)cudaGetLastError();
    kvtierfake_reset();
    OK(cudaRuntimeGetVersion(&v));
    CHECK(v == CUDART_VERSION);

    OK(cudaStreamDestroy(s));
    for (int i = 0; i < N; i++)
        OK(cudaFree(dev[i]));
}

static void test_faults(void) {
    unsigned char host[256], back[256];
    void *dev;
    fill_random(host, sizeof host, 3);
    OK(cudaMalloc(&dev, sizeof host));
    cudaStream_t s;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    /* synchronous: the N-th call from now fails, once */
    CHECK(kvtierfake_configure("fail=cudaMemcpyAsync:2:cudaErrorLaunchFailure; fail=cudaMalloc:1:2") == 0);
    OK(cudaMemcpyAsync(dev, host, sizeof host, cudaMemcpyHostToDevice, s));
    CHECK_ERR(cudaMemcpyAsync(dev, host, sizeof host, cudaMemcpyHostToDevice, s), cudaErrorLaunchFailure);
    OK(cudaMemcpyAsync(dev, host, sizeof host, cudaMemcpyHostToDevice, s));
    void *p = NULL;
    CHECK_ERR(cudaMalloc(&p, 16), cudaErrorMemoryAllocation);
    CHECK_ERR(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_ERR(cudaGetLastError(), cudaSuccess);
    OK(cudaStreamSynchronize(s));

    /* asynchronous: accepted, skipped on the stream, reported at the next sync/query/event of that stream */
    cudaEvent_t ev;
    OK(cudaEventCreateWithFlags(&ev, cudaEventDefault));
    CHECK(kvtierfake_configure("failasync=cudaMemcpyAsync:1:cudaErrorIllegalAddress") == 0);
    memset(back, 0x33, sizeof back);
    OK(cudaMemcpyAsync(back, dev, sizeof back, cudaMemcpyDeviceToHost, s));
    OK(cudaEventRecord(ev, s));
    CHECK_ERR(cudaEventSynchronize(ev), cudaErrorIllegalAddress);
    CHECK_ERR(cudaStreamSynchronize(s), cudaErrorIllegalAddress);
    CHECK(back[0] == 0x33 && back[255] == 0x33); /* the failed copy did not write */
    OK(cudaStreamSynchronize(s));               /* not sticky */
    OK(cudaMemcpyAsync(back, dev, sizeof back, cudaMemcpyDeviceToHost, s));
    OK(cudaStreamSynchronize(s));
    CHECK(memcmp(back, host, sizeof back) == 0);
    (void)cudaGetLastError();

    /* sticky async fault */
    CHECK(kvtierfake_configure("stickyasync=1;failasync=cudaLaunchHostFunc:1:cudaErrorLaunchFailure") == 0);
    flag_ran = 0;
    OK(cudaLaunchHostFunc(s, set_flag_fn, NULL));
    CHECK_ERR(cudaStreamSynchronize(s), cudaErrorLaunchFailure);
    CHECK(flag_ran == 0);
    CHECK_ERR(cudaMalloc(&p, 16), cudaErrorLaunchFailure);
    CHECK_ERR(cudaGetLastError(), cudaErrorLaunchFailure);
    CHECK_ERR(cudaGetLastError(), cudaErrorLaunchFailure);
    kvtierfake_reset();
    CHECK_ERR(cudaGetLastError(), cudaSuccess);
    OK(cudaStreamQuery(s));

    /* reset clears every thread's last error and unfired rules */
    CHECK_ERR(cudaSetDevice(5), cudaErrorInvalidDevice);
    CHECK(kvtierfake_configure("fail=cudaFree:1:cudaErrorUnknown") == 0);
    kvtierfake_reset();
    CHECK_ERR(cudaPeekAtLastError(), cudaSuccess);

    /* no device / no driver: like the real initialisation failure, sticky */
    CHECK(kvtierfake_configure("nodevice=1") == 0);
    int n = -1;
    CHECK_ERR(cudaGetDeviceCount(&n), cudaErrorNoDevice);
    CHECK(n == 0);
    CHECK_ERR(cudaMalloc(&p, 16), cudaErrorNoDevice);
    CHECK_ERR(cudaGetLastError(), cudaErrorNoDevice);
    CHECK_ERR(cudaGetLastError(), cudaErrorNoDevice);
    OK(cudaRuntimeGetVersion(&n));
    kvtierfake_reset();
    CHECK(kvtierfake_configure("nodriver=1") == 0);
    n = -1;
    CHECK_ERR(cudaGetDeviceCount(&n), cudaErrorInsufficientDriver);
    OK(cudaDriverGetVersion(&n));
    CHECK(n == 0);
    kvtierfake_reset();
    OK(cudaGetDeviceCount(&n));
    CHECK(n == 1);
    CHECK(kvtierfake_configure("version=12080;driverversion=12090") == 0);
    OK(cudaDriverGetVersion(&n));
    CHECK(n == 12090);
    kvtierfake_reset();

    /* bad specs are rejected whole and name the item */
    CHECK(kvtierfake_configure("version=12090;bogus=1") == 2);
    OK(cudaRuntimeGetVersion(&n));
    CHECK(n == CUDART_VERSION);
    CHECK(kvtierfake_configure("fail=cudaNoSuchThing:1:1") == 1);
    CHECK(kvtierfake_configure("fail=cudaGetErrorName:1:1") == 1);
    CHECK(kvtierfake_configure("failasync=cudaMalloc:1:1") == 1);
    CHECK(kvtierfake_configure("fail=cudaMalloc:0:1") == 1);
    CHECK(kvtierfake_configure("fail=cudaMalloc:1:cudaErrorNope") == 1);
    CHECK(kvtierfake_configure(" ; ;") == 0);
    CHECK(kvtierfake_live_count("bogus") == -1);
    CHECK(kvtierfake_call_count("cudaNoSuchThing") == -1);
    long before = kvtierfake_call_count("cudaGetDevice");
    OK(cudaGetDevice(&n));
    CHECK_ERR(cudaGetDevice(NULL), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    CHECK(kvtierfake_call_count("cudaGetDevice") == before + 2);

    OK(cudaEventDestroy(ev));
    OK(cudaStreamDestroy(s));
    OK(cudaFree(dev));
}

/* Several threads, each with its own streams, doing round trips while sharing the fake's tables and the legacy
 * stream; every byte is checked. Bounded in iterations, not time. */
struct stress_arg {
    unsigned seed;
    int failures;
};
static void *stress_main(void *p) {
    struct stress_arg *arg = p;
    enum { MAX = 64 * 1024 };
    unsigned char *src = malloc(MAX), *dst = malloc(MAX);
    void *pinned;
    if (cudaHostAlloc(&pinned, MAX, 0) != cudaSuccess) {
        arg->failures++;
        return NULL;
    }
    cudaStream_t up, down;
    cudaEvent_t done;
    cudaStreamCreateWithFlags(&up, arg->seed & 1 ? cudaStreamNonBlocking : cudaStreamDefault);
    cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    for (int it = 0; it < 150; it++) {
        size_t n = 1 + (arg->seed = arg->seed * 1664525u + 1013904223u) % MAX;
        fill_random(src, n, arg->seed);
        memcpy(pinned, src, n);
        void *a, *b;
        if (cudaMalloc(&a, n) || cudaMalloc(&b, n)) {
            arg->failures++;
            break;
        }
        memset(dst, 0, n);
        int ok = cudaMemcpyAsync(a, pinned, n, cudaMemcpyHostToDevice, up) == cudaSuccess &&
                 cudaMemcpyAsync(b, a, n, cudaMemcpyDefault, up) == cudaSuccess &&
                 cudaEventRecord(done, up) == cudaSuccess && cudaStreamWaitEvent(down, done, 0) == cudaSuccess &&
                 cudaMemcpyAsync(dst, b, n, cudaMemcpyDeviceToHost, down) == cudaSuccess &&
                 cudaStreamSynchronize(down) == cudaSuccess && memcmp(dst, src, n) == 0;
        if (it % 16 == 0)
            ok &= cudaLaunchHostFunc(0, set_flag_fn, NULL) == cudaSuccess;
        ok &= cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess;
        if (!ok)
            arg->failures++;
    }
    cudaEventDestroy(done);
    cudaStreamDestroy(up);
    cudaStreamDestroy(down);
    cudaFreeHost(pinned);
    free(src);
    free(dst);
    return NULL;
}

static void test_stress(void) {
    enum { T = 4 };
    pthread_t threads[T];
    struct stress_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (struct stress_arg){(unsigned)i * 7919u + 1, 0};
        CHECK(pthread_create(&threads[i], NULL, stress_main, &args[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(threads[i], NULL);
        CHECK(args[i].failures == 0);
    }
    OK(cudaDeviceSynchronize());
}

/* The bench helper's C loop calls what it is given, n times, and sums the codes. */
static void test_bench_helper(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    if (!lib)
        return;
    long (*call_n)(void *, long) = (long (*)(void *, long))dlsym(lib, "kvtier_call_n");
    CHECK(call_n != NULL);
    if (!call_n)
        return;
    long before = kvtierfake_call_count("cudaGetLastError");
    CHECK(call_n((void *)&cudaGetLastError, 1000) == 0);
    CHECK(kvtierfake_call_count("cudaGetLastError") == before + 1000);
    CHECK(kvtierfake_configure("nodevice=1") == 0);
    CHECK(call_n((void *)&cudaGetLastError, 3) == 3L * cudaErrorNoDevice);
    kvtierfake_reset();
    dlclose(lib);
}

int main(int argc, char **argv) {
    test_device_and_version();
    test_memory_and_round_trips();
    test_async_is_async();
    test_cross_stream_ordering();
    test_pinned_and_registered();
    test_batch();
    test_faults();
    test_stress();
    if (argc > 1)
        test_bench_helper(argv[1]);
    OK(cudaDeviceSynchronize());
    CHECK(kvtierfake_live_count("device") == 0);
    CHECK(kvtierfake_live_count("pinned") == 0);
    CHECK(kvtierfake_live_count("registered") == 0);
    CHECK(kvtierfake_live_count("streams") == 0);
    CHECK(kvtierfake_live_count("events") == 0);
    if (failures) {
        fprintf(stderr, "selftest: %d of %d checks FAILED\n", failures, checks);
        return 1;
    }
    printf("selftest: %d checks passed\n", checks);
    return 0;
}
