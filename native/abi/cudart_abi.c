/*
 * cudart_abi -- prints what the CUDA headers and an installed libcudart say about every symbol kvtier binds
 * (the lists come from native/jextract/cudart.args through the generated kvtier_bound.h), one fact per line:
 *
 *   abi_format 1
 *   constant NAME VALUE              decimal value of every bound constant (macro or enum constant)
 *   typedef NAME SIZE                sizeof of every bound typedef
 *   struct NAME SIZE ALIGN           sizeof and _Alignof of every bound struct
 *   field STRUCT.PATH OFFSET SIZE    every field of every bound struct; members of nested structs/unions also by
 *                                    dotted path (field cudaMemcpyAttributes.srcLocHint.id 8 4), after their parent
 *   library PATH                     the libcudart that was loaded (dlinfo), or: library error MESSAGE
 *   symbol NAME present|absent       dlsym of every bound function in that library
 *   runtime_version N                cudaRuntimeGetVersion through dlsym, or: runtime_version error NAME
 *                                    (NAME is the cudaError name, or "absent" when there is no library/symbol)
 *
 * Usage: cudart_abi [LIBCUDART]   default: dlopen libcudart.so.13, then libcudart.so.12, then libcudart.so
 * Exit status: 0 when it could print everything (an unloadable library is reported, not fatal); 1 when a bound
 * struct's field list here is incomplete (a hole in the layout, reported on stderr); 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "kvtier_cuda.h"
#include "kvtier_bound.h"

#define FIELD(S, PATH)                                                                                             \
    printf("field %s.%s %zu %zu\n", #S, #PATH, offsetof(struct S, PATH), sizeof(((struct S *)0)->PATH))

/* One function per bound struct, named fields_<struct>: a bound struct without one does not compile. Checked at run
 * time below: the top-level fields must tile the struct up to alignment padding. */
static void fields_cudaMemLocation(void) {
    FIELD(cudaMemLocation, type);
    FIELD(cudaMemLocation, id);
}
static const size_t top_cudaMemLocation[][2] = {
    {offsetof(struct cudaMemLocation, type), sizeof(((struct cudaMemLocation *)0)->type)},
    {offsetof(struct cudaMemLocation, id), sizeof(((struct cudaMemLocation *)0)->id)},
};

static void fields_cudaMemcpyAttributes(void) {
    FIELD(cudaMemcpyAttributes, srcAccessOrder);
    FIELD(cudaMemcpyAttributes, srcLocHint);
    FIELD(cudaMemcpyAttributes, srcLocHint.type);
    FIELD(cudaMemcpyAttributes, srcLocHint.id);
    FIELD(cudaMemcpyAttributes, dstLocHint);
    FIELD(cudaMemcpyAttributes, dstLocHint.type);
    FIELD(cudaMemcpyAttributes, dstLocHint.id);
    FIELD(cudaMemcpyAttributes, flags);
}
static const size_t top_cudaMemcpyAttributes[][2] = {
    {offsetof(struct cudaMemcpyAttributes, srcAccessOrder), sizeof(((struct cudaMemcpyAttributes *)0)->srcAccessOrder)},
    {offsetof(struct cudaMemcpyAttributes, srcLocHint), sizeof(((struct cudaMemcpyAttributes *)0)->srcLocHint)},
    {offsetof(struct cudaMemcpyAttributes, dstLocHint), sizeof(((struct cudaMemcpyAttributes *)0)->dstLocHint)},
    {offsetof(struct cudaMemcpyAttributes, flags), sizeof(((struct cudaMemcpyAttributes *)0)->flags)},
};

/* A field list that misses a member leaves a hole at least as large as the member's alignment; report it. */
static int check_tiling(const char *name, const size_t (*top)[2], size_t n, size_t size, size_t align) {
    size_t end = 0;
    for (size_t i = 0; i < n; i++) {
        if (top[i][0] < end || top[i][0] - end >= align) {
            fprintf(stderr, "cudart_abi: field list of %s misses a member before offset %zu\n", name, top[i][0]);
            return 1;
        }
        end = top[i][0] + top[i][1];
    }
    if (end > size || size - end >= align) {
        fprintf(stderr, "cudart_abi: field list of %s misses a member at its end\n", name);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2) {
        fprintf(stderr, "usage: %s [path/to/libcudart.so]\n", argv[0]);
        return 2;
    }
    int bad = 0;
    printf("abi_format 1\n");
#define KVTIER_X(name) printf("constant %s %lld\n", #name, (long long)(name));
    KVTIER_FOREACH_CONSTANT(KVTIER_X)
#undef KVTIER_X
#define KVTIER_X(name) printf("typedef %s %zu\n", #name, sizeof(name));
    KVTIER_FOREACH_TYPEDEF(KVTIER_X)
#undef KVTIER_X
#define KVTIER_X(name)                                                                                             \
    printf("struct %s %zu %zu\n", #name, sizeof(struct name), _Alignof(struct name));                              \
    fields_##name();                                                                                               \
    bad |= check_tiling(#name, top_##name, sizeof top_##name / sizeof *top_##name, sizeof(struct name),            \
                        _Alignof(struct name));
    KVTIER_FOREACH_STRUCT(KVTIER_X)
#undef KVTIER_X

    void *lib = NULL;
    const char *err = NULL;
    if (argc == 2) {
        lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            err = dlerror();
    } else {
        static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
        for (size_t i = 0; i < 3 && !lib; i++) {
            lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
            if (!lib)
                err = dlerror();
        }
    }
    struct link_map *map = NULL;
    if (lib && dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map)
        printf("library %s\n", map->l_name);
    else
        printf("library error %s\n", lib ? "dlinfo failed" : (err ? err : "not found"));
#define KVTIER_X(name) printf("symbol %s %s\n", #name, lib && dlsym(lib, #name) ? "present" : "absent");
    KVTIER_FOREACH_FUNCTION(KVTIER_X)
#undef KVTIER_X

    cudaError_t (*get_version)(int *) = lib ? (cudaError_t (*)(int *))dlsym(lib, "cudaRuntimeGetVersion") : NULL;
    const char *(*error_name)(cudaError_t) =
        lib ? (const char *(*)(cudaError_t))dlsym(lib, "cudaGetErrorName") : NULL;
    if (!get_version) {
        printf("runtime_version error absent\n");
    } else {
        int version = 0;
        cudaError_t e = get_version(&version);
        if (e == cudaSuccess)
            printf("runtime_version %d\n", version);
        else if (error_name)
            printf("runtime_version error %s\n", error_name(e));
        else
            printf("runtime_version error %d\n", (int)e);
    }
    fflush(stdout);
    return bad ? 1 : 0;
}
