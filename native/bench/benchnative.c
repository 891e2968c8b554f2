/*
 * Baseline for the binding-overhead benchmark: the cost of calling a cudaError_t (*)(void) function (e.g.
 * cudaGetLastError) from C, n times in a loop, measured in the same JMH run as the Java wrapper and the raw
 * downcall handle. The function pointer comes from the loaded libcudart (SymbolLookup.find(...).address()).
 */
#include <cuda_runtime_api.h>

__attribute__((visibility("default"))) long kvtier_call_n(void *fn, long n);

/* Returns the sum of the returned codes (0 when every call succeeded), so the calls cannot be optimised away. */
long kvtier_call_n(void *fn, long n) {
    cudaError_t (*call)(void) = (cudaError_t (*)(void))fn;
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += (long)call();
    return sum;
}
