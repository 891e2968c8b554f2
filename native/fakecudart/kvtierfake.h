/*
 * Control API of the host-emulated libcudart (native/fakecudart). Exported by build/fakecudart/libcudart.so next to
 * the bound CUDA functions; the real libcudart has none of these, so callers look them up optionally (dlsym /
 * SymbolLookup.find) and know they run on the fake when they are present.
 *
 * Spec grammar (also accepted from the environment variable KVTIER_FAKE_CUDART, read once at library load):
 *   spec  := item (';' item)*          empty items and surrounding blanks are ignored
 *   item  := fail=FUNC:N:ERR            the N-th call (N >= 1, counted from now) of FUNC returns ERR without
 *                                       doing anything; several items may target the same function
 *          | failasync=FUNC:N:ERR       the N-th call of FUNC (one of cudaMemcpyAsync, cudaMemcpyPeerAsync,
 *                                       cudaMemcpyBatchAsync, cudaMemsetAsync, cudaLaunchHostFunc) is accepted
 *                                       (returns cudaSuccess) but its work is skipped on the stream and ERR
 *                                       surfaces at the next cudaStreamSynchronize/cudaStreamQuery of that stream,
 *                                       cudaDeviceSynchronize, and cudaEventSynchronize/cudaEventQuery of an event
 *                                       recorded on that stream after it (not at a cudaFree or cudaFreeHost, which
 *                                       wait for every stream but leave its fault to it). Not sticky unless
 *                                       stickyasync=1.
 *          | stickyasync=0|1            1: an async fault also becomes sticky like a real one: every later call
 *                                       returns it and cudaGetLastError cannot clear it, until kvtierfake_reset();
 *                                       work still queued on any stream when it strikes is dropped, never run
 *          | nodevice=0|1               cudaGetDeviceCount -> cudaErrorNoDevice (count 0), as every device call
 *          | nodriver=0|1               device calls -> cudaErrorInsufficientDriver; cudaDriverGetVersion -> 0
 *          | version=N                  cudaRuntimeGetVersion reports N (default CUDART_VERSION of the headers);
 *                                       also selects the cudaMemcpyBatchAsync ABI (see README)
 *          | driverversion=N            cudaDriverGetVersion reports N (default: follows version)
 *          | memtotal=BYTES[k|m|g]      total device memory (default 8g); cudaMalloc beyond it fails
 *          | copydelayus=N              each copy/memset op sleeps N microseconds on its stream thread first
 *          | attr=ATTR:VALUE            cudaDeviceGetAttribute(ATTR) returns VALUE (ATTR by name or number)
 *   FUNC is a bound function name; ERR is a cudaError name (cudaErrorLaunchFailure) or a number.
 */
#ifndef KVTIERFAKE_H
#define KVTIERFAKE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Applies a spec on top of the current configuration. All-or-nothing: returns 0 when every item was applied,
 * otherwise the 1-based index of the first bad item (nothing applied; the reason is printed to stderr). */
int kvtierfake_configure(const char *spec);

/* Waits until every stream has drained, then clears fault rules, pending and sticky errors, every thread's last
 * error, and restores the configuration to its load-time state (defaults plus KVTIER_FAKE_CUDART).
 * Allocations, registrations, streams and events are kept. */
void kvtierfake_reset(void);

/* Number of live objects of a kind: "device", "pinned", "registered", "streams" (created, not destroyed; the
 * default stream is not counted), "events", or "device_bytes" (bytes held by cudaMalloc). -1 for an unknown kind. */
long kvtierfake_live_count(const char *what);

/* Calls of a bound function (by name) since the library was loaded, failed ones included; kvtierfake_reset does not
 * clear it (take differences). -1 for a name that is not a bound function. */
long kvtierfake_call_count(const char *function);

#ifdef __cplusplus
}
#endif

#endif /* KVTIERFAKE_H */
