/* autofuse kernel ABI: what generated kernel sources export and what the runtime calls.
 * Plain C so any emitter (CPU C++, Ascend C, CUDA) can implement it; NVRTC compiles it too. */
#ifndef AUTOFUSE_ABI_H
#define AUTOFUSE_ABI_H
#ifdef __CUDACC_RTC__
/* NVRTC compiles device code with no C library: the fixed-width types the headers use. */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The machine as the tiling function sees it at call time. */
typedef struct af_target {
  int64_t cores;        /* threads available for this launch */
  int64_t ub_bytes;     /* per-core tile buffer budget */
  int64_t align_bytes;  /* alignment of tile sizes */
  int64_t vector_bytes; /* SIMD register width */
} af_target;

/* Every kernel's TilingData struct starts with these two fields. */
typedef struct af_tiling_header {
  int64_t block_dim;  /* number of blocks to launch */
  int64_t tiling_key; /* which TilingCase to run */
} af_tiling_header;

/* Largest TilingData any kernel may use (bytes); the runtime keeps one on the stack. */
#define AF_MAX_TILING_DATA_BYTES 4096

/* For a kernel named K the generated source exports:
 *   void K_tiling(const int64_t* symbols, const af_target* target, void* tiling_data);
 *   void K_kernel(void* const* args, const void* tiling_data, int64_t block_idx);
 * `symbols` holds the kernel's size symbols in the order the compiler reports;
 * `args` holds the data pointers of inputs then outputs, in kernel index order. */
typedef void (*af_tiling_fn)(const int64_t*, const af_target*, void*);
typedef void (*af_kernel_fn)(void* const*, const void*, int64_t);

#define AF_ABI_VERSION 1

#ifdef __cplusplus
}
#endif
#endif
